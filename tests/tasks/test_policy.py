"""Which failures are transient."""

from __future__ import annotations

import httpx

from colony.errors import ToolExecutionError, ToolInputError
from tasks.policy import is_transient
from tests.doubles import BusyError


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
