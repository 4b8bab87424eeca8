"""A call's values as the policies see them: a caller's number is never rounded past what a policy compares."""

from __future__ import annotations

import pytest

from colony.errors import ToolInputError
from colony.policy.request import cedar_value
from colony.policy.schema import CedarType

DECIMAL: CedarType = {"type": "Extension", "name": "decimal"}


def test_a_number_a_policy_compares_is_shown_to_four_places() -> None:
    assert cedar_value(12.5, DECIMAL, "amount") == {"__extn": {"fn": "decimal", "arg": "12.5000"}}
    assert cedar_value(0.1 + 0.2, DECIMAL, "amount") == {"__extn": {"fn": "decimal", "arg": "0.3000"}}  # float noise


def test_a_fifth_decimal_place_is_refused_not_rounded_under_a_threshold() -> None:
    # Rounded to 100.0000, it passed `amount > decimal("100.0")` while the tool received 100.00004.
    with pytest.raises(ToolInputError, match="at most four decimal places") as raised:
        cedar_value(100.00004, DECIMAL, "amount")
    assert [error.field for error in raised.value.errors] == ["amount"]
