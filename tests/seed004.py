"""Seed 004's worked examples, as data: the call and what the seed says comes back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ARTICLE = """
Artificial intelligence is transforming how businesses operate.
Machine learning algorithms can analyze vast amounts of data quickly.
Companies are using AI to improve customer service and operations.
However, ethical considerations around AI deployment remain important.
Privacy concerns and algorithmic bias need to be addressed.
The future of AI depends on responsible development practices.
Regulations are being developed to ensure AI safety.
"""
CLIMATE = """
    Climate change is one of the biggest challenges facing humanity.
    Rising temperatures are causing extreme weather events.
    Scientists agree that immediate action is needed.
    Renewable energy adoption is increasing globally.
    However, more investment is required to meet climate goals.
    """
NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "user": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "contacts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string", "enum": ["email", "phone"]},
                            "value": {"type": "string"},
                        },
                        "required": ["type", "value"],
                    },
                },
            },
            "required": ["name"],
        }
    },
    "required": ["user"],
}


@dataclass(frozen=True)
class SeedExample:
    """One example: the tool, its arguments, and the fields of the result the seed states."""

    id: str
    tool: str
    arguments: dict[str, Any]
    expected: dict[str, Any]

    def check(self, result: Any) -> None:
        """Assert ``result`` has every value the seed states."""
        assert isinstance(result, dict), result
        for key, value in self.expected.items():
            assert result[key] == value, (self.id, key, result[key], value)


CUSTOMER_REPORT = """
    Customer report:
    Name: John Doe
    Email: john.doe@customer.com
    Phone: (555) 123-4567
    Alt Email: j.doe@gmail.com
    Mobile: 555.987.6543
    """

EXAMPLES = [
    SeedExample(
        "unit_convert-1",
        "unit_convert",
        {"value": 10, "from_unit": "miles", "to_unit": "km"},
        {"value": 16.0934, "from_unit": "miles", "to_unit": "km"},
    ),
    SeedExample(
        "unit_convert-2",
        "unit_convert",
        {"value": 100, "from_unit": "celsius", "to_unit": "fahrenheit"},
        {"value": 212.0},
    ),
    SeedExample(
        "unit_convert-3", "unit_convert", {"value": 150, "from_unit": "pounds", "to_unit": "kg"}, {"value": 68.0388}
    ),
    SeedExample(
        "unit_convert-4", "unit_convert", {"value": 100, "from_unit": "feet", "to_unit": "meters"}, {"value": 30.48}
    ),
    SeedExample(
        "pii_redact-1",
        "pii_redact",
        {"text": "Contact support at admin@company.com for assistance"},
        {
            "redacted_text": "Contact support at [REDACTED] for assistance",
            "redactions": [{"type": "email", "count": 1}],
        },
    ),
    SeedExample(
        "pii_redact-2",
        "pii_redact",
        {"text": "Call me at 555-123-4567 or (555) 987-6543"},
        {"redacted_text": "Call me at [REDACTED] or [REDACTED]", "redactions": [{"type": "phone", "count": 2}]},
    ),
    SeedExample(
        "pii_redact-3",
        "pii_redact",
        {"text": "Email: john@example.com, Phone: 555-1234", "replacement": "***HIDDEN***"},
        {"redacted_text": "Email: ***HIDDEN***, Phone: ***HIDDEN***"},
    ),
    SeedExample(
        "pii_redact-4",
        "pii_redact",
        {"text": "Contact: admin@example.com or 555-123-4567", "redact_emails": True, "redact_phones": False},
        {"redacted_text": "Contact: [REDACTED] or 555-123-4567"},
    ),
    SeedExample(
        "pii_redact-5",
        "pii_redact",
        {"text": CUSTOMER_REPORT},
        {"redactions": [{"type": "email", "count": 2}, {"type": "phone", "count": 2}]},
    ),
    SeedExample(
        "jsonschema_validate-1",
        "jsonschema_validate",
        {
            "schema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "number", "minimum": 0},
                    "email": {"type": "string", "format": "email"},
                },
                "required": ["name", "age"],
            },
            "data": {"name": "Alice", "age": 30, "email": "alice@example.com"},
        },
        {"valid": True, "errors": []},
    ),
    SeedExample(
        "jsonschema_validate-2",
        "jsonschema_validate",
        {
            "schema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                "required": ["name", "email"],
            },
            "data": {"name": "Bob"},
        },
        {"valid": False, "errors": ["'email' is a required property"]},
    ),
    SeedExample(
        "jsonschema_validate-3",
        "jsonschema_validate",
        {
            "schema": {"type": "object", "properties": {"count": {"type": "integer"}, "price": {"type": "number"}}},
            "data": {"count": "not_a_number", "price": 29.99},
        },
        {"valid": False, "errors": ["'not_a_number' is not of type 'integer'"]},
    ),
    SeedExample(
        "jsonschema_validate-4",
        "jsonschema_validate",
        {
            "schema": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                    "required": ["id", "name"],
                },
                "minItems": 1,
            },
            "data": [{"id": 1, "name": "Item 1"}, {"id": 2, "name": "Item 2"}],
        },
        {"valid": True},
    ),
    SeedExample(
        "jsonschema_validate-5",
        "jsonschema_validate",
        {
            "schema": {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["pending", "active", "completed"]}},
                "required": ["status"],
            },
            "data": {"status": "invalid_status"},
        },
        {"valid": False, "errors": ["'invalid_status' is not one of ['pending', 'active', 'completed']"]},
    ),
    SeedExample(
        "jsonschema_validate-6",
        "jsonschema_validate",
        {
            "schema": NESTED_SCHEMA,
            "data": {
                "user": {
                    "name": "Alice",
                    "contacts": [
                        {"type": "email", "value": "alice@example.com"},
                        {"type": "phone", "value": "555-1234"},
                    ],
                }
            },
        },
        {"valid": True, "errors": []},
    ),
    SeedExample(
        "doc_summarize-1",
        "doc_summarize",
        {"text": ARTICLE, "max_sentences": 3},
        {"original_sentences": 7, "summary_sentences": 3},
    ),
    SeedExample(
        "doc_summarize-2",
        "doc_summarize",
        {
            "text": (
                "The quick brown fox jumps over the lazy dog. This is a test sentence. Another sentence for testing."
            ),
            "max_sentences": 2,
        },
        {
            "summary": "The quick brown fox jumps over the lazy dog. This is a test sentence.",
            "original_sentences": 3,
            "summary_sentences": 2,
            "method": "extractive-frequency",
        },
    ),
    SeedExample(
        "doc_summarize-3",
        "doc_summarize",
        {"text": CLIMATE, "max_sentences": 1},
        {"original_sentences": 5, "summary_sentences": 1},
    ),
    SeedExample(
        "doc_summarize-4",
        "doc_summarize",
        {"text": "This is a short text.", "max_sentences": 5},
        {"summary": "This is a short text.", "original_sentences": 1, "summary_sentences": 1},
    ),
]
BAD_UNIT = (
    "unit_convert",
    {"value": 10, "from_unit": "invalid_unit", "to_unit": "km"},
    "Unsupported unit: invalid_unit",
)
