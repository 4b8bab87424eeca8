"""Build tests/data/pii_corpus.jsonl: labelled snippets for measuring pii_redact.

Run ``python -m tests.data.make_pii_corpus`` to regenerate it. Each line is
``{"text": ..., "pii": [{"type": ..., "value": ...}, ...]}``; ``pii`` is empty
for a negative snippet. Values are generated from a fixed seed; negatives are
mostly near-misses: numbers and strings shaped almost like PII.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

CORPUS = Path(__file__).with_name("pii_corpus.jsonl")

FIRST = ["john", "mary", "j.doe", "a.smith", "li.wei", "o'neil", "sales", "support", "dev-ops", "x_ae"]
DOMAINS = ["example.com", "mail.example.org", "company.co.uk", "uni.edu", "startup.io", "gov.example.us"]
EMAIL_TEMPLATES = [
    "Contact {v} for details.",
    "Send the invoice to {v}",
    "<{v}>",
    "mailto:{v}",
    "From: Alice <{v}>, Subject: hello",
    "reach me at {v}.",
    "cc: {v}; bcc: nobody",
    "({v})",
]
PHONE_TEMPLATES = [
    "Call me at {v} tomorrow.",
    "Phone: {v}",
    "Mobile {v}, evenings only",
    "the hotline ({v}) is open",
    "Fax {v}.",
]
NUMBER_TEMPLATES = ["ID on file: {v}", "record {v} was updated", "value={v};", "{v}"]
IP_TEMPLATES = ["Server at {v} is down.", "ssh admin@{v}", "GET / from {v}", "allow {v}/32", "ip={v}"]


def luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    """A card-like number of ``length`` digits starting with ``prefix`` whose Luhn check passes."""
    body = prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix) - 1))
    for check in "0123456789":
        digits = body + check
        total = 0
        for position, character in enumerate(reversed(digits)):
            digit = int(character)
            if position % 2:
                digit = digit * 2 - 9 if digit > 4 else digit * 2
            total += digit
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable: one check digit always completes a Luhn number")


def group(digits: str, sizes: list[int], separator: str) -> str:
    parts, index = [], 0
    for size in sizes:
        parts.append(digits[index : index + size])
        index += size
    return separator.join(parts)


def positives(rng: random.Random) -> list[dict]:
    records = []

    def add(template: str, kind: str, value: str) -> None:
        records.append({"text": template.format(v=value), "pii": [{"type": kind, "value": value}]})

    for index in range(64):
        local = rng.choice(FIRST).replace("'", "") + rng.choice(["", str(rng.randint(1, 99)), "+news", ".work"])
        value = f"{local}@{rng.choice(DOMAINS)}"
        add(EMAIL_TEMPLATES[index % len(EMAIL_TEMPLATES)], "email", value.upper() if index % 9 == 0 else value)
    phone_forms = [
        "{a}-{b}-{c}",
        "{a}.{b}.{c}",
        "{a} {b} {c}",
        "({a}) {b}-{c}",
        "({a}){b}-{c}",
        "{a}{b}{c}",
        "{b}-{c}",
    ]
    for index in range(77):
        form = phone_forms[index % len(phone_forms)]
        value = form.format(a=rng.randint(201, 989), b=rng.randint(200, 999), c=f"{rng.randint(0, 9999):04d}")
        add(PHONE_TEMPLATES[index % len(PHONE_TEMPLATES)], "phone", value)
    for index in range(36):
        area = rng.choice([rng.randint(1, 665), rng.randint(667, 899)])
        separator = "-" if index % 4 else " "
        value = f"{area:03d}{separator}{rng.randint(1, 99):02d}{separator}{rng.randint(1, 9999):04d}"
        add(["SSN: {v}", "social security number {v} on file", "ssn={v}", "Her SSN is {v}."][index % 4], "ssn", value)
    brands = [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15), ("6011", 16), ("4", 13)]
    for index in range(40):
        prefix, length = brands[index % len(brands)]
        digits = luhn_complete(prefix, length, rng)
        style = index % 3
        if length == 15 and style:
            value = group(digits, [4, 6, 5], " -"[style - 1])
        elif length == 16 and style:
            value = group(digits, [4, 4, 4, 4], " -"[style - 1])
        else:
            value = digits
        template = ["Card: {v}", "paid with {v} yesterday", "cc {v} exp 04/27", "card number {v}."][index % 4]
        add(template, "credit_card", value)
    for index in range(36):
        value = ".".join(str(rng.choice([rng.randint(0, 255), 255, 0, 10, 192, 1])) for _ in range(4))
        add(IP_TEMPLATES[index % len(IP_TEMPLATES)], "ipv4", value)
    for _ in range(20):
        email = f"{rng.choice(FIRST).replace(chr(39), '')}@{rng.choice(DOMAINS)}"
        phone = f"{rng.randint(201, 989)}-{rng.randint(200, 999)}-{rng.randint(0, 9999):04d}"
        ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        records.append(
            {
                "text": f"Ticket: user {email} (tel {phone}) logged in from {ip}.",
                "pii": [
                    {"type": "email", "value": email},
                    {"type": "phone", "value": phone},
                    {"type": "ipv4", "value": ip},
                ],
            }
        )
    # PII a reader would redact that the tool's rules do not cover: measured misses.
    for text, kind, value in [
        ("Write to josé@example.com", "email", "josé@example.com"),
        ("Call 555.123-4567 after six", "phone", "555.123-4567"),
        ("Call 555 1234 now", "phone", "555 1234"),
        ("Phone: 1-555-123-4567", "phone", "1-555-123-4567"),
        ("SSN 123456789 on the form", "ssn", "123456789"),
        ("card 4111-1111 1111-1111 on file", "credit_card", "4111-1111 1111-1111"),
        ("US +1 (555) 123-4567", "phone", "(555) 123-4567"),
        ("Tel: 555-123-4567 ext. 89", "phone", "555-123-4567"),
        ("Mail first.last@example.com.au today", "email", "first.last@example.com.au"),
    ]:
        add(text.replace(value, "{v}"), kind, value)
    return records


def negatives(rng: random.Random) -> list[str]:
    texts = [
        "Write to jane at example dot com",
        "Follow @colony_dev for updates",
        "user@localhost cannot receive mail",
        "the email field reads 'name@' and nothing else",
        "a @ b.com is not an address",
        "Version 2.4.1 fixes the parser",
        "pi is roughly 3.14159265",
        "The call lasted 12:30:45",
        "Open 24/7, call 911 in an emergency",
        "Dial 1-800-FLOWERS to order",
        "It costs $1,234.56 plus tax",
        "Growth was 12.5% in 2023",
        "Coordinates 37.7749, -122.4194",
        "Room 101-B on floor 3",
        "Tracking 1Z999AA10123456784 shipped",
        "UUID 123e4567-e89b-12d3-a456-426614174000",
        "hash 0x1234567890abcdef",
        "ISBN 978-0-306-40615-7",
        "Order ORD-2024-000042 is ready",
        "Subnet 192.168.1 has 254 hosts",
        "The octets 256.100.1.1 are out of range",
        "Not an address: 999.999.999.999",
        "Padded 01.02.03.04 is not dotted decimal",
        "Five parts 1.2.3.4.5 is a version",
        "ratio 2:1:1, score 3-2",
        "Chapter 12.3.4 explains it",
    ]
    for _ in range(20):
        texts.append(f"Updated on {rng.randint(2000, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}.")
        texts.append(f"Due {rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/{rng.randint(2000, 2030)}")
    for _ in range(10):
        texts.append(f"ZIP {rng.randint(10000, 99999)}-{rng.randint(1000, 9999)}")
        texts.append(f"Order #{rng.randint(10000, 99999999)} shipped")
        texts.append(f"Invoice {rng.randint(100, 999)}-{rng.randint(10, 99)}-{rng.randint(100, 999)}")
        texts.append(f"{rng.randint(10, 99)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)} is a part number")
        texts.append(f"Lot {rng.randint(100, 999)}-{rng.randint(10, 99)}")
        texts.append(f"Serial {rng.randint(10**7, 10**8 - 1)}")
        texts.append(f"Account {rng.randint(10**8, 10**9 - 1)}")
        texts.append(f"Reference {rng.randint(10**10, 10**11 - 1)}")
        texts.append(f"Total {rng.randint(100, 999)}.{rng.randint(1000, 9999)} kg")
    for area in ("000", "666", "900", "987"):
        texts.append(f"SSN {area}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)} is never issued")
    texts.append(f"SSN {rng.randint(100, 599)}-00-{rng.randint(1000, 9999)} has no group")
    texts.append(f"SSN {rng.randint(100, 599)}-{rng.randint(10, 99)}-0000 has no serial")
    for index in range(24):
        digits = luhn_complete(rng.choice(["4", "51", "6011"]), 16, rng)
        broken = digits[:-1] + str((int(digits[-1]) + 1 + index % 9) % 10)
        texts.append(f"Card {group(broken, [4, 4, 4, 4], ' ') if index % 2 else broken} was mistyped")
    for _ in range(8):
        digits = luhn_complete(rng.choice(["1", "7", "8", "9"]), 16, rng)
        texts.append(f"Barcode {digits}")
    for _ in range(20):
        digits = str(rng.randint(10**15, 10**16 - 1))
        texts.append(f"Shipment {digits} left the depot")
    for _ in range(6):
        release = f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}.{rng.randint(0, 99)}"
        texts.append(f"Release {release} is out")
        texts.append(f"icon@{rng.randint(2, 3)}x.png is the retina asset")
    return texts


def build() -> list[dict]:
    rng = random.Random(20261130)
    records = positives(rng) + [{"text": text, "pii": []} for text in negatives(rng)]
    for record in records:
        for item in record["pii"]:
            assert item["value"] in record["text"], record
    return records


def main() -> None:
    with CORPUS.open("w", encoding="utf-8") as stream:
        for record in build():
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
