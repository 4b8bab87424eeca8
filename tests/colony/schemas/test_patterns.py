"""Schema patterns: ECMA-262 spelled for RE2, refused when RE2 cannot run them in linear time."""

import pytest

from colony.schemas._patterns import (
    MAX_PATTERN_CHARS,
    MAX_PATTERN_NESTING,
    InvalidPattern,
    UnsupportedPattern,
    compile_pattern,
)


def matches(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text) is not None


def test_a_catastrophic_pattern_for_backtracking_engines_answers() -> None:
    # Python's re needs minutes for 30 characters here; the answer must simply come back.
    assert not matches("^(a+)+$", "a" * 100_000 + "!")
    assert matches("^(a+)+$", "a" * 100_000)
    assert not matches("^(a|aa)*b$", "a" * 50_000)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"^\u00e9t\u00E9$", "été", True),
        (r"^\uD83D\uDE00$", "😀", True),  # a surrogate pair is one code point
        (r"^\u{1F600}$", "😀", True),
        (r"^a\cJb$", "a\nb", True),
        (r"^(?<year>\d{4})-(?<month>\d{2})$", "2026-05", True),  # ECMA's named groups
        (r"^\\1$", "\\1", True),  # an escaped backslash, then a digit: no backreference
        (r"^[\d\-]+$", "12-34", True),
        (r"^\d+$", "١٢٣", False),  # ECMA's \d is ASCII, as RE2's is
        (r"^\/path$", "/path", True),
        (r"^\u00e9$", "e", False),
    ],
)
def test_ecma_syntax_is_understood(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "backreference '\\1'"),
        (r"(?<x>a)\k<x>", "named backreference"),
        ("(?=a)b", "lookaround '(?='"),
        ("(?!a)b", "lookaround '(?!'"),
        ("(?<=a)b", "lookaround '(?<='"),
        ("(?<!a)b", "lookaround '(?<!'"),
        ("(" * 5000, f"groups nest more than {MAX_PATTERN_NESTING} deep"),
        ("(" * 5000 + ")" * 5000, "characters long"),
        ("x" * (MAX_PATTERN_CHARS + 1), f"at most {MAX_PATTERN_CHARS} are compiled"),
        ("(a{1000}){1000}", "too large for RE2"),
    ],
)
def test_what_cannot_run_in_linear_time_is_refused_with_the_reason(pattern: str, reason: str) -> None:
    with pytest.raises(UnsupportedPattern) as caught:
        compile_pattern(pattern)
    assert reason in str(caught.value)
    assert caught.value.pattern == pattern


@pytest.mark.parametrize("pattern", ["(a", "[a", "a**", "\\"])
def test_what_is_no_regular_expression_is_invalid_not_unsupported(pattern: str) -> None:
    with pytest.raises(InvalidPattern) as caught:
        compile_pattern(pattern)
    assert not isinstance(caught.value, UnsupportedPattern)


def test_a_long_pattern_is_shown_shortened_in_the_message() -> None:
    with pytest.raises(UnsupportedPattern) as caught:
        compile_pattern("(" * 5000)
    assert "(5000 characters)" in str(caught.value) and len(str(caught.value)) < 200
