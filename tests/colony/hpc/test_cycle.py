"""Polling with capped backoff on an injected clock, and deterministic job names."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony.errors import HPCJobFailedError, HPCTimeoutError
from colony.hpc import InputArtifact, JobState, JobStatus, PollPolicy, job_name, poll_until_done
from colony.spec import Determinism, ToolSpec


class SimulatedJob:
    """An HPC client double (a fake) whose job ends at a given simulated time."""

    def __init__(self, clock: list[float], ends_at: float, final: JobState = JobState.SUCCEEDED) -> None:
        self.clock, self.ends_at, self.final, self.polls = clock, ends_at, final, 0

    async def status(self, name: str) -> JobStatus:
        self.polls += 1
        state = self.final if self.clock[0] >= self.ends_at else JobState.RUNNING
        reason = "Essential container in task exited" if state is JobState.FAILED else ""
        tail = ["step 3: diverged"] if state is JobState.FAILED else []
        return JobStatus(name=name, state=state, status_reason=reason, log_tail=tail)


def simulated_time() -> tuple[list[float], object]:
    now = [0.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    return now, sleep


async def test_an_hour_long_job_is_polled_at_most_twenty_times() -> None:
    now, sleep = simulated_time()
    job = SimulatedJob(now, ends_at=3600)
    changes: list[str] = []

    async def on_change(status: JobStatus, elapsed: float) -> None:
        changes.append(f"{status.state.value}@{elapsed:.0f}")

    status = await poll_until_done(
        job,
        "j",
        timeout_seconds=7200,
        clock=lambda: now[0],
        sleep=sleep,
        on_change=on_change,  # type: ignore[arg-type]
    )
    assert status.state is JobState.SUCCEEDED
    assert job.polls <= 20
    assert changes[0] == "RUNNING@0" and changes[-1].startswith("SUCCEEDED@")
    assert now[0] - 3600 <= PollPolicy().max_seconds


def test_backoff_grows_and_is_capped() -> None:
    policy = PollPolicy(initial_seconds=5, factor=2, max_seconds=60)
    pauses = policy.pauses()
    assert [next(pauses) for _ in range(6)] == [5, 10, 20, 40, 60, 60]


async def test_a_job_that_outruns_its_budget_times_out() -> None:
    now, sleep = simulated_time()
    job = SimulatedJob(now, ends_at=10_000)
    with pytest.raises(HPCTimeoutError, match=r"still RUNNING after 600 s \(timeout 600 s\)"):
        await poll_until_done(job, "j", timeout_seconds=600, clock=lambda: now[0], sleep=sleep)  # type: ignore[arg-type]
    assert now[0] == 600


async def test_a_failed_job_raises_with_reason_and_log_tail() -> None:
    now, sleep = simulated_time()
    job = SimulatedJob(now, ends_at=30, final=JobState.FAILED)
    with pytest.raises(HPCJobFailedError) as caught:
        await poll_until_done(job, "j", timeout_seconds=600, clock=lambda: now[0], sleep=sleep)  # type: ignore[arg-type]
    assert caught.value.status_reason == "Essential container in task exited"
    assert caught.value.log_tail == ["step 3: diverged"]
    assert "step 3: diverged" in str(caught.value)


def _artifact(tmp_path: Path, text: str) -> InputArtifact:
    path = tmp_path / f"{abs(hash(text))}.json"
    path.write_text(text)
    return InputArtifact(key="deck.json", path=path)


def test_job_names_are_derived_from_the_call(tmp_path: Path) -> None:
    spec = ToolSpec(name="fdtd_sweep", capabilities=("run",))
    first = job_name(spec, {"steps": 10}, [_artifact(tmp_path, "a")])
    assert first == job_name(spec, {"steps": 10}, [_artifact(tmp_path, "a")])
    assert first.startswith("fdtd-sweep-") and len(first) <= 128
    assert first != job_name(spec, {"steps": 11}, [_artifact(tmp_path, "a")])
    assert first != job_name(spec, {"steps": 10}, [_artifact(tmp_path, "b")])
    assert first != job_name(spec.model_copy(update={"version": "1.0.1"}), {"steps": 10}, [_artifact(tmp_path, "a")])


def test_a_nondeterministic_tool_never_repeats_a_name(tmp_path: Path) -> None:
    spec = ToolSpec(name="noisy", capabilities=("run",), determinism=Determinism.NONDETERMINISTIC)
    assert job_name(spec, {}, []) != job_name(spec, {}, [])
