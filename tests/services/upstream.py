"""Upstream MCP servers for Colony to govern: the pinned npm servers and the hostile Python one.

``upstream`` writes a Colony home's ``mcp-servers.json`` and pins what each server lists (as
``colony mcp-servers add`` does), so the runtime built afterwards mounts their tools.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from colony.upstream import McpServers, PinStore, Review, pins_path, save_servers, servers_path
from colony.upstream.config import HttpServer, ServerConfig, StdioServer
from colony.upstream.connections import UpstreamServer
from tests.services import free_port, unavailable

REPO_ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = REPO_ROOT / "tests" / "servers" / "node" / "node_modules" / ".bin"


def hostile_stdio(**options: object) -> StdioServer:
    """The hostile server over stdio, run from this checkout."""
    return StdioServer(command=sys.executable, args=("-m", "tests.servers.hostile_mcp"), cwd=str(REPO_ROOT), **options)  # type: ignore[arg-type]


@dataclass
class Upstream:
    """A Colony home's MCP servers file and pins."""

    home: Path

    def connect(self, servers: dict[str, ServerConfig], *, pin: bool = True) -> None:
        """Write ``servers`` to the file and pin what each lists."""
        path = servers_path(self.home)
        save_servers(McpServers(servers=servers), path)
        if pin:
            for name, config in servers.items():
                self.pin(name, config)

    def pin(self, name: str, config: ServerConfig, **options: object) -> Review:
        """Pin what ``name`` lists now."""
        with ThreadPoolExecutor(1) as thread:  # its own event loop, whether or not the caller runs one
            listed = thread.submit(asyncio.run, _listed(name, config)).result()
        return PinStore(pins_path(self.home)).pin(name, listed, **options)  # type: ignore[arg-type]


async def _listed(name: str, config: ServerConfig) -> list[dict[str, object]]:
    server = UpstreamServer(name, config, on_listed=lambda server, _tools: Review(server=server))
    try:
        return await server.list_tools()
    finally:
        await server.aclose()


@pytest.fixture
def upstream(colony_home: Path) -> Upstream:
    return Upstream(colony_home)


@pytest.fixture(scope="session")
def node_servers() -> Path:
    """The npm MCP servers as ``npm ci`` installed them in tests/servers/node."""
    if shutil.which("node") is None:
        unavailable("node is not installed (scripts/services.sh installs Debian's nodejs and npm)")
    for name in ("mcp-server-everything", "mcp-server-filesystem"):
        if not (NODE_BIN / name).exists():
            unavailable(f"{name} is not installed: run `npm ci` in tests/servers/node (scripts/services.sh does)")
    return NODE_BIN


@pytest.fixture
def files_root(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def third_party(upstream: Upstream, node_servers: Path, files_root: Path) -> Upstream:
    """server-everything as ``everything`` and server-filesystem (rooted at ``files_root``) as ``files``."""
    upstream.connect(
        {
            "everything": StdioServer(command=str(node_servers / "mcp-server-everything")),
            "files": StdioServer(command=str(node_servers / "mcp-server-filesystem"), args=(str(files_root),)),
        }
    )
    return upstream


@contextmanager
def serving_hostile_http(tmp_path: Path, *flags: str) -> Iterator[HttpServer]:
    """The hostile server over streamable HTTP on loopback, for as long as the block runs."""
    port = free_port()
    env = {"HOSTILE_STATE": str(tmp_path / "hostile-state"), "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.servers.hostile_mcp", "--http", str(port), *flags],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(200):
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.TransportError:
                if process.poll() is not None:
                    pytest.fail("the hostile MCP server exited at start")
                time.sleep(0.05)
        yield HttpServer(url=url, timeout=5)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def hostile_http(tmp_path: Path) -> Iterator[HttpServer]:
    """The hostile server over streamable HTTP on loopback."""
    with serving_hostile_http(tmp_path) as server:
        yield server


@pytest.fixture
def hostile_http_json(tmp_path: Path) -> Iterator[HttpServer]:
    """The hostile server over streamable HTTP, answering plain JSON rather than event streams."""
    with serving_hostile_http(tmp_path, "--json") as server:
        yield server
