import random
import re

import pytest

from colony import ToolInputError
from tests.seed004 import ARTICLE
from tools.doc_summarize import DocSummarize
from tools.doc_summarize.capability import split_words


@pytest.fixture
def tool():
    return DocSummarize()


async def summarize(tool, **arguments):
    return await tool.invoke("summarize_text", arguments)


async def test_seed_example_1_summarize_article(tool):
    # "ai" occurs 4 times, every other content word once. Scores by hand:
    # 5, 8, 10 (companies using ai improve customer service operations),
    # 10 (ethical considerations around ai deployment remain important), 6,
    # 9 (future ai depends responsible development practices), 8.
    result = await summarize(tool, text=ARTICLE, max_sentences=3)
    assert result == {
        "summary": "Companies are using AI to improve customer service and operations. "
        "However, ethical considerations around AI deployment remain important. "
        "The future of AI depends on responsible development practices.",
        "original_sentences": 7,
        "summary_sentences": 3,
        "method": "extractive-frequency",
    }


async def test_seed_example_2_short_summary(tool):
    # Scores 6, 3 (test + sentence x2), 3 (sentence x2 + testing): the tie goes to the earlier sentence.
    text = "The quick brown fox jumps over the lazy dog. This is a test sentence. Another sentence for testing."
    assert await summarize(tool, text=text, max_sentences=2) == {
        "summary": "The quick brown fox jumps over the lazy dog. This is a test sentence.",
        "original_sentences": 3,
        "summary_sentences": 2,
        "method": "extractive-frequency",
    }


async def test_seed_example_3_single_sentence(tool):
    # "climate" occurs twice; the first sentence scores 8, the others 6, 5, 5, 6.
    text = """
    Climate change is one of the biggest challenges facing humanity.
    Rising temperatures are causing extreme weather events.
    Scientists agree that immediate action is needed.
    Renewable energy adoption is increasing globally.
    However, more investment is required to meet climate goals.
    """
    result = await summarize(tool, text=text, max_sentences=1)
    assert result["summary"] == "Climate change is one of the biggest challenges facing humanity."
    assert (result["original_sentences"], result["summary_sentences"]) == (5, 1)


async def test_seed_example_4_already_short(tool):
    result = await summarize(tool, text="This is a short text.", max_sentences=5)
    assert result == {
        "summary": "This is a short text.",
        "original_sentences": 1,
        "summary_sentences": 1,
        "method": "extractive-frequency",
    }


async def test_default_is_three_sentences_in_original_order(tool):
    text = "Cats purr. Dogs bark loudly at dogs! Birds sing? Dogs chase cats. Fish swim."
    result = await summarize(tool, text=text)
    assert result["summary"] == "Cats purr. Dogs bark loudly at dogs! Dogs chase cats."
    assert result["summary_sentences"] == 3


async def test_counting_ignores_case_and_stop_words(tool):
    text = "The the the the. Rust RUST rust. Python."
    assert (await summarize(tool, text=text, max_sentences=1))["summary"] == "Rust RUST rust."


async def test_text_without_terminal_punctuation_is_one_sentence(tool):
    result = await summarize(tool, text="no punctuation here at all", max_sentences=2)
    assert (result["summary"], result["original_sentences"]) == ("no punctuation here at all", 1)


@pytest.mark.parametrize("text", ["", "   ", "\n\t \n"])
async def test_empty_or_blank_text_has_no_sentences(tool, text):
    assert await summarize(tool, text=text) == {
        "summary": "",
        "original_sentences": 0,
        "summary_sentences": 0,
        "method": "extractive-frequency",
    }


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"text": "a.", "max_sentences": 0}, "max_sentences", "greater than or equal to 1"),
        ({"text": "a.", "max_sentences": -3}, "max_sentences", "greater than or equal to 1"),
        ({"text": "a.", "max_sentences": 2.5}, "max_sentences", "valid integer"),
        ({"text": 42}, "text", "valid string"),
        ({}, "text", "required argument is missing"),
        ({"text": "a.", "language": "en"}, "language", "unexpected argument"),
    ],
)
async def test_bad_arguments_name_the_field(tool, arguments, field, message):
    with pytest.raises(ToolInputError) as caught:
        await summarize(tool, **arguments)
    assert [(error.field, message in error.message) for error in caught.value.errors] == [(field, True)]


async def test_oversized_text_is_refused(tool):
    with pytest.raises(ToolInputError, match="at most 10000000 are accepted"):
        await summarize(tool, text="word. " * 2_000_000)


def test_spec_carries_the_seed_identity():
    spec = DocSummarize.spec
    assert (spec.tool_id, spec.version, spec.deterministic) == ("tool:doc_summarize", "1.0.1", True)
    assert spec.policy_tags == ("nlp", "pure", "no_network")
    assert spec.required_capabilities == ("tool:doc_summarize",)
    assert DocSummarize.actions()["summarize_text"].input_schema == spec.inputs_schema


def seed_steps_1_and_2(text):
    """The seed's own regexes, sentence by sentence: the reference for split_words."""
    sentences = [sentence for sentence in re.split(r"(?<=[.!?])\s+", text.strip()) if sentence]
    return sentences, [re.findall(r"\b\w+\b", sentence.lower()) for sentence in sentences]


@pytest.mark.parametrize(
    "text",
    [
        ARTICLE,
        "Tabs\tand\nnewlines!  Under_scores, dashes-and.dots? x1y2 .. end",
        "No terminal punctuation at all",
        "Ünïcödé wörds cöunt tóo. Straße is one word! 数据 也是.",
        "Mixed ASCII first. Then café.",
        "\x1c odd \x0b whitespace. ok",
    ],
)
def test_split_words_matches_the_seed_regexes(text):
    assert split_words(text) == seed_steps_1_and_2(text)


def test_split_words_matches_the_seed_regexes_on_random_text():
    rng = random.Random(11)
    ascii_only = "abcXYZ019_ .!?,;:-'\"\t\n\r\x0b\x1f"
    for index in range(300):
        alphabet = ascii_only if index % 2 else ascii_only + "éß"
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        assert split_words(text) == seed_steps_1_and_2(text), repr(text)
