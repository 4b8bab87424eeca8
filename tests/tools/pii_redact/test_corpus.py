"""Precision and recall of pii_redact on the labelled corpus in tests/data/."""

import json
from collections import Counter

import pytest

from tests.data.make_pii_corpus import CORPUS, build
from tools.pii_redact.capability import PII_TYPES, find_pii

#: The floors the README's figures must stay above (all detectors on).
PRECISION_FLOOR = 0.95
RECALL_FLOOR = 0.95


def load():
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def score(records, types=PII_TYPES):
    """True positives, false positives and false negatives per type: exact (type, value) matches."""
    counts = {kind: Counter() for kind in types}
    for record in records:
        expected = Counter((item["type"], item["value"]) for item in record["pii"] if item["type"] in types)
        found = Counter(
            (finding["type"], record["text"][finding["start"] : finding["end"]])
            for finding in find_pii(record["text"], types)
        )
        for outcome, difference in (("tp", found & expected), ("fp", found - expected), ("fn", expected - found)):
            for (kind, _), count in difference.items():
                counts[kind][outcome] += count
    return counts


def ratios(counts):
    tp, fp, fn = (sum(per_type[key] for per_type in counts.values()) for key in ("tp", "fp", "fn"))
    return tp / (tp + fp), tp / (tp + fn)


def test_corpus_file_is_what_the_script_builds():
    assert load() == build()


def test_corpus_is_big_enough_and_balanced():
    records = load()
    positives = [record for record in records if record["pii"]]
    assert len(positives) >= 200
    assert len(records) - len(positives) >= 200
    assert {item["type"] for record in positives for item in record["pii"]} == set(PII_TYPES)


def test_precision_and_recall_with_every_detector_on():
    precision, recall = ratios(score(load()))
    assert precision >= PRECISION_FLOOR, f"precision {precision:.3f}"
    assert recall >= RECALL_FLOOR, f"recall {recall:.3f}"


@pytest.mark.parametrize("kind", PII_TYPES)
def test_each_detector_finds_most_of_its_type(kind):
    counts = score(load(), types=(kind,))[kind]
    assert counts["tp"] / (counts["tp"] + counts["fn"]) >= 0.9
    assert counts["tp"] / (counts["tp"] + counts["fp"]) >= 0.85
