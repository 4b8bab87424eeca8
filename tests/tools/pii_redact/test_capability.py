import random
import re

import pytest

from colony import ToolInputError
from tests.data.make_pii_corpus import build
from tools.pii_redact import PiiRedact
from tools.pii_redact.capability import (
    MAX_REDACTED_CHARS,
    MAX_REPLACEMENT_CHARS,
    PATTERNS,
    PII_TYPES,
    find_pii,
    luhn_valid,
)


@pytest.fixture
def tool():
    return PiiRedact()


async def redact(tool, **arguments):
    return await tool.invoke("redact_pii", arguments)


async def test_seed_example_1_email(tool):
    assert await redact(tool, text="Contact support at admin@company.com for assistance") == {
        "redacted_text": "Contact support at [REDACTED] for assistance",
        "redactions": [{"type": "email", "count": 1}],
    }


async def test_seed_example_2_phones(tool):
    assert await redact(tool, text="Call me at 555-123-4567 or (555) 987-6543") == {
        "redacted_text": "Call me at [REDACTED] or [REDACTED]",
        "redactions": [{"type": "phone", "count": 2}],
    }


async def test_seed_example_3_custom_replacement_and_local_number(tool):
    result = await redact(tool, text="Email: john@example.com, Phone: 555-1234", replacement="***HIDDEN***")
    assert result["redacted_text"] == "Email: ***HIDDEN***, Phone: ***HIDDEN***"
    assert result["redactions"] == [{"type": "email", "count": 1}, {"type": "phone", "count": 1}]


async def test_seed_example_4_selective(tool):
    result = await redact(
        tool, text="Contact: admin@example.com or 555-123-4567", redact_emails=True, redact_phones=False
    )
    assert result == {
        "redacted_text": "Contact: [REDACTED] or 555-123-4567",
        "redactions": [{"type": "email", "count": 1}],
    }


async def test_seed_example_5_multiple_types(tool):
    text = """
    Customer report:
    Name: John Doe
    Email: john.doe@customer.com
    Phone: (555) 123-4567
    Alt Email: j.doe@gmail.com
    Mobile: 555.987.6543
    """
    result = await redact(tool, text=text)
    assert result["redactions"] == [{"type": "email", "count": 2}, {"type": "phone", "count": 2}]
    assert result["redacted_text"] == text.replace("john.doe@customer.com", "[REDACTED]").replace(
        "(555) 123-4567", "[REDACTED]"
    ).replace("j.doe@gmail.com", "[REDACTED]").replace("555.987.6543", "[REDACTED]")


@pytest.mark.parametrize(
    "phone", ["123-456-7890", "123.456.7890", "123 456 7890", "(123) 456-7890", "(123)456-7890", "1234567890"]
)
async def test_every_seed_phone_form(tool, phone):
    assert (await redact(tool, text=f"tel {phone}."))["redacted_text"] == "tel [REDACTED]."


@pytest.mark.parametrize(
    "text",
    [
        "release 2024-01-15",
        "part 12-345-6789",
        "zip 94105-1234",
        "ISBN 978-0-306-40615-7",
        "555.123.45678",
        "call 5551234",
        "total 123.4567 kg",
        "555-1234-5",
    ],
)
async def test_phone_near_misses_are_kept(tool, text):
    assert await redact(tool, text=text) == {"redacted_text": text, "redactions": []}


OPT_IN = "SSN 123-45-6789, card 4111 1111 1111 1111, host 192.168.0.1"


async def test_opt_in_detectors_are_off_by_default(tool):
    assert await redact(tool, text=OPT_IN) == {"redacted_text": OPT_IN, "redactions": []}


async def test_opt_in_detectors_when_asked(tool):
    result = await redact(tool, text=OPT_IN, redact_ssns=True, redact_credit_cards=True, redact_ipv4=True)
    assert result == {
        "redacted_text": "SSN [REDACTED], card [REDACTED], host [REDACTED]",
        "redactions": [
            {"type": "ssn", "count": 1},
            {"type": "credit_card", "count": 1},
            {"type": "ipv4", "count": 1},
        ],
    }


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("card 4111 1111 1111 1112", True),  # fails Luhn
        ("card 4111111111111111", False),
        ("card 3782-822463-10005", False),  # Amex grouping
        ("card 7992739871300000", True),  # passes Luhn, no card issuer starts with 7
        ("ssn 000-12-3456", True),
        ("ssn 666-12-3456", True),
        ("ssn 912-34-5678", True),
        ("ssn 123-00-4567", True),
        ("ssn 123 45 6789", False),
        ("ip 256.1.1.1", True),
        ("ip 1.2.3.4.5", True),
        ("ip 01.2.3.4", True),
        ("ip 10.0.0.1.", False),
    ],
)
async def test_opt_in_near_misses(tool, text, kept):
    result = await redact(tool, text=text, redact_ssns=True, redact_credit_cards=True, redact_ipv4=True)
    assert (result["redacted_text"] == text) is kept


async def test_email_wins_over_a_number_inside_it(tool):
    result = await redact(tool, text="write 555-123-4567@example.com")
    assert result == {"redacted_text": "write [REDACTED]", "redactions": [{"type": "email", "count": 1}]}


async def test_replacement_is_never_scanned_again(tool):
    result = await redact(tool, text="a@b.com and c@d.org", replacement="x@y.com 555-123-4567")
    assert result["redacted_text"] == "x@y.com 555-123-4567 and x@y.com 555-123-4567"
    assert result["redactions"] == [{"type": "email", "count": 2}]


async def test_nothing_to_redact(tool):
    assert await redact(tool, text="") == {"redacted_text": "", "redactions": []}
    assert await redact(tool, text="no pii here", redact_emails=False, redact_phones=False) == {
        "redacted_text": "no pii here",
        "redactions": [],
    }


def test_luhn():
    assert luhn_valid("79927398713")
    assert not luhn_valid("79927398710")


def seed_style_findings(text, types):
    """What one pass of the full patterns over the whole text finds: the reference for the fast path."""
    combined = re.compile("|".join(f"(?P<{kind}>{PATTERNS[kind]})" for kind in types))
    found = []
    for match in combined.finditer(text):
        if match.lastgroup == "credit_card" and not (
            match.group()[0] in "23456" and luhn_valid(re.sub("[ -]", "", match.group()))
        ):
            continue
        found.append({"type": match.lastgroup, "start": match.start(), "end": match.end()})
    return found


def test_fast_path_finds_what_the_patterns_find():
    rng = random.Random(5)
    texts = [record["text"] for record in build()]
    texts += [" ".join(rng.sample(texts, 6)) for _ in range(200)]
    texts += ["é " + text + " ü" for text in texts[:100]]
    texts += ["é" + text for text in texts[:100]] + ["ü.x" + text for text in texts[:60]]
    texts += ["éjohn@example.com", "é.john@example.com", "a_b.c@d.org", "--x@y.com", "é-x.y@z.io", "x@y@z.com"]
    for text in texts:
        assert find_pii(text, PII_TYPES) == seed_style_findings(text, PII_TYPES), text
        assert find_pii(text, ("email", "phone")) == seed_style_findings(text, ("email", "phone")), text


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"text": None}, "text", "valid string"),
        ({}, "text", "required argument is missing"),
        ({"text": "x", "redact_emails": "yes"}, "redact_emails", "valid boolean"),
        ({"text": "x", "replacement": 0}, "replacement", "valid string"),
        ({"text": "x", "replacement": "#" * 65}, "replacement", "at most 64 characters"),
        ({"text": "x", "redact_names": True}, "redact_names", "unexpected argument"),
    ],
)
async def test_bad_arguments_name_the_field(tool, arguments, field, message):
    with pytest.raises(ToolInputError) as caught:
        await redact(tool, **arguments)
    assert [(error.field, message in error.message) for error in caught.value.errors] == [(field, True)]


async def test_oversized_text_is_refused(tool):
    with pytest.raises(ToolInputError, match="at most 10000000 are accepted"):
        await redact(tool, text="a" * 10_000_001)


async def test_the_longest_replacement_is_accepted(tool):
    replacement = "#" * MAX_REPLACEMENT_CHARS
    result = await redact(tool, text="a@b.cc and 555-1234", replacement=replacement)
    assert result["redacted_text"] == f"{replacement} and {replacement}"


async def test_a_redacted_text_that_would_outgrow_the_cap_is_refused_before_it_is_built(tool):
    # Seven characters per address, each replaced by 64: about nine times the text.
    text = "a@b.cc " * (MAX_REDACTED_CHARS // 64 + 1)
    with pytest.raises(ToolInputError) as caught:
        await redact(tool, text=text, replacement="#" * 64)
    (error,) = caught.value.errors
    assert error.field == "replacement" and error.expected == "a shorter replacement"
    assert f"at most {MAX_REDACTED_CHARS:,} are returned" in error.message
    assert (await redact(tool, text=text, replacement="#"))["redactions"] == [
        {"type": "email", "count": MAX_REDACTED_CHARS // 64 + 1}
    ]


def test_the_declared_output_cap_holds_the_largest_answer_the_input_caps_allow():
    # Every character of the longest redacted text a 6-byte JSON escape, plus the redactions list.
    assert PiiRedact.max_output_bytes >= MAX_REDACTED_CHARS * 6 + 1024


def test_spec_carries_the_seed_identity():
    spec = PiiRedact.spec
    assert (spec.tool_id, spec.version, spec.deterministic) == ("tool:pii_redact", "2.0.0", True)
    assert spec.policy_tags == ("pii", "privacy", "pure", "no_network")
    assert spec.required_capabilities == ("tool:pii_redact",)
    assert PiiRedact.actions()["redact_pii"].input_schema == spec.inputs_schema
    seed_inputs = {"text", "redact_emails", "redact_phones", "replacement"}
    assert seed_inputs < set(spec.inputs_schema["properties"])
    added = set(spec.inputs_schema["properties"]) - seed_inputs
    assert all(spec.inputs_schema["properties"][name]["default"] is False for name in added)
