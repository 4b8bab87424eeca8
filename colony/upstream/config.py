"""The MCP servers file: the ``mcpServers`` object MCP clients already use, read and written by Colony.

    {"mcpServers": {
        "files":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
        "tickets": {"url": "https://tickets.example/mcp",
                    "headers": {"Authorization": "Bearer ${secret:tickets_token}"}}}}

A stdio server has ``command``/``args``/``env``/``cwd``; a streamable HTTP server has
``url``/``headers``. Credentials are secret kinds, never literal values: ``${secret:KIND}``
in an ``env`` or ``headers`` value resolves like every Colony secret (``COLONY_SECRET_KIND``
or a Prefect Secret block) when the server is started. A value under a credential's name (one
with a word such as ``token``, ``key``, ``pass``, ``pat``, ``auth``, ``secret``, ``cookie``:
``OPENAI_KEY``, ``DB_PASS``, ``X-Auth``; not ``KEY_FILE`` or ``SSH_AUTH_SOCK``) must be the
reference itself (or ``Bearer ${secret:KIND}``), a credential in ``args`` or in the URL (a user,
a password, a query parameter) is refused, so a token never sits in the file. The file lives at
``COLONY_MCP_SERVERS``, else ``mcp-servers.json`` in the Colony home.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from colony.errors import McpServersFileError
from colony.secrets import resolve_secret
from colony.spec import SecretRequirement

__all__ = [
    "HttpServer",
    "McpServers",
    "ServerConfig",
    "StdioServer",
    "catalog_name",
    "load_servers",
    "parse_servers",
    "resolve_values",
    "save_servers",
    "secret_kinds",
    "servers_path",
]

SERVER_NAME = r"^[a-z][a-z0-9_]{0,31}$"
_SECRET_REFERENCE = re.compile(r"\$\{secret:([a-z][a-z0-9_]*)\}")
#: A credential's value: one reference, alone or after an HTTP auth scheme (``Bearer ${secret:kind}``).
_CREDENTIAL_VALUE = re.compile(rf"^(?:(?:Bearer|Basic|Token|token|Bot)\s+)?{_SECRET_REFERENCE.pattern}$")
#: Words that make a name a credential's, whichever way it is spelled (``OPENAI_KEY``, ``dbPass``, ``X-Auth``).
_CREDENTIAL_WORDS = frozenset(
    {
        "apikey", "auth", "authorization", "bearer", "cookie", "credential", "credentials", "key", "pass",
        "passphrase", "passwd", "password", "pat", "pwd", "secret", "session", "token",
    }
)  # fmt: skip
#: Last words that make a name a pointer to a credential, not one: ``SSH_AUTH_SOCK``, ``KEY_FILE``.
_POINTER_WORDS = frozenset({"dir", "file", "path", "sock", "socket"})
_MAX_TIMEOUT = 3600.0


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [word for word in re.split(r"[^a-z0-9]+", spaced.lower()) if word]


def credential_name(name: str) -> bool:
    """Whether ``name`` (a variable, a header, an option) names a credential."""
    words = _words(name)
    if not words or words[-1] in _POINTER_WORDS:
        return False
    joined = "".join(words)
    return any(word in _CREDENTIAL_WORDS for word in words) or any(
        part in joined for part in ("token", "secret", "password", "apikey", "privatekey", "credential")
    )


def _no_literal_credentials(values: dict[str, str], where: str) -> dict[str, str]:
    for name, value in values.items():
        if credential_name(name) and not _CREDENTIAL_VALUE.match(value.strip()):
            raise ValueError(
                f"{where} {name!r} holds a literal value; a credential is a secret kind, the whole value: "
                f"write ${{secret:KIND}} (or 'Bearer ${{secret:KIND}}') and set COLONY_SECRET_KIND "
                "(or a Prefect Secret block)"
            )
    return values


def _no_credential_arguments(args: tuple[str, ...]) -> tuple[str, ...]:
    """Arguments carry no credential: they are no place for a secret (any process may read them)."""
    for index, arg in enumerate(args):
        option, has_value, _ = arg.partition("=")
        if not option.startswith("-") or not credential_name(option.lstrip("-")):
            continue
        given = has_value or (index + 1 < len(args) and not args[index + 1].startswith("-"))
        if given:
            raise ValueError(
                f"argument {option!r} passes a credential on the command line, where any process can read it; "
                "pass it in env as ${secret:KIND} (most servers read it from a variable)"
            )
    return args


def _no_credential_in_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.username or parts.password:
        raise ValueError("the url holds a user or password; send credentials in headers as ${secret:KIND}")
    for name, _ in parse_qsl(parts.query, keep_blank_values=True):
        if credential_name(name):
            raise ValueError(
                f"the url's query parameter {name!r} holds a credential; send it in headers as ${{secret:KIND}}"
            )
    return url


class _Server(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    disabled: bool = Field(default=False, description="Listed but not served.")
    timeout: float = Field(default=30.0, gt=0, le=_MAX_TIMEOUT, description="Seconds a call may take.")
    start_timeout: float = Field(
        default=60.0,
        gt=0,
        le=_MAX_TIMEOUT,
        description="Seconds the server's start (its process or connection, and the MCP handshake) may take.",
    )
    max_message_bytes: int = Field(
        default=4 << 20,
        ge=64 << 10,
        le=256 << 20,
        description="Largest message read from it; a larger answer is an error.",
    )


class StdioServer(_Server):
    """A server Colony starts as a child process and talks to over its stdin and stdout."""

    type: Literal["stdio"] = Field(default="stdio", description="The transport.")
    command: str = Field(min_length=1, description="The program to run (looked up on PATH).")
    args: tuple[str, ...] = Field(default=(), description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment; ${secret:KIND} for secrets.")
    cwd: str | None = Field(default=None, description="Its working directory.")

    @field_validator("env")
    @classmethod
    def _env(cls, env: dict[str, str]) -> dict[str, str]:
        return _no_literal_credentials(env, "env variable")

    @field_validator("args")
    @classmethod
    def _args(cls, args: tuple[str, ...]) -> tuple[str, ...]:
        return _no_credential_arguments(args)


class HttpServer(_Server):
    """A server reached over MCP's streamable HTTP transport."""

    type: Literal["http", "streamable-http"] = Field(default="http", description="The transport.")
    url: str = Field(pattern=r"^https?://", description="The server's MCP endpoint.")
    headers: dict[str, str] = Field(default_factory=dict, description="Headers; ${secret:KIND} for credentials.")
    max_connections: int = Field(default=8, ge=1, le=256, description="Connections open to it at most.")

    @field_validator("headers")
    @classmethod
    def _headers(cls, headers: dict[str, str]) -> dict[str, str]:
        return _no_literal_credentials(headers, "header")

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        return _no_credential_in_url(url)


def _transport(value: Any) -> str:
    if isinstance(value, dict):
        if "url" in value and value.get("type") != "stdio":
            return "http"
        return "stdio"
    return "stdio" if isinstance(value, StdioServer) else "http"


ServerConfig = StdioServer | HttpServer


class McpServers(BaseModel):
    """The file: servers by name."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    servers: dict[str, ServerConfig] = Field(
        default_factory=dict, alias="mcpServers", description="Each upstream server, by its name in Colony."
    )

    @model_validator(mode="before")
    @classmethod
    def _pick_transport(cls, data: Any) -> Any:
        # "mcpServers" in a file, "servers" in Colony's own dump (a settings block's): both checked alike
        key = "mcpServers" if isinstance(data, dict) and "mcpServers" in data else "servers"
        if isinstance(data, dict) and isinstance(data.get(key), dict):
            servers = {}
            for name, value in data[key].items():
                if not isinstance(name, str) or not re.match(SERVER_NAME, name):
                    raise ValueError(
                        f"server name {name!r} must be lower-case letters, digits and _ (at most 32), "
                        "starting with a letter: it prefixes its tools' names"
                    )
                if isinstance(value, dict):
                    model = StdioServer if _transport(value) == "stdio" else HttpServer
                    try:
                        value = model.model_validate(value)
                    except ValidationError as error:
                        raise ValueError(f"server {name!r}: {_first_problem(error)}") from None
                servers[name] = value
            data = {**data, key: servers}
        return data

    def dump(self) -> dict[str, Any]:
        """The file's JSON document."""
        return {
            "mcpServers": {
                name: server.model_dump(mode="json", exclude_defaults=True) | {"type": server.type}
                for name, server in sorted(self.servers.items())
            }
        }


def catalog_name(server: str, tool: str) -> str:
    """``<server>__<tool>`` with the tool's name in lower snake case."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", tool)
    return f"{server}__{re.sub(r'[^a-z0-9]+', '_', words.lower()).strip('_') or 'tool'}"


def servers_path(home: Path) -> Path:
    """``COLONY_MCP_SERVERS`` if set, else ``mcp-servers.json`` in the Colony home."""
    configured = os.environ.get("COLONY_MCP_SERVERS")
    return Path(configured).expanduser() if configured else home / "mcp-servers.json"


def load_servers(path: Path) -> McpServers:
    """The servers the file declares (none when it does not exist); McpServersFileError naming what is wrong."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return McpServers()
    except OSError as error:
        raise McpServersFileError(f"{path}: cannot be read: {error.strerror or error}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise McpServersFileError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise McpServersFileError(f'{path}: expected an object {{"mcpServers": {{name: server, ...}}}}')
    return parse_servers(data, str(path))


def parse_servers(data: Any, source: str) -> McpServers:
    """``data`` as the servers file's document; McpServersFileError naming ``source`` and what is wrong."""
    try:
        return McpServers.model_validate(data)
    except ValidationError as error:
        raise McpServersFileError(f"{source}: {_first_problem(error)}") from None


def save_servers(servers: McpServers, path: Path) -> None:
    """Write the file atomically (a temporary file, then a rename), readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mcp-servers.", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(servers.dump(), stream, indent=2)
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def secret_kinds(server: StdioServer | HttpServer) -> list[str]:
    """The secret kinds the server's values reference."""
    values = server.env if isinstance(server, StdioServer) else server.headers
    return sorted({kind for value in values.values() for kind in _SECRET_REFERENCE.findall(value)})


def resolve_values(name: str, values: dict[str, str]) -> dict[str, str]:
    """``values`` with each ``${secret:KIND}`` replaced by the secret (MissingSecretError naming the kind)."""

    def secret(match: re.Match[str]) -> str:
        requirement = SecretRequirement(name=match[1], purpose=f"MCP server {name!r}")
        return resolve_secret(requirement).get_secret_value()

    return {key: _SECRET_REFERENCE.sub(secret, value) for key, value in values.items()}


def _first_problem(error: ValidationError) -> str:
    detail = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in detail["loc"])
    message = str(detail["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
