"""word_count: count the words and lines of a text (the example package of "Writing a tool")."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolSpec, action_executor


class Counts(TypedDict):
    """How long a text is."""

    words: int
    lines: int


class WordCount(LocalToolCapability):
    """Count the words and lines of a text."""

    spec = ToolSpec(
        name="word_count",
        version="1.0.0",
        description="Count the words and lines of a text.",
        capabilities=("count_words",),
        policy_tags=("pure", "no_network"),
    )

    @action_executor
    def count_words(
        self, *, text: Annotated[str, Field(description="The text to count", max_length=100_000)]
    ) -> Counts:
        """Count the words (runs of non-space characters) and the lines of a text.

        Args:
            text: The text to count, at most 100,000 characters.

        Returns:
            {"words": number of words, "lines": number of lines}.
        """
        return {"words": len(text.split()), "lines": len(text.splitlines())}
