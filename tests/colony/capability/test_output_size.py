"""Every tool's answer is capped: measured as the JSON the surfaces send, refused past the tool's declared limit."""

import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from colony.capability import AgentCapability, LocalToolCapability, action_executor
from colony.capability._output_size import DEFAULT_MAX_OUTPUT_BYTES, json_size, json_size_bound, typed_dict_bound
from colony.errors import ToolOutputError, ToolOutputTooLargeError
from colony.spec import ToolSpec

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


def wire_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_the_bound_is_never_below_the_size_on_the_wire(value: Any) -> None:
    size = wire_size(value)
    assert json_size(value) == size
    assert json_size_bound(value, 1 << 40) >= size


@pytest.mark.parametrize(
    "value",
    ['\x00\x01\n"\\', "été😀", {"k\u2028": ["x", 1.5e300, -(2**70), None, True]}, list(range(1000))],
)
def test_the_exact_size_is_the_compact_utf8_json(value: Any) -> None:
    assert json_size(value) == wire_size(value)


def test_the_bound_walk_stops_early_once_past_the_limit() -> None:
    huge = ["x" * 1000] * 100_000
    assert json_size_bound(huge, 10_000) <= 10_000 + 6 * 1000 + 2 + 100_001


class Echo(LocalToolCapability):
    spec = ToolSpec(name="echo", capabilities=("echo", "echo_async"))
    max_output_bytes = 1000

    @action_executor
    def echo(self, *, text: str) -> dict[str, Any]:
        """Echo.

        Args:
            text: What to echo.

        Returns:
            {"text": text}.
        """
        return {"text": text}

    @action_executor
    async def echo_async(self, *, text: str) -> str:
        """Echo, awaited.

        Args:
            text: What to echo.

        Returns:
            The text.
        """
        return text


@pytest.mark.parametrize("action", ["echo", "echo_async"])
async def test_an_answer_over_the_declared_cap_is_refused_naming_action_size_and_limit(action: str) -> None:
    tool = Echo()
    assert await tool.invoke(action, {"text": "y" * 900})
    with pytest.raises(ToolOutputTooLargeError) as caught:
        await tool.invoke(action, {"text": "\n" * 900})  # 900 characters, 1,800 bytes as JSON
    error = caught.value
    assert (error.action, error.limit_bytes) == (action, 1000)
    assert error.size_bytes == wire_size({"text": "\n" * 900} if action == "echo" else "\n" * 900)
    assert f"{error.size_bytes:,} bytes" in str(error) and "capped at 1,000 bytes" in str(error)
    assert isinstance(error, ToolOutputError)
    assert error.to_dict()["limit_bytes"] == 1000


class Quiet(LocalToolCapability):
    spec = ToolSpec(name="quiet", capabilities=("say",))

    @action_executor
    def say(self, *, size: int) -> str:
        """Say.

        Args:
            size: Characters.

        Returns:
            That many characters.
        """
        return "z" * size


def test_tools_get_one_mebibyte_unless_they_declare_otherwise() -> None:
    assert Quiet.max_output_bytes == DEFAULT_MAX_OUTPUT_BYTES == 1 << 20
    assert len(Quiet().say(size=DEFAULT_MAX_OUTPUT_BYTES - 2)) == DEFAULT_MAX_OUTPUT_BYTES - 2
    with pytest.raises(ToolOutputTooLargeError, match="capped at 1,048,576 bytes"):
        Quiet().say(size=DEFAULT_MAX_OUTPUT_BYTES - 1)


def test_a_result_that_is_no_json_at_all_is_an_output_error() -> None:
    class Loop(LocalToolCapability):
        spec = ToolSpec(name="loop", capabilities=("loop",))
        max_output_bytes = 100

        @action_executor
        def loop(self) -> list[Any]:
            """Loop.

            Returns:
                A list that holds itself.
            """
            value: list[Any] = ["x" * 200]
            value.append(value)
            return value

    with pytest.raises(ToolOutputError, match="cannot be encoded as JSON"):
        Loop().loop()


@pytest.mark.parametrize("limit", [0, -1, "1MB", None, True, 1.5])
def test_a_declared_cap_must_be_a_positive_int(limit: object) -> None:
    with pytest.raises(TypeError, match="max_output_bytes must be a positive int"):

        class Bad(LocalToolCapability):
            spec = ToolSpec(name="bad", capabilities=("act",))
            max_output_bytes = limit  # type: ignore[assignment]

            @action_executor
            def act(self) -> str:
                """Act.

                Returns:
                    Nothing.
                """
                return ""


def test_a_capability_that_is_no_tool_is_not_capped() -> None:
    class Notes(AgentCapability):
        @action_executor
        def read(self) -> str:
            """Read.

            Returns:
                Everything.
            """
            return "n" * (2 << 20)

    assert Notes.max_output_bytes is None
    assert len(Notes().read()) == 2 << 20


class Reading(TypedDict):
    label: str
    unit: Literal["mm", "km"]
    value: float
    count: int
    ok: bool


@settings(max_examples=200, deadline=None)
@given(st.text(), st.sampled_from(["mm", "km"]), st.floats(), st.integers(-(10**80), 10**80), st.booleans())
def test_a_typed_dict_is_bounded_from_its_strings_alone(
    label: str, unit: str, value: float, count: int, ok: bool
) -> None:
    bound = typed_dict_bound(Reading)
    assert bound is not None
    reading = {"label": label, "unit": unit, "value": value, "count": count, "ok": ok}
    assert bound(reading) >= wire_size(reading)


def test_a_typed_dict_bound_gives_up_on_anything_else() -> None:
    bound = typed_dict_bound(Reading)
    assert bound is not None
    assert bound({"label": "x"}) is None
    assert bound(["label", "unit", "value", "count", "ok"]) is None
    assert bound("12345") is None
    assert typed_dict_bound(dict[str, Any]) is None

    class Nested(TypedDict):
        items: list[str]

    assert typed_dict_bound(Nested) is None


class Labels(LocalToolCapability):
    spec = ToolSpec(name="labels", capabilities=("label",))
    max_output_bytes = 1000

    @action_executor
    def label(self, *, text: str) -> Reading:
        """Label.

        Args:
            text: The label.

        Returns:
            A reading.
        """
        return {"label": text, "unit": "mm", "value": 1.0, "count": 1, "ok": True}


def test_a_typed_dict_answer_over_the_cap_is_still_refused() -> None:
    assert Labels().label(text="x" * 10)["label"] == "x" * 10
    with pytest.raises(ToolOutputTooLargeError, match="capped at 1,000 bytes"):
        Labels().label(text="x" * 1000)
