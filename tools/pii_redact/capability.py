"""The pii_redact tool (seed 004, tool:pii_redact v1.1.0)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolInputError, ToolSpec, action_executor
from colony.spec import CostModel, Licensing, ResourceRequirements

PiiType = Literal["email", "phone", "ssn", "credit_card", "ipv4"]
#: Report order, and the order detectors are tried at one position.
PII_TYPES: tuple[PiiType, ...] = ("email", "phone", "ssn", "credit_card", "ipv4")
#: A numeric detector's outer group, named after its kind, as the kind.
_KIND_OF_GROUP: dict[str | None, PiiType] = {kind: kind for kind in PII_TYPES}
#: Longest text accepted, in characters (about 10 MB of ASCII).
MAX_TEXT_CHARS = 10_000_000
#: Longest replacement accepted: each redacted value (6 characters at least) becomes this.
MAX_REPLACEMENT_CHARS = 64
#: Longest redacted text returned. Without it a short replacement-heavy text amplifies:
#: a value every 7 characters, each replaced by 64, is a 9x longer answer.
MAX_REDACTED_CHARS = MAX_TEXT_CHARS

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_EMAIL_DOMAIN = r"@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"
# Digits are [0-9], not \d, so other scripts' digits are never taken for a number.
# A match may not touch a letter, digit or dash on either side: a longer run is not a phone.
PATTERNS: dict[PiiType, str] = {
    # The seed's pattern, with its `[A-Z|a-z]` (which let a '|' into the TLD) fixed.
    "email": rf"\b[A-Za-z0-9._%+-]+{_EMAIL_DOMAIN}",
    # The seed's six US forms, one separator style per number, plus the 7-digit local
    # form with a dash (555-1234), which its example 3 redacts.
    "phone": r"(?<![\w-])(?:\([0-9]{3}\) ?[0-9]{3}-[0-9]{4}"
    r"|[0-9]{3}(?P<phone_sep>[-. ]?)[0-9]{3}(?P=phone_sep)[0-9]{4}"
    r"|[0-9]{3}-[0-9]{4})(?![\w-])",
    # Area 000, 666 and 900-999, group 00 and serial 0000 are never issued.
    "ssn": r"(?<![\w-])(?!000|666|9)[0-9]{3}(?P<ssn_sep>[- ])(?!00)[0-9]{2}(?P=ssn_sep)(?!0000)[0-9]{4}(?![\w-])",
    # 13-19 digits unbroken, or grouped 4-4-4-(1..7) or 4-6-(4..5) (Amex); Luhn-checked after matching.
    "credit_card": r"(?<![\w-])(?:[0-9]{13,19}"
    r"|[0-9]{4}(?P<card_sep>[ -])[0-9]{4}(?P=card_sep)[0-9]{4}(?P=card_sep)[0-9]{1,7}"
    r"|[0-9]{4}(?P<amex_sep>[ -])[0-9]{6}(?P=amex_sep)[0-9]{4,5})(?![\w-])",
    # Four decimal octets 0-255 without leading zeros, not part of a longer dotted run.
    "ipv4": rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?[0-9])(?![\w])",
}

INPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "Text to redact PII from"},
        "redact_emails": {"type": "boolean", "description": "Whether to redact email addresses", "default": True},
        "redact_phones": {"type": "boolean", "description": "Whether to redact phone numbers", "default": True},
        "replacement": {
            "type": "string",
            "description": "Replacement text for redacted content",
            "default": "[REDACTED]",
            "maxLength": MAX_REPLACEMENT_CHARS,
        },
        "redact_ssns": {
            "type": "boolean",
            "description": "Whether to redact US Social Security numbers (123-45-6789); since 1.1.0",
            "default": False,
        },
        "redact_credit_cards": {
            "type": "boolean",
            "description": "Whether to redact Luhn-valid payment card numbers; since 1.1.0",
            "default": False,
        },
        "redact_ipv4": {
            "type": "boolean",
            "description": "Whether to redact IPv4 addresses; since 1.1.0",
            "default": False,
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}
OUTPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "redacted_text": {"type": "string", "description": "Text with PII redacted"},
        "redactions": {
            "type": "array",
            "description": "List of redactions performed",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": list(PII_TYPES)},
                    "count": {"type": "integer"},
                },
                "required": ["type", "count"],
            },
        },
    },
    "required": ["redacted_text", "redactions"],
}


class Redaction(TypedDict):
    """How many values of one type were replaced."""

    type: PiiType
    count: int


class Redacted(TypedDict):
    """The text with PII replaced, and what was replaced."""

    redacted_text: str
    redactions: list[Redaction]


class Finding(TypedDict):
    """One value a detector accepted: its type and where it is."""

    type: PiiType
    start: int
    end: int


def luhn_valid(digits: str) -> bool:
    """Whether a digit string passes the Luhn checksum every payment card number carries."""
    total = 0
    for position, character in enumerate(reversed(digits)):
        digit = ord(character) - 48
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _is_card(candidate: str) -> bool:
    digits = candidate.replace(" ", "").replace("-", "")
    # Issuer prefixes 2-6 cover Mastercard, Amex, Diners, JCB, Visa, Discover, UnionPay.
    return digits[0] in "23456" and luhn_valid(digits)


def _is_word(character: str) -> bool:
    r"""Whether ``character`` is a regex word character (what \w matches in a str pattern)."""
    return character.isalnum() or character == "_"


_EMAIL_LOCAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_EMAIL_FROM_AT = re.compile(_EMAIL_DOMAIN)
# Numeric values are looked for only inside runs of number-like characters at least as long
# as the shortest one (1.1.1.1). Runs are found in a copy of the text with every digit as '#'
# and every non-ASCII character as '?' (one byte per character, so offsets agree): a literal
# first character lets the regex engine skip ahead fast, where a class like [0-9] visits
# every character.
_DIGIT_MASK = bytes.maketrans(b"0123456789", b"#" * 10)
_MASKED_NUMBER_RUN = re.compile(rb"#[#().\- ]{5,}#")


@lru_cache(maxsize=16)
def _numeric_detector(types: tuple[PiiType, ...]) -> re.Pattern[str]:
    # Every numeric pattern starts with a look-behind refusing a word character; checking
    # that once, up front, fails fast inside a number instead of once per pattern.
    alternatives = "|".join(f"(?P<{kind}>{PATTERNS[kind]})" for kind in types)
    return re.compile(rf"(?<!\w)(?:{alternatives})")


def _emails(text: str) -> Iterator[tuple[int, int]]:
    """The seed's email matches, found from each '@' outwards (scanning every letter is slow)."""
    floor = 0
    for domain in _EMAIL_FROM_AT.finditer(text):
        at = start = domain.start()
        while start > floor and text[start - 1] in _EMAIL_LOCAL_CHARS:
            start -= 1
        # The seed's leading \b: the address starts at the run's first word boundary.
        start = next((p for p in range(start, at) if _is_word(text[p]) != (p > 0 and _is_word(text[p - 1]))), at)
        if start < at:
            floor = domain.end()
            yield start, floor


def _numbers(text: str, types: tuple[PiiType, ...]) -> Iterator[Finding]:
    """Phone, SSN, card and IPv4 matches, looked for only inside runs of number-like characters."""
    detector = _numeric_detector(types)
    masked = text.encode("ascii", "replace").translate(_DIGIT_MASK)
    for run in _MASKED_NUMBER_RUN.finditer(masked):
        start, end = run.span()
        if start and text[start - 1] == "(":
            start -= 1
        # One character past the run, so a match's look-ahead sees what follows it.
        for match in detector.finditer(text, start, end + 1):
            kind = _KIND_OF_GROUP[match.lastgroup]
            if kind == "credit_card" and not _is_card(match.group()):
                continue
            yield {"type": kind, "start": match.start(), "end": match.end()}


def find_pii(text: str, types: tuple[PiiType, ...]) -> list[Finding]:
    """Every PII value of ``types`` in ``text``, left to right; an email wins over a number inside it."""
    emails: list[Finding] = (
        [{"type": "email", "start": start, "end": end} for start, end in _emails(text)] if "email" in types else []
    )
    numeric_types = tuple(kind for kind in types if kind != "email")
    if not numeric_types:
        return emails
    findings: list[Finding] = []
    pending = iter(emails)
    email = next(pending, None)
    for number in _numbers(text, numeric_types):
        while email is not None and email["end"] <= number["start"]:
            findings.append(email)
            email = next(pending, None)
        if email is None or number["end"] <= email["start"]:
            findings.append(number)
    if email is not None:
        findings.append(email)
    findings.extend(pending)
    return findings


class PiiRedact(LocalToolCapability):
    """Redact personally identifiable information (PII) from text using regex patterns.

    A heuristic, not production-grade PII detection: no names, addresses or
    non-US numbers; see the tool's README for measured precision and recall.
    """

    spec = ToolSpec(
        name="pii_redact",
        version="2.0.0",
        description="Redact personally identifiable information (PII) from text using regex patterns. "
        "Heuristic: emails and US phone numbers, optionally SSNs, card numbers and IPv4 addresses.",
        domain="privacy",
        capabilities=("redact_pii",),
        inputs_schema=INPUTS_SCHEMA,
        outputs_schema=OUTPUTS_SCHEMA,
        cost_model=CostModel(cpu_seconds=0.005),
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.2, expected_wallclock_seconds=1),
        licensing=Licensing.MIT,
        policy_tags=("pii", "privacy", "pure", "no_network"),
    )
    #: The longest redacted text, every character at worst a 6-byte JSON escape, plus the
    #: redactions list: the largest answer the tool's own caps allow fits.
    max_output_bytes = 64 << 20
    #: The largest input the caps allow takes up to a few hundred milliseconds of CPU (bench/adversarial.py).
    cpu_bound = True

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"pii", "redaction"})

    @action_executor
    def redact_pii(
        self,
        *,
        text: Annotated[str, Field(description="Text to redact PII from")],
        redact_emails: Annotated[bool, Field(description="Whether to redact email addresses")] = True,
        redact_phones: Annotated[bool, Field(description="Whether to redact phone numbers")] = True,
        replacement: Annotated[
            str, Field(max_length=MAX_REPLACEMENT_CHARS, description="Replacement text for redacted content")
        ] = "[REDACTED]",
        redact_ssns: Annotated[bool, Field(description="Whether to redact US Social Security numbers")] = False,
        redact_credit_cards: Annotated[
            bool, Field(description="Whether to redact Luhn-valid payment card numbers")
        ] = False,
        redact_ipv4: Annotated[bool, Field(description="Whether to redact IPv4 addresses")] = False,
    ) -> Redacted:
        """Replace email addresses and US phone numbers (and, if asked, SSNs, card numbers, IPv4) in text.

        Phones: 123-456-7890, 123.456.7890, 123 456 7890, (123) 456-7890,
        (123)456-7890, 1234567890, and the local form 555-1234. Card numbers must
        pass the Luhn check; SSNs must be dashed or spaced (123-45-6789) with an
        issuable area number. A heuristic: expect misses and false alarms.

        Args:
            text: Text to redact PII from, up to 10,000,000 characters.
            redact_emails: Whether to redact email addresses.
            redact_phones: Whether to redact phone numbers.
            replacement: Replacement text for each redacted value, at most 64 characters.
            redact_ssns: Whether to redact US Social Security numbers (off by default).
            redact_credit_cards: Whether to redact payment card numbers (off by default).
            redact_ipv4: Whether to redact IPv4 addresses (off by default).

        Returns:
            {"redacted_text": the text with each value replaced, "redactions":
            [{"type": "email"|"phone"|"ssn"|"credit_card"|"ipv4", "count": n}, ...]}
            listing only the types found, in that order. A longer text or replacement is an
            input error, and so is a replacement that would make the redacted text longer
            than 10,000,000 characters.
        """
        if len(text) > MAX_TEXT_CHARS:
            raise ToolInputError.for_field(
                "text", f"text is {len(text)} characters; at most {MAX_TEXT_CHARS} are accepted"
            )
        wanted = {
            "email": redact_emails,
            "phone": redact_phones,
            "ssn": redact_ssns,
            "credit_card": redact_credit_cards,
            "ipv4": redact_ipv4,
        }
        findings = find_pii(text, tuple(kind for kind in PII_TYPES if wanted[kind]))
        _check_redacted_length(text, findings, replacement)
        counts = dict.fromkeys(PII_TYPES, 0)
        pieces: list[str] = []
        cursor = 0
        for finding in findings:
            pieces += (text[cursor : finding["start"]], replacement)
            cursor = finding["end"]
            counts[finding["type"]] += 1
        pieces.append(text[cursor:])
        # Dict literals: calling a TypedDict class to build one is several times slower.
        result: Redacted = {
            "redacted_text": "".join(pieces),
            "redactions": [{"type": kind, "count": count} for kind, count in counts.items() if count],
        }
        return result


def _check_redacted_length(text: str, findings: list[Finding], replacement: str) -> None:
    """Refuse, before building it, a redacted text longer than MAX_REDACTED_CHARS."""
    removed = sum(finding["end"] - finding["start"] for finding in findings)
    length = len(text) - removed + len(findings) * len(replacement)
    if length > MAX_REDACTED_CHARS:
        raise ToolInputError.for_field(
            "replacement",
            f"the redacted text would be {length:,} characters ({len(findings):,} values, each replaced by "
            f"{len(replacement)} characters); at most {MAX_REDACTED_CHARS:,} are returned",
            expected="a shorter replacement",
        )
