"""Which failures are transient, and which actions may be cached or retried."""

from __future__ import annotations

import httpx

from colony.errors import ToolExecutionError, ToolInputError
from tasks.policy import cacheable, is_transient, retriable
from tests.doubles import BusyError, EchoToolDouble, IdempotentLedgerToolDouble, LedgerToolDouble, RandomToolDouble
from tools.unit_convert import UnitConvert


def test_transient_failures() -> None:
    assert is_transient(ConnectionResetError("reset"))
    assert is_transient(TimeoutError("slow"))
    assert is_transient(httpx.ConnectTimeout("slow"))
    assert is_transient(ToolExecutionError("restarting", retryable=True))
    assert is_transient(BusyError("busy"), (BusyError,))


def test_permanent_failures() -> None:
    assert not is_transient(ToolInputError("bad"))
    assert not is_transient(ToolExecutionError("corrupt"))
    assert not is_transient(BusyError("busy"))  # not declared by this tool
    assert not is_transient(ValueError("bad"))


def test_what_is_cached_and_what_is_retried() -> None:
    assert cacheable(EchoToolDouble, "echo") and cacheable(UnitConvert, "convert_units")
    assert not cacheable(RandomToolDouble, "echo")
    assert not cacheable(LedgerToolDouble, "write_entry")
    assert cacheable(LedgerToolDouble, "check_entry")  # declared free of side effects
    assert not cacheable(UnitConvert, "check_preconditions")  # a live report
    assert retriable(UnitConvert, "convert_units")
    assert not retriable(LedgerToolDouble, "write_entry")
    assert retriable(IdempotentLedgerToolDouble, "write_entry")
