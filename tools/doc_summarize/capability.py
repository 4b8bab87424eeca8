"""The doc_summarize tool (seed 004, tool:doc_summarize v1.0.0)."""

from __future__ import annotations

import re
from collections import Counter
from itertools import chain, repeat
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolInputError, ToolSpec, action_executor
from colony.spec import CostModel, Licensing, ResourceRequirements

METHOD = "extractive-frequency"
#: Longest text accepted, in characters (about 10 MB of ASCII).
MAX_TEXT_CHARS = 10_000_000

_SENTENCE_END = re.compile(r"([.!?])(\s+)")
# The seed's \b\w+\b; a maximal run of \w is always bounded by \b, so \w+ finds the same words.
_WORD = re.compile(r"\w+")
_NON_WORD_TO_SPACE = str.maketrans(
    {character: " " for character in map(chr, range(128)) if not (character.isalnum() or character == "_")}
)
_STOP_WORDS_TEXT = """
    a about above after again against all also am an and another any are as at be because been before being
    below between both but by can could did do does doing down during each either else etc even ever every
    few for from further had has have having he her here hers herself him himself his how however i if in
    into is it its itself just may me might more most must my myself neither no nor not now of off on once
    only or other ought our ours ourselves out over own per same shall she should since so some such than
    that the their theirs them themselves then there these they this those though through thus to too
    under until up upon us very via was we were what when where whether which while who whom whose why will
    with within without would yet you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

INPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "Text to summarize"},
        "max_sentences": {
            "type": "integer",
            "description": "Maximum number of sentences in summary",
            "default": 3,
            "minimum": 1,
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}
OUTPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "description": "Extractive summary"},
        "original_sentences": {"type": "integer", "description": "Number of sentences in original text"},
        "summary_sentences": {"type": "integer", "description": "Number of sentences in summary"},
        "method": {"type": "string", "description": "Summarization method used"},
    },
    "required": ["summary", "original_sentences", "summary_sentences", "method"],
}


class Summary(TypedDict):
    """The chosen sentences and how many there were to choose from."""

    summary: str
    original_sentences: int
    summary_sentences: int
    method: str


def split_words(text: str) -> tuple[list[str], list[list[str]]]:
    """Steps 1-2: the sentences of ``text``, and each one's lower-cased words."""
    text = text.strip()
    if not text:
        return [], []
    # Split as (?<=[.!?])\s+ would, but with the mark and the gap captured: a look-behind
    # at every whitespace character is several times slower.
    pieces = _SENTENCE_END.split(text)
    sentences, spans, start = [], [], 0
    for index in range(0, len(pieces) - 1, 3):
        body, mark, gap = pieces[index : index + 3]
        end = start + len(body) + len(mark)
        sentences.append(body + mark)
        spans.append((start, end))
        start = end + len(gap)
    sentences.append(pieces[-1])
    spans.append((start, len(text)))
    if not text.isascii():
        return sentences, [_WORD.findall(sentence.lower()) for sentence in sentences]
    # ASCII fast path, the same words as \w+: every other character becomes a space, then
    # str.split() over each sentence's span (several times faster than a regex per sentence).
    spaced = text.lower().translate(_NON_WORD_TO_SPACE)
    return sentences, [spaced[start:end].split() for start, end in spans]


def summarize(text: str, max_sentences: int) -> Summary:
    """Seed 004's seven steps: split, tokenize, drop stop words, count, score, pick top K, restore order."""
    sentences, words = split_words(text)
    frequency = Counter(chain.from_iterable(words))
    # Dropping stop words from the frequency table gives each one a weight of 0: the same
    # scores as filtering them out of every sentence, for one check per distinct word.
    weights = {word: count for word, count in frequency.items() if word not in STOP_WORDS}
    scores = [sum(map(weights.get, sentence_words, repeat(0))) for sentence_words in words]
    # sorted() is stable (reverse=True too), so of equally scored sentences the earlier one is kept.
    ranked = sorted(range(len(sentences)), key=scores.__getitem__, reverse=True)
    chosen = sorted(ranked[:max_sentences])
    return Summary(
        summary=" ".join(sentences[index] for index in chosen),
        original_sentences=len(sentences),
        summary_sentences=len(chosen),
        method=METHOD,
    )


class DocSummarize(LocalToolCapability):
    """Create an extractive summary of text using frequency-based sentence scoring."""

    spec = ToolSpec(
        name="doc_summarize",
        version="1.0.1",
        description="Create extractive summary of text using frequency-based sentence scoring.",
        domain="nlp",
        capabilities=("summarize_text",),
        inputs_schema=INPUTS_SCHEMA,
        outputs_schema=OUTPUTS_SCHEMA,
        cost_model=CostModel(cpu_seconds=0.01),
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.2, expected_wallclock_seconds=1),
        licensing=Licensing.MIT,
        policy_tags=("nlp", "pure", "no_network"),
    )
    #: The largest input the caps allow takes up to a few hundred milliseconds of CPU (bench/adversarial.py).
    cpu_bound = True

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"summarization"})

    @action_executor
    def summarize_text(
        self,
        *,
        text: Annotated[str, Field(description="Text to summarize")],
        max_sentences: Annotated[int, Field(ge=1, description="Maximum number of sentences in summary")] = 3,
    ) -> Summary:
        """Pick the most representative sentences of a text, in their original order.

        Sentences end at '.', '!' or '?' followed by whitespace. Each sentence scores
        the summed document frequency of its words (case-insensitive, English stop
        words ignored); the top max_sentences are kept, ties going to the earlier one.

        Args:
            text: Text to summarize, up to 10,000,000 characters.
            max_sentences: Maximum number of sentences in the summary, at least 1.

        Returns:
            {"summary": the chosen sentences joined by spaces, "original_sentences": n,
            "summary_sentences": min(n, max_sentences), "method": "extractive-frequency"}.
            Empty or whitespace-only text is not an error: it has 0 sentences and an
            empty summary. max_sentences < 1 or a longer text is an input error.
        """
        if len(text) > MAX_TEXT_CHARS:
            raise ToolInputError.for_field(
                "text", f"text is {len(text)} characters; at most {MAX_TEXT_CHARS} are accepted"
            )
        return summarize(text, max_sentences)
