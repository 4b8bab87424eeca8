"""An upstream MCP tool as a Colony tool: a ToolCapability class derived from its pinned definition.

The class's one action forwards the call to the server's shared session. Its spec is
derived, never declared by the server alone: ``readOnlyHint: true`` is read-only and
anything else (missing annotations included) is side-effecting, so it passes the gate;
``destructiveHint: true`` makes it a destructive action in the gate's eyes (a plan must
bound its scope); the annotations become policy tags. The catalog name is
``<server>__<tool>`` (letters, digits and ``_``: what every model provider accepts as a
tool name), so an upstream tool can neither take nor shadow a built-in's name.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, ClassVar

import mcp_types
import pydantic_core
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

from colony.capability import ToolCapability
from colony.capability._actions import ActionDefinition, action_executor
from colony.errors import (
    MAX_FIELD_ERRORS,
    FieldError,
    ToolInputError,
    UpstreamProtocolError,
    UpstreamToolError,
    summarize,
)
from colony.offload import INLINE_BYTES, off_the_loop
from colony.schemas import ValidationRefused, bounded_errors, compiled_validator, validator_class
from colony.spec import Backend, Determinism, ExecutionLocality, ToolSpec
from colony.telemetry import note_execution
from colony.upstream.config import HttpServer, ServerConfig, catalog_name
from colony.upstream.connections import UpstreamServer
from colony.upstream.pins import PinnedTool, Review

__all__ = ["SchemaAction", "UpstreamTool", "sessions", "upstream_tool_class"]

_MAX_DESCRIPTION = 4000
_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
_NO_PARAMETERS = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
_RESERVED_ACTIONS = frozenset(ToolCapability.actions())


@dataclass(frozen=True, eq=False)
class SchemaAction(ActionDefinition):
    """An action whose contract is a JSON Schema the server declared, checked within the work budget.

    The caller's data is checked against the server's schema the way every schema in Colony
    is (``colony.schemas``): at most 20 errors are gathered and the work is bounded, so no
    combination of a schema and arguments holds the event loop for long. Data too costly
    to check is the caller's ToolInputError; a schema that cannot be checked at all (one
    that loops, or a pattern RE2 cannot run) is the server's UpstreamProtocolError.
    """

    server: str = ""

    @cached_property
    def validator(self) -> Validator:
        """The input schema's validator, looked up once per action rather than per call."""
        return compiled_validator(self.input_schema)

    def validate_input(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        values = dict(arguments)
        try:
            found = bounded_errors(self.validator, values, max_errors=MAX_FIELD_ERRORS)
        except ValidationRefused as error:
            if error.field == "data":
                problem = FieldError(field="<root>", message=error.message)
                raise ToolInputError(
                    f"invalid arguments for {self.name}: {error.message}", action=self.name, errors=[problem]
                ) from None
            raise self._uncheckable(error.message) from None
        except SchemaError as error:
            raise self._uncheckable(error.message) from None
        if found:
            problems = [
                FieldError(
                    field="/".join(str(part) for part in error.absolute_path) or "<root>",
                    message=error.message[:300],
                )
                for error in found
            ]
            raise ToolInputError(
                f"invalid arguments for {self.name}: {summarize(problems)}", action=self.name, errors=problems
            )
        return values

    def normalized_input(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the server will receive them, once checked: JSON as sent (the schema is the contract)."""
        return self.validate_input(arguments)

    async def checked_input(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Small arguments checked in place; larger ones off the event loop (``colony.offload``).

        Within its budget a check may still run for a second or more (a costly schema, the
        largest arguments the cap allows): on the loop, that second would hold every other call.
        """
        if len(pydantic_core.to_json(arguments, fallback=str)) <= INLINE_BYTES:
            return self.validate_input(arguments)
        return await off_the_loop(lambda: self.validate_input(arguments))

    def _uncheckable(self, reason: str) -> UpstreamProtocolError:
        return UpstreamProtocolError(
            f"MCP server {self.server!r} declares an input schema for {self.name} that cannot be checked: {reason}",
            server=self.server,
        )


class UpstreamTool(ToolCapability):
    """A tool served by a connected MCP server (a derived subclass per tool)."""

    __abstract_tool__ = True
    server: ClassVar[str]
    upstream_name: ClassVar[str]
    server_config: ClassVar[ServerConfig]
    observe: ClassVar[Callable[[str, list[dict[str, Any]]], Review]]

    async def forward(self, **arguments: Any) -> Any:
        """Send the call over the server's shared session (which refuses a tool whose definition drifted)."""
        session = sessions.get(self.server, self.server_config, type(self).observe)
        note_execution({"colony.upstream.server": self.server, "colony.upstream.tool": self.upstream_name})
        result = await session.call_tool(self.upstream_name, arguments)
        return result_value(self.server, self.upstream_name, result)

    async def shutdown(self) -> None:
        """Stop the server's session in this event loop (the next call starts it again)."""
        await sessions.close(self.server)


def upstream_tool_class(
    server: str, config: ServerConfig, pinned: PinnedTool, *, observe: Callable[[str, list[dict[str, Any]]], Review]
) -> type[UpstreamTool]:
    """The tool class of one pinned upstream tool (ValueError naming what the definition gets wrong)."""
    definition = pinned.definition
    name = catalog_name(server, pinned.name)
    action = name.split("__", 1)[1]
    if action in _RESERVED_ACTIONS:
        raise ValueError(f"its name {pinned.name!r} is an action every Colony tool has")
    annotations = definition.get("annotations") or {}
    read_only = annotations.get("readOnlyHint") is True
    tags = ["mcp", f"mcp_server:{server}", "read_only" if read_only else "side_effecting"]
    if not read_only and annotations.get("destructiveHint") is True:
        tags.append("destructive")
    if annotations.get("openWorldHint") is not False:
        tags.append("open_world")
    if annotations.get("idempotentHint") is True:
        tags.append("idempotent")
    schema = definition.get("inputSchema") or _EMPTY_OBJECT
    try:
        validator_class(schema).check_schema(schema)
    except SchemaError as error:
        raise ValueError(f"its inputSchema is not a JSON Schema: {error.message}") from None
    except RecursionError:  # a server's schema nested hundreds deep: that tool is unavailable, never the catalog
        raise ValueError("its inputSchema is nested too deeply to check") from None
    spec = ToolSpec(
        name=name,
        description=str(definition.get("description") or definition.get("title") or pinned.name)[:_MAX_DESCRIPTION],
        domain="mcp",
        backend=Backend.HTTP_API if isinstance(config, HttpServer) else Backend.CLI_SUBPROCESS,
        capabilities=(action,),
        determinism=Determinism.NONDETERMINISTIC,
        side_effecting=not read_only,
        execution_locality=ExecutionLocality.LOCAL,
        policy_tags=tuple(tags),
        extra={"mcp_server": server, "mcp_tool": pinned.name, "pinned_sha256": pinned.sha256},
    )

    attribute = f"call_{action}"  # never an attribute of the base class, whatever the server names its tool

    async def forward(self: UpstreamTool, **arguments: Any) -> Any:
        return await UpstreamTool.forward(self, **arguments)

    forward.__name__ = forward.__qualname__ = attribute
    forward.__doc__ = spec.description
    forward.__signature__ = _NO_PARAMETERS  # type: ignore[attr-defined]  # the JSON Schema is the contract
    namespace = {
        "__module__": __name__,
        "__doc__": spec.description,
        "spec": spec,
        "server": server,
        "upstream_name": pinned.name,
        "server_config": config,
        "observe": staticmethod(observe),
        attribute: action_executor(name=action, side_effecting=not read_only)(forward),
    }
    cls: type[UpstreamTool] = type(f"Upstream_{name}", (UpstreamTool,), namespace)
    actions = dict(cls.__colony_actions__)
    actions[action] = _schema_action(actions[action], schema, server)
    cls.__colony_actions__ = MappingProxyType(actions)
    return cls


def _schema_action(definition: ActionDefinition, schema: dict[str, Any], server: str) -> SchemaAction:
    fields = {field.name: getattr(definition, field.name) for field in dataclasses.fields(definition) if field.init}
    return SchemaAction(**{**fields, "input_schema": schema, "server": server})


def result_value(server: str, tool: str, result: mcp_types.CallToolResult) -> Any:
    """What an upstream result means to a Colony caller: its structured content, else its text and data."""
    if result.is_error:
        text = " ".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))
        raise UpstreamToolError(f"{tool} on MCP server {server!r} failed: {text[:2000] or 'no message'}", server=server)
    if result.structured_content is not None:
        return result.structured_content
    blocks = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            blocks.append({"type": "text", "text": block.text})
        else:
            blocks.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    if len(blocks) == 1 and blocks[0].get("type") == "text":
        return {"text": blocks[0]["text"]}
    try:
        json.dumps(blocks)
    except (TypeError, ValueError) as error:
        raise UpstreamProtocolError(
            f"{tool} on MCP server {server!r} answered unusable content: {error}", server=server
        ) from None
    return {"content": blocks}


class _Sessions:
    """One UpstreamServer per server and configuration in each event loop."""

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, UpstreamServer]] = (
            weakref.WeakKeyDictionary()
        )
        self._retiring: set[asyncio.Task[None]] = set()  # sessions being stopped, held until they are

    def get(
        self, server: str, config: ServerConfig, observe: Callable[[str, list[dict[str, Any]]], Review]
    ) -> UpstreamServer:
        loop = asyncio.get_running_loop()
        servers = self._by_loop.setdefault(loop, {})
        session = servers.get(server)
        if session is None or session.config != config:
            if session is not None:  # its configuration changed: the old session's process is stopped, not left
                retired = loop.create_task(session.aclose(), name=f"mcp:{server}:retired")
                self._retiring.add(retired)
                retired.add_done_callback(self._retiring.discard)
            session = servers[server] = UpstreamServer(server, config, on_listed=observe)
        return session

    def running(self) -> dict[str, UpstreamServer]:
        """The sessions of the running loop, by server."""
        return dict(self._by_loop.get(asyncio.get_running_loop(), {}))

    async def close(self, server: str) -> None:
        """Stop ``server``'s session in the running loop, if it has one."""
        session = self._by_loop.get(asyncio.get_running_loop(), {}).pop(server, None)
        if session is not None:
            await session.aclose()


sessions = _Sessions()
