"""The guide's example tool (docs/examples/word_count) is a valid tool and does what the guide says."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from colony import ToolInputError
from colony.catalog import ToolEntry, check_entry

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@pytest.fixture
def word_count(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    yield importlib.import_module("word_count")
    sys.modules.pop("word_count", None)
    sys.modules.pop("word_count.capability", None)


def test_the_entry_the_guide_registers_agrees_with_its_spec(word_count: Any) -> None:
    check_entry(
        ToolEntry(
            name="word_count",
            purpose="Count the words and lines of a text.",
            location="docs/examples/word_count",
            capability="count_words",
            capability_fqn="word_count.WordCount",
        )
    )
    definition = word_count.WordCount.actions()["count_words"]
    assert not definition.governed
    assert {"parameters", "returns"} <= set(definition.docstring_sections)


async def test_it_counts_as_the_guide_shows_and_names_a_bad_field(word_count: Any) -> None:
    tool = word_count.WordCount()
    assert await tool.invoke("count_words", {"text": "one two\nthree"}) == {"words": 3, "lines": 2}
    with pytest.raises(ToolInputError) as error:
        await tool.invoke("count_words", {"text": 10})
    assert "text" in str(error.value)


async def test_the_readmes_tool_in_30_lines_runs_as_written() -> None:
    readme = (EXAMPLES.parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A tool in 30 lines", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert len(block.splitlines()) <= 40
    namespace: dict[str, Any] = {"__name__": "readme_tool"}
    exec(compile(block, "README.md", "exec"), namespace)
    tool = namespace["WordCount"]()
    assert await tool.invoke("count_words", {"text": "one two\nthree"}) == {"words": 3, "lines": 2}
