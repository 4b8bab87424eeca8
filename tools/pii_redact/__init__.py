"""pii_redact: regex redaction of emails, phone numbers and opt-in identifiers."""

from tools.pii_redact.capability import PiiRedact

__all__ = ["PiiRedact"]
