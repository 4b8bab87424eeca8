"""Hostile payloads stay inside the sandbox; each containment is asserted, and the container survives."""

from __future__ import annotations

import subprocess

from tests.colony.sandbox.conftest import TightShell, container_of, run


def test_runs_as_non_root(shared_shell: TightShell) -> None:
    result = run(shared_shell, "id -u; id -g")
    assert result["stdout"].split() == ["65534", "65534"]


def test_outbound_network_fails(shared_shell: TightShell) -> None:
    result = run(shared_shell, "nc -w 2 1.1.1.1 80 </dev/null; echo rc=$?; ls /sys/class/net")
    assert "Network is unreachable" in result["stderr"]
    assert "rc=1" in result["stdout"]
    assert result["stdout"].split()[-1] == "lo"  # the only interface


def test_writing_to_root_fails(shared_shell: TightShell) -> None:
    result = run(shared_shell, "echo owned > /owned; echo owned > /bin/owned; touch /etc/x")
    assert result["exit_code"] != 0
    assert result["stderr"].count("Read-only file system") == 3


def test_fork_bomb_hits_pids_limit_and_host_is_fine(shared_shell: TightShell) -> None:
    result = run(shared_shell, "bomb() { bomb | bomb & }; bomb; sleep 1")
    assert "can't fork" in result["stderr"] or "Resource temporarily unavailable" in result["stderr"]
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still start processes
    assert run(shared_shell, "echo fine")["stdout"] == "fine\n"


def test_memory_hog_is_killed(shared_shell: TightShell) -> None:
    result = run(shared_shell, "awk 'BEGIN { s = \"x\"; while (1) s = s s }'")
    assert result["exit_code"] == 137  # SIGKILL from the memory cgroup's OOM killer
    assert not result["timed_out"]
    assert run(shared_shell, "echo fine")["stdout"] == "fine\n"


def test_sleep_past_timeout_is_killed_and_next_call_works(shared_shell: TightShell) -> None:
    run(shared_shell, "true")
    before = container_of(shared_shell)
    result = run(shared_shell, "echo started; sleep 30")
    assert result["timed_out"]
    assert result["stdout"] == "started\n"
    assert result["duration_seconds"] < 15
    assert container_of(shared_shell) is None  # recycled, not left hanging
    after = run(shared_shell, "echo next")
    assert after["stdout"] == "next\n" and after["exit_code"] == 0
    assert container_of(shared_shell) not in (None, before)


def test_huge_output_is_truncated_with_a_marker(shared_shell: TightShell) -> None:
    result = run(shared_shell, "yes")
    assert result["stdout_truncated"]
    assert result["stdout"].endswith("[output truncated by the Colony sandbox at 65536 bytes; the run was stopped]\n")
    assert len(result["stdout"].encode()) < 65536 + 200
    assert result["exit_code"] == 137
    assert run(shared_shell, "echo fine")["stdout"] == "fine\n"


def test_a_call_cannot_see_what_the_last_one_left(shared_shell: TightShell) -> None:
    run(
        shared_shell,
        "echo secret > mine.txt; echo secret > /tmp/scratch; (sleep 20 &) ; echo ok",
        files={"in.txt": "x"},
    )
    result = run(
        shared_shell,
        "ls -A . /tmp; ps -o user,args | awk '$1 == 65534 && $2 == \"sleep\"' | wc -l; ls -A /work | wc -l",
    )
    assert "mine.txt" not in result["stdout"] and "scratch" not in result["stdout"]
    assert "in.txt" not in result["stdout"]
    lines = result["stdout"].split()
    assert lines[-2] == "0"  # the sleep the last call left running was killed
    assert lines[-1] == "1"  # only this call's own directory


def test_a_call_that_blocks_its_clean_up_gets_the_container_replaced(shared_shell: TightShell) -> None:
    run(shared_shell, "true")
    before = container_of(shared_shell)
    result = run(shared_shell, "mkdir -p locked/inner && touch locked/inner/f && chmod 000 locked; echo done")
    assert result["stdout"] == "done\n"
    assert container_of(shared_shell) is None  # could not be emptied, so it was removed
    assert run(shared_shell, "ls -A")["stdout"] == "out\n"
    assert container_of(shared_shell) != before
