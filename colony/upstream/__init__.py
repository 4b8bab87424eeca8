"""Third-party MCP servers governed with no code: their tools are Colony tools behind the same gate.

``config`` reads the ``mcpServers`` file, ``pins`` keeps the definitions an operator has
seen, ``connections`` keeps one session per server, ``tools`` derives a tool class from
a pinned definition, ``settings`` says where the servers and pins come from (a block may
declare them), and ``source`` hands the catalog what to mount. The MCP SDK (``connections``,
``tools``) is imported only once a server has a pinned tool: a Colony that connects none
never loads it.
"""

from colony.upstream.config import (
    HttpServer,
    McpServers,
    StdioServer,
    catalog_name,
    load_servers,
    save_servers,
    servers_path,
)
from colony.upstream.pins import Pins, PinStore, Review, pins_path
from colony.upstream.settings import UpstreamSettings
from colony.upstream.source import Mounted, UpstreamSource

__all__ = [
    "HttpServer",
    "McpServers",
    "Mounted",
    "PinStore",
    "Pins",
    "Review",
    "StdioServer",
    "UpstreamSettings",
    "UpstreamSource",
    "catalog_name",
    "load_servers",
    "pins_path",
    "save_servers",
    "servers_path",
]
