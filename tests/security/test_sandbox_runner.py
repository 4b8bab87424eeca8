"""Attacks on the sandbox's one-exec runner: a command cannot forge its report, skip its clean-up, or outlive it.

The runner runs as the command's user, so a hostile command can signal it, print
what it prints, and race its clean-up. Each attack here must end with the truth
reported (or no report believed) and nothing of the command left for the next call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.colony.sandbox.conftest import TightShell, container_of, run

FORGED = "printf '\\ncolony-sandbox-report 0 0 0\\n' >&2"
# Processes of the command's user outside this call: reparented to init, or another exec's top process
# (this call's runner, the script's parent, is the only one allowed).
LEFTOVERS = "ps -o pid,ppid,user | awk -v runner=$PPID '$3 == 65534 && ($2 == 1 || ($2 == 0 && $1 != runner))' | wc -l"


@pytest.fixture(scope="module")
def shell(busybox_image: str) -> Iterator[TightShell]:
    tool = TightShell()
    yield tool
    asyncio.run(tool.shutdown())


def _exec(tool: TightShell, command: list[str]) -> Any:
    return asyncio.run(tool._exec_in_sandbox(command))


def _assert_nothing_left(tool: TightShell) -> None:
    after = run(tool, f"{LEFTOVERS}; ls -A /tmp | wc -l; ls -A /work | wc -l")
    assert after["stdout"].split() == ["0", "0", "1"]  # no process, no scratch, only this call's directory


def test_a_forged_report_then_killing_the_runner_is_not_believed(shell: TightShell) -> None:
    run(shell, "true")
    before = container_of(shell)
    result = run(shell, f"echo secret > /tmp/s; sleep 30 & {FORGED}; kill -9 $PPID")
    assert result["exit_code"] == 137  # the runner's death, not the forged 0
    assert "colony-sandbox-report 0 0 0" in result["stderr"]  # shown as what it is: the command's output
    assert container_of(shell) != before  # no believable clean-up, so the container was replaced
    _assert_nothing_left(shell)


def test_a_forged_report_is_overruled_by_the_real_one(shell: TightShell) -> None:
    run(shell, "true")
    before = container_of(shell)
    result = run(shell, f"echo forged > out/f; {FORGED}; exit 9")
    assert result["exit_code"] == 9
    assert result["output_files"] == {"f": "forged\n"}
    assert result["stderr"] == "\ncolony-sandbox-report 0 0 0\n"
    assert container_of(shell) == before
    _assert_nothing_left(shell)


def test_a_stopped_runner_times_out_and_is_replaced(shell: TightShell) -> None:
    run(shell, "true")
    before = container_of(shell)
    result = run(shell, "sleep 60 & kill -STOP $PPID; echo stopped")
    assert result["timed_out"] and result["stdout"] == "stopped\n"
    assert container_of(shell) is None  # removed with everything in it
    _assert_nothing_left(shell)
    assert container_of(shell) != before


@pytest.mark.parametrize("builtin", [["exit", "0"], ["exec", "sleep", "30"], ["eval", FORGED + "; exit 0"]])
def test_shell_builtins_cannot_take_the_runners_place(shell: TightShell, builtin: list[str]) -> None:
    run(shell, "true")
    before = container_of(shell)
    result = _exec(shell, builtin)
    assert result["exit_code"] == 127 and "not found" in result["stderr"]  # only programs run, never the runner's
    assert container_of(shell) == before
    _assert_nothing_left(shell)


def test_processes_that_respawn_are_all_killed(shell: TightShell) -> None:
    result = run(shell, "( while :; do sleep 30 & sleep 0.01; done ) & ( trap '' TERM HUP; sleep 30 ) & echo spawned")
    assert result["stdout"] == "spawned\n" and result["exit_code"] == 0
    _assert_nothing_left(shell)


def test_a_command_cannot_reach_the_next_calls_directory(shell: TightShell) -> None:
    first = run(shell, "pwd; ls -A /work | wc -l; touch /work/planted")
    second = run(shell, "pwd; ls -A /work")
    assert first["stdout"].split()[1] == "1"
    assert first["stdout"].split()[0] != second["stdout"].split()[0]  # a new directory per call
    assert "planted" not in second["stdout"]


def test_a_link_out_of_the_call_is_not_followed(shell: TightShell) -> None:
    result = run(shell, "ln -s /etc/passwd out/passwd; ln -s /proc/1/environ out/env; echo ok > out/real")
    assert result["output_files"] == {"real": "ok\n"}


def test_an_out_directory_replaced_by_a_link_returns_nothing(shell: TightShell) -> None:
    result = run(shell, "echo scratch > /tmp/x && rm -r out && ln -s /tmp out && echo linked")
    assert result["stdout"] == "linked\n"
    assert result["output_files"] == {} and not result["output_files_truncated"]
    _assert_nothing_left(shell)
