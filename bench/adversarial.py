"""Worst-case time of each catalog tool on adversarial input of the largest size the gateway accepts.

The gateway takes at most 256 KiB of tool arguments (COLONY_GATEWAY_MAX_ARGUMENT_BYTES).
For each tool, inputs built to be slow (or to amplify) at that size are run through the
full action wrapper (argument validation, the tool, the output cap), and each input's
best-of-3 wall and CPU time is printed, with the worst per tool next to its ordinary call
and to the gateway's 30 s call timeout. A refusal is an outcome too: how fast it comes
is part of the figure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from colony.capability import ToolCapability
from colony.errors import ColonyError
from tools.doc_summarize import DocSummarize
from tools.jsonschema_validate import JsonSchemaValidate
from tools.mager_sumner_shielding import MagerSumnerShieldingCapability
from tools.pii_redact import PiiRedact
from tools.unit_convert import UnitConvert

ARGUMENT_CAP = 256 * 1024
CALL_TIMEOUT = 30.0
EVIL = "a" * 30 + "!"


class Case(NamedTuple):
    """One adversarial input: which tool, what it is, and its arguments."""

    label: str
    arguments: dict[str, Any]


def fill(unit: str, reserve: int = 200) -> int:
    """How many times ``unit`` fits in the argument cap, leaving ``reserve`` bytes for the rest."""
    return (ARGUMENT_CAP - reserve) // len(json.dumps(unit)[1:-1])


def json_case(label: str, schema: Any, data: Any) -> Case:
    return Case(label, {"schema": schema, "data": data})


def unit_convert_cases() -> list[Case]:
    return [
        Case(
            "256 KiB unknown unit (echoed in the error)", {"value": 1.0, "from_unit": "k" * fill("k"), "to_unit": "m"}
        ),
        Case("256 KiB of non-ASCII unit", {"value": 1.0, "from_unit": "\u017f" * fill("\u017f"), "to_unit": "m"}),
        Case("overflowing value", {"value": 1.7e308, "from_unit": "miles", "to_unit": "mm"}),
    ]


def pii_redact_cases() -> list[Case]:
    everything = {"redact_ssns": True, "redact_credit_cards": True, "redact_ipv4": True}
    return [
        Case(
            "dense 6-char emails, 64-char replacement", {"text": "a@b.cc " * fill("a@b.cc "), "replacement": "R" * 64}
        ),
        Case(
            "dense 6-char emails, 64 4-byte characters as replacement",
            {"text": "a@b.cc " * fill("a@b.cc ", reserve=1000), "replacement": "\U0001f600" * 64},
        ),
        Case(
            "dense 7-digit phones, 64-char replacement",
            {"text": "555-1234 " * fill("555-1234 "), "replacement": "R" * 64},
        ),
        Case("one 256 KiB run of 1.1.1.1..., all detectors", {"text": "1." * fill("1."), **everything}),
        Case("one 256 KiB run of digits and dashes, all detectors", {"text": "12-" * fill("12-"), **everything}),
        Case(
            "dense Luhn-shaped card numbers, all detectors",
            {"text": "4111 1111 1111 1111 " * fill("4111 1111 1111 1111 "), **everything},
        ),
        Case("@ after every letter", {"text": "a@" * fill("a@")}),
        Case("one address with a 256 KiB local part", {"text": "a" * fill("a") + "@b.cc"}),
        Case("@ then dotted labels failing the TLD", {"text": "@" + "a.a1" * fill("a.a1")}),
        Case("256 KiB of escapes (6 bytes each in JSON)", {"text": "\x01" * fill("\x01")}),
    ]


def jsonschema_validate_cases() -> list[Case]:
    objects = [{"k": index} for index in range(fill('{"k": 10000}, '))]
    return [
        json_case("ReDoS ^(a|aa)+$ on 256 KiB", {"pattern": "^(a|aa)+$"}, "a" * fill("a") + "!"),
        json_case("ReDoS ^(a+)+$ on 30 a's and !", {"pattern": "^(a+)+$"}, EVIL),
        json_case("DFA blow-up [01]*1[01]{20}$ on 256 KiB", {"pattern": "[01]*1[01]{20}$"}, "01" * fill("01")),
        json_case(
            "patternProperties: 2000 patterns x 5000 keys",
            {"patternProperties": {f"^k{index}x": {} for index in range(2000)}, "additionalProperties": False},
            {f"k{index}": 0 for index in range(5000)},
        ),
        json_case("uniqueItems over 17,000 objects", {"uniqueItems": True}, objects),
        json_case("enum of 10,000 values x 20,000 items", {"items": {"enum": list(range(10_000))}}, [-1] * 20_000),
        json_case(
            "allOf of 2000 x 60,000 items (budget)", {"items": {"allOf": [{"type": "integer"}] * 2000}}, [0] * 60_000
        ),
        json_case("allOf of 65,000 {} (meta-schema budget)", {"allOf": [{}] * fill("{}, ")}, 1),
        json_case(
            "3000-link $ref chain",
            {"$defs": {f"d{index}": {"$ref": f"#/$defs/d{index + 1}"} for index in range(3000)}, "$ref": "#/$defs/d0"},
            1,
        ),
        json_case("$ref loop", {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}, 1),
        json_case("30 x 8 KiB patterns in data, format: regex", {"items": {"format": "regex"}}, ["(a|b)" * 1600] * 30),
        json_case(
            "every format on a 256 KiB string",
            {
                "allOf": [
                    {"format": name}
                    for name in ("email", "idn-email", "idn-hostname", "ipv4", "ipv6", "date", "date-time", "time")
                ]
                + [{"format": name} for name in ("json-pointer", "relative-json-pointer", "uuid")]
            },
            "/" + "a" * fill("a", reserve=600),
        ),
        json_case(
            "2000 relative-json-pointer checks of 170 KB of digits",
            {"allOf": [{"format": "relative-json-pointer"}] * 2000},
            "1" * 170_000,
        ),
        json_case(
            "100 errors quoting a 256 KiB value", {"allOf": [{"type": "integer"}] * 100}, "x" * fill("x", reserve=3000)
        ),
    ]


def distinct_words(limit: int) -> str:
    """Distinct words, space-separated, up to ``limit`` characters."""
    words: list[str] = []
    length = 0
    while length + 10 < limit:
        words.append(f"w{len(words)}")
        length += len(words[-1]) + 1
    return " ".join(words)


def doc_summarize_cases() -> list[Case]:
    return [
        Case("one 256 KiB sentence of distinct words", {"text": distinct_words(ARGUMENT_CAP - 200)}),
        Case("128 K one-letter sentences, all kept", {"text": "a. " * fill("a. "), "max_sentences": 10**9}),
        Case("256 KiB of punctuation", {"text": ".!? " * fill(".!? "), "max_sentences": 10**9}),
        Case("256 KiB of one word", {"text": "word " * fill("word ")}),
    ]


def shielding_cases() -> list[Case]:
    return [
        Case(
            "16 shells of extreme permeability and size",
            {
                "layers_mm": [1e300] * 16,
                "relative_permeability": [1e300] * 16,
                "inner_radius_mm": 1e-300,
                "gaps_mm": [1e300] * 15,
            },
        ),
        Case(
            "17 shells (refused)", {"layers_mm": [1.0] * 17, "relative_permeability": [1e5] * 17, "inner_radius_mm": 10}
        ),
    ]


TOOLS: list[tuple[type[ToolCapability], Case, Callable[[], list[Case]]]] = [
    (UnitConvert, Case("ordinary call", {"value": 10.0, "from_unit": "miles", "to_unit": "km"}), unit_convert_cases),
    (PiiRedact, Case("ordinary call", {"text": "Email: john@example.com, Phone: 555-1234"}), pii_redact_cases),
    (
        JsonSchemaValidate,
        json_case("ordinary call", {"type": "object", "required": ["a"]}, {"a": 1}),
        jsonschema_validate_cases,
    ),
    (
        DocSummarize,
        Case("ordinary call", {"text": "One sentence here. Another one there! A third?"}),
        doc_summarize_cases,
    ),
    (
        MagerSumnerShieldingCapability,
        Case("ordinary call", {"layers_mm": [1.0, 1.0], "relative_permeability": [2e4, 2e4], "inner_radius_mm": 100}),
        shielding_cases,
    ),
]


class Timed(NamedTuple):
    wall: float
    cpu: float
    outcome: str


def timed(tool: ToolCapability, arguments: dict[str, Any], repeats: int = 3) -> Timed:
    """Best-of-``repeats`` time of one call, and what it came to (a result's size, or the error)."""
    call = tool.bound_action(tool.primary_action())  # the validating wrapper, as every surface runs it
    best_wall = best_cpu = float("inf")
    outcome = ""
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            result = call(**arguments)
            outcome = f"result, {len(json.dumps(result, ensure_ascii=False).encode()):,} B"
        except ColonyError as error:
            fields = ",".join(problem.field for problem in getattr(error, "errors", []))
            outcome = f"{type(error).__name__}" + (f" on {fields}" if fields else "")
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return Timed(best_wall, best_cpu, outcome)


def show(seconds: float) -> str:
    return f"{seconds * 1e6:8.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:8.1f} ms"


def main() -> None:
    print(f"bench/adversarial.py: catalog tools on adversarial input up to {ARGUMENT_CAP:,} B of arguments")
    print("  (best of 3 per input; the worst input per tool is compared with its ordinary call)")
    summary = []
    for cls, ordinary, build in TOOLS:
        tool = cls()
        name = cls.spec.name
        base = timed(tool, ordinary.arguments, repeats=20)
        print(f"\n  {name}  {'args B':>9} {'wall':>11} {'cpu':>11}  outcome")
        print(f"    {ordinary.label:<52} {len(json.dumps(ordinary.arguments)):>9,} {show(base.wall)} {show(base.cpu)}")
        worst: tuple[Timed, str] | None = None
        for case in build():
            size = len(json.dumps(case.arguments))
            assert size <= ARGUMENT_CAP, f"{case.label}: {size} B is over the gateway's argument cap"
            result = timed(tool, case.arguments)
            print(f"    {case.label:<52} {size:>9,} {show(result.wall)} {show(result.cpu)}  {result.outcome}")
            if worst is None or result.cpu > worst[0].cpu:
                worst = (result, case.label)
        assert worst is not None
        summary.append((name, worst[1], worst[0], base))
    print("\n  worst case per tool (CPU time; wall includes other load on this machine)")
    print(f"    {'tool':<24} {'worst cpu':>11} {'x ordinary':>11} {'% of 30 s':>10}  input")
    for name, label, result, base in summary:
        ratio = result.cpu / base.cpu if base.cpu else float("inf")
        print(f"    {name:<24} {show(result.cpu)} {ratio:>10,.0f}x {result.cpu / CALL_TIMEOUT:>10.1%}  {label}")


if __name__ == "__main__":
    main()
