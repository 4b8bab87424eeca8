"""An upstream tool's arguments checked against the schema its server declared, within Colony's bounds."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from colony.errors import ToolInputError, UpstreamProtocolError
from colony.upstream import Review
from colony.upstream.config import StdioServer
from colony.upstream.pins import PinnedTool
from colony.upstream.tools import SchemaAction, upstream_tool_class


def action(input_schema: dict[str, Any]) -> SchemaAction:
    """The one action of a tool named ``probe`` on server ``remote`` that declares ``input_schema``."""
    pinned = PinnedTool(
        definition={"name": "probe", "inputSchema": input_schema, "annotations": {"readOnlyHint": True}},
        sha256="0" * 64,
        pinned_at="2026-12-07T00:00:00Z",
    )
    cls = upstream_tool_class("remote", StdioServer(command="true"), pinned, observe=lambda n, _t: Review(server=n))
    definition = cls.actions()["probe"]
    assert isinstance(definition, SchemaAction)
    return definition


NUMBERS = {"type": "object", "properties": {"values": {"type": "array", "items": {"type": "integer"}}}}


def test_arguments_that_fit_pass_as_a_copy() -> None:
    arguments = {"values": [1, 2]}
    checked = action(NUMBERS).validate_input(arguments)
    assert checked == arguments and checked is not arguments


def test_each_wrong_field_is_named_by_its_path_and_at_most_twenty_are_listed() -> None:
    with pytest.raises(ToolInputError, match="invalid arguments for probe: values/0: 'a' is not of type") as caught:
        action(NUMBERS).validate_input({"values": ["a"] * 25})
    assert [error.field for error in caught.value.errors] == [f"values/{index}" for index in range(20)]


def test_data_too_costly_to_check_is_the_callers_error_naming_the_budget() -> None:
    alternatives = [*[{"type": "string", "minLength": 3}] * 40, {"type": "integer"}]  # each value fits the last
    costly = {"type": "object", "properties": {"values": {"type": "array", "items": {"anyOf": alternatives}}}}
    with pytest.raises(ToolInputError, match="more than 2,000,000 steps") as caught:
        action(costly).validate_input({"values": [1] * 60_000})
    assert [error.field for error in caught.value.errors] == ["<root>"]


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}}, "leads back to a schema"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=x)x"}}}, "pattern"),
    ],
    ids=["ref-to-itself", "lookahead-pattern"],
)
def test_a_schema_that_cannot_be_checked_is_the_servers_fault(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(UpstreamProtocolError, match="MCP server 'remote' declares an input schema for probe") as caught:
        action(schema).validate_input({"a": "x"})
    assert caught.value.server == "remote" and reason in str(caught.value)


async def test_small_arguments_are_checked_on_the_loop_and_large_ones_on_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked_on: list[int] = []
    definition = action(NUMBERS)
    real = SchemaAction.validate_input

    def spy(self: SchemaAction, arguments: Any) -> dict[str, Any]:
        checked_on.append(threading.get_ident())
        return real(self, arguments)

    monkeypatch.setattr(SchemaAction, "validate_input", spy)
    assert await definition.checked_input({"values": [1, 2]}) == {"values": [1, 2]}
    assert await definition.checked_input({"values": [7] * 20_000}) == {"values": [7] * 20_000}
    with pytest.raises(ToolInputError, match="values/0: 'a' is not of type"):
        await definition.checked_input({"values": ["a"] * 20_000})  # the thread's refusal reaches the caller
    loop_thread = threading.get_ident()
    assert checked_on[0] == loop_thread and loop_thread not in checked_on[1:] and len(checked_on) == 3
