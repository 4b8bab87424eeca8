import asyncio
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import Field
from typing_extensions import TypedDict

from colony.capability import AgentCapability, LocalToolCapability, action_executor, action_menu
from colony.errors import ToolInputError, ToolOutputError, UnknownActionError
from colony.spec import ToolSpec


class Echo(TypedDict):
    text: str
    times: int


class EchoTool(LocalToolCapability):
    """Test double: repeats text, and knows how to fail on purpose."""

    spec = ToolSpec(name="echo_double", capabilities=("echo",), domain="testing")

    @action_executor
    def echo(self, *, text: str, times: Annotated[int, Field(ge=1, le=5)] = 1) -> Echo:
        """Repeat text.

        Args:
            text: What to repeat.
            times: How often.

        Returns:
            {"text", "times"}.
        """
        return Echo(text=text * times, times=times)

    @action_executor(side_effecting=True)
    async def shout(self, *, text: str) -> str:
        """Shout text (pretends to change the world).

        Args:
            text: What to shout.

        Returns:
            The text, upper-cased.
        """
        await asyncio.sleep(0)
        return text.upper()

    @action_executor
    def broken(self) -> Echo:
        """Return something that is not an Echo.

        Returns:
            Nothing valid.
        """
        bad: Any = {"text": 1}
        return bad  # type: ignore[no-any-return]


def test_valid_call_runs_and_validates():
    assert EchoTool().echo(text="ab", times=2) == {"text": "abab", "times": 2}


def test_bad_call_names_action_and_every_field():
    with pytest.raises(ToolInputError) as caught:
        EchoTool().echo(text=3, times=9, colour="red")
    error = caught.value
    assert error.action == "echo"
    fields = {problem.field: problem for problem in error.errors}
    assert set(fields) == {"text", "times", "colour"}
    assert fields["colour"].message == "unexpected argument"
    assert "less than or equal to 5" in fields["times"].message
    assert isinstance(error, ValueError)
    assert error.to_dict()["action"] == "echo"


def test_a_flood_of_wrong_arguments_names_twenty_fields_and_counts_the_rest():
    with pytest.raises(ToolInputError) as caught:
        EchoTool().echo(text="a", **{f"extra{index}": index for index in range(20_000)})
    assert [problem.field for problem in caught.value.errors] == [f"extra{index}" for index in range(20)]
    assert str(caught.value).endswith("extra19: unexpected argument; and 19980 more")
    assert len(str(caught.value)) < 1000


def test_validation_is_strict_about_json_types():
    with pytest.raises(ToolInputError, match="text"):
        EchoTool().echo(text=b"bytes")
    with pytest.raises(ToolInputError, match="times"):
        EchoTool().echo(text="a", times="2")


def test_missing_argument_reported():
    with pytest.raises(ToolInputError, match="text: required argument is missing"):
        EchoTool().echo()


def test_positional_arguments_refused():
    with pytest.raises(ToolInputError, match="keyword arguments only"):
        EchoTool().echo("a")


async def test_invoke_dispatches_sync_and_async_actions():
    tool = EchoTool()
    assert await tool.invoke("echo", {"text": "x"}) == {"text": "x", "times": 1}
    assert await tool.invoke("shout", {"text": "hey"}) == "HEY"


async def test_invoke_rejects_unknown_action_and_non_object_arguments():
    tool = EchoTool()
    with pytest.raises(UnknownActionError, match=r"has no action 'nope'.*echo"):
        await tool.invoke("nope", {})
    with pytest.raises(ToolInputError, match="must be a JSON object"):
        await tool.invoke("echo", ["x"])  # type: ignore[arg-type]


def test_output_checked_against_return_annotation():
    with pytest.raises(ToolOutputError, match="broken returned an invalid result"):
        EchoTool().broken()


def test_input_schema_derived_from_signature_and_docstring():
    schema = EchoTool.actions()["echo"].input_schema
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["text"]
    assert schema["properties"]["text"] == {"type": "string", "description": "What to repeat."}
    assert schema["properties"]["times"]["maximum"] == 5
    assert schema["properties"]["times"]["default"] == 1


def test_side_effecting_per_action_overrides_capability():
    tool = EchoTool()
    assert tool.action_side_effecting("echo") is False
    assert tool.action_side_effecting("shout") is True
    assert tool.action_side_effecting("check_preconditions") is False


def test_untyped_parameter_rejected_at_class_creation():
    with pytest.raises(TypeError, match="parameter 'x' has no type annotation"):

        class Untyped(AgentCapability):
            @action_executor
            def act(self, *, x):  # type: ignore[no-untyped-def]
                """Act."""


def test_override_of_inherited_action_stays_validated():
    class Louder(EchoTool):
        def echo(self, *, text: str, times: int = 1) -> Echo:  # type: ignore[override]
            return Echo(text=text.upper(), times=times)

    assert Louder().echo(text="a") == {"text": "A", "times": 1}
    with pytest.raises(ToolInputError):
        Louder().echo(text=1)


class Plain(AgentCapability):
    """A plain capability with no tool tag."""

    side_effecting: ClassVar[bool] = True

    @action_executor
    def ping(self) -> str:
        """Ping.

        Returns:
            "pong".
        """
        return "pong"


def test_menu_filters_by_tags_and_qualifies_clashing_names():
    class Other(LocalToolCapability):
        """Another tool, to clash with EchoTool's check_preconditions."""

        spec = ToolSpec(name="other_double", capabilities=("other",), domain="misc")

        @action_executor
        def other(self) -> str:
            """Other.

            Returns:
                "other".
            """
            return "other"

    capabilities = [EchoTool(), Other(), Plain()]
    everything = {entry.name for entry in action_menu(capabilities)}
    assert {"echo_double__check_preconditions", "other_double__check_preconditions", "ping", "echo"} <= everything
    tools_only = {entry.capability for entry in action_menu(capabilities, include_tags={"tool"})}
    assert tools_only == {"echo_double", "other_double"}
    testing_only = action_menu(capabilities, include_tags={"tool", "testing"})
    assert {entry.name for entry in testing_only} == {"check_preconditions", "echo", "shout", "broken"}
    not_testing = {entry.capability for entry in action_menu(capabilities, exclude_tags={"testing"})}
    assert not_testing == {"other_double", "Plain"}
    ping = next(entry for entry in action_menu([Plain()]) if entry.name == "ping")
    assert ping.side_effecting is True
