"""What a class makes of each action, decided once: side effects, the gate, caching and retries."""

from __future__ import annotations

from tests.doubles import EchoToolDouble, IdempotentLedgerToolDouble, LedgerToolDouble, RandomToolDouble
from tools.fdtd_sweep import FdtdSweep
from tools.shell_exec import ShellExec
from tools.unit_convert import UnitConvert


def test_what_is_cached_and_what_is_retried() -> None:
    assert EchoToolDouble.actions()["echo"].cacheable and UnitConvert.actions()["convert_units"].cacheable
    assert not RandomToolDouble.actions()["echo"].cacheable
    assert not LedgerToolDouble.actions()["write_entry"].cacheable
    assert LedgerToolDouble.actions()["check_entry"].cacheable  # declared free of side effects
    assert not UnitConvert.actions()["check_preconditions"].cacheable  # a live report
    assert UnitConvert.actions()["convert_units"].retriable
    assert not LedgerToolDouble.actions()["write_entry"].retriable
    assert IdempotentLedgerToolDouble.actions()["write_entry"].retriable


def test_what_passes_the_gate() -> None:
    assert ShellExec.actions()["run_shell"].governed  # changes the world
    assert FdtdSweep.actions()[FdtdSweep.primary_action()].governed  # an HPC job costs, whatever it writes
    assert LedgerToolDouble.actions()["write_entry"].governed
    assert not LedgerToolDouble.actions()["check_entry"].governed  # declared a read
    assert not UnitConvert.actions()["convert_units"].governed
    for tool in (ShellExec, FdtdSweep, LedgerToolDouble):
        assert not tool.actions()["check_preconditions"].governed  # a read of the tool's own state


def test_each_subclass_decides_its_own_copies() -> None:
    assert RandomToolDouble.actions()["echo"] is not EchoToolDouble.actions()["echo"]
    assert EchoToolDouble.actions()["echo"].cacheable  # the subclass's answer is its own
