"""One validation run within its work budget, its runaway cases turned into refusals."""

from __future__ import annotations

from typing import Any, Literal

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from colony.schemas._budget import BudgetExhausted, RefCycle, start, stop
from colony.schemas._classes import RegexFormatRefused
from colony.schemas._limits import MAX_VALIDATION_STEPS, ValidationRefused, check_nesting
from colony.schemas._patterns import PatternError

__all__ = ["bounded_errors"]

_BUDGET_MESSAGES = {
    "data": "validating this data against this schema takes more than {steps:,} steps "
    "(the work grows with schema size times data size); validate smaller parts",
    "schema": "checking this schema against its draft's meta-schema takes more than {steps:,} steps; "
    "the schema is too large to check, split it",
}


def bounded_errors(
    validator: Validator,
    data: Any,
    *,
    max_errors: int,
    max_steps: int = MAX_VALIDATION_STEPS,
    subject: Literal["schema", "data"] = "data",
) -> list[ValidationError]:
    """The first ``max_errors`` errors of ``data``, found within ``max_steps`` steps of work.

    ``subject`` names what ``data`` is to the caller (a schema is checked as the
    meta-schema's data); refusals about the instance are about it.

    Raises:
        ValidationRefused: the data nests too deep; the work would pass ``max_steps``;
            the schema loops (``{"$ref": "#"}``) or nests deeper than Python recurses;
            a pattern cannot run in linear time.
    """
    check_nesting(data, subject)
    errors: list[ValidationError] = []
    run, token = start(max_steps)
    try:
        for error in validator.iter_errors(data):
            errors.append(error)
            if len(errors) >= max_errors:
                break
    except BudgetExhausted:
        raise ValidationRefused(subject, _BUDGET_MESSAGES[subject].format(steps=run.budget)) from None
    except RefCycle as error:
        raise ValidationRefused(
            "schema",
            f"{error.keyword} {error.reference!r} leads back to a schema already checking the same value, "
            'so validation would never end (like {"$ref": "#"})',
        ) from None
    except RecursionError:
        raise ValidationRefused(
            "schema", "validation nests deeper than the interpreter allows: too long a chain of $ref or applicators"
        ) from None
    except RegexFormatRefused as error:
        raise ValidationRefused(subject, f"format 'regex': {error}") from None
    except PatternError as error:
        raise ValidationRefused("schema", f"{error.keyword or 'pattern'} {error}") from None
    finally:
        stop(token)
    return errors
