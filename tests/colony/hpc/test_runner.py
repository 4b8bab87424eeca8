"""The JobRunner seam: the in-process default runs the whole cycle; a runner can be injected or installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony.errors import HPCRequestError
from colony.hpc import HPCJob, InProcessJobRunner, JobRunner, default_job_runner, set_default_job_runner
from colony.telemetry import EXECUTE, stage
from tests.colony.hpc.echo_tool import EchoJob, play_echo
from tests.services.hpc import HPCStack
from tests.services.otlp import FakeOtlpReceiver, flush


class RecordingJobRunner:
    """A runner double: records each job and answers with one output it writes itself."""

    def __init__(self, answer: str) -> None:
        self.answer, self.jobs = answer, []

    async def run(self, job: HPCJob) -> dict[str, str]:
        self.jobs.append(job)
        job.output_dir.mkdir(parents=True)
        (job.output_dir / "out.txt").write_text(self.answer)
        return {"out.txt": str(job.output_dir / "out.txt")}


@pytest.fixture
def restore_default() -> None:
    previous = set_default_job_runner(None)
    yield
    set_default_job_runner(previous)


def echo(stack: HPCStack, tmp_path: Path, runner: JobRunner | None = None) -> EchoJob:
    return EchoJob(client=stack.client, settings=stack.settings, workdir=tmp_path, runner=runner)


async def test_in_process_the_cycle_runs_and_a_repeat_is_a_cache_hit(hpc_stack: HPCStack, tmp_path: Path) -> None:
    name = play_echo(hpc_stack, tmp_path, "hello", "hello back")
    tool = echo(hpc_stack, tmp_path, InProcessJobRunner())
    assert await tool.invoke("run_echo", {"text": "hello"}) == "hello back"
    assert await tool.invoke("run_echo", {"text": "hello"}) == "hello back"
    (job,) = hpc_stack.batch_jobs(name)
    assert job["status"] == "SUCCEEDED"
    uploaded = hpc_stack.aws.client("s3").get_object(Bucket="colony-hpc", Key=hpc_stack.key(name, "inputs/in.txt"))
    assert uploaded["Body"].read() == b"hello"


async def test_the_default_is_in_process_and_can_be_replaced(
    restore_default: None, hpc_stack: HPCStack, tmp_path: Path
) -> None:
    assert isinstance(default_job_runner(), InProcessJobRunner)
    recording = RecordingJobRunner("recorded")
    previous = set_default_job_runner(recording)
    assert isinstance(previous, InProcessJobRunner) and default_job_runner() is recording
    assert await echo(hpc_stack, tmp_path).invoke("run_echo", {"text": "hi"}) == "recorded"
    (job,) = recording.jobs
    assert job.tool == "echo" and job.parameters == {"text": "hi"}
    assert job.client == hpc_stack.client.config
    assert [artifact.key for artifact in job.artifacts] == ["in.txt"]
    assert job.resources == EchoJob.spec.resource_requirements
    assert hpc_stack.batch_jobs(job.name) == []  # nothing reached Batch
    assert isinstance(set_default_job_runner(None), RecordingJobRunner)
    assert isinstance(default_job_runner(), InProcessJobRunner)


async def test_an_injected_runner_wins_over_the_default(
    restore_default: None, hpc_stack: HPCStack, tmp_path: Path
) -> None:
    installed, injected = RecordingJobRunner("installed"), RecordingJobRunner("injected")
    set_default_job_runner(installed)
    assert await echo(hpc_stack, tmp_path, injected).invoke("run_echo", {"text": "hi"}) == "injected"
    assert installed.jobs == [] and len(injected.jobs) == 1


def test_only_a_runner_can_be_installed(restore_default: None) -> None:
    with pytest.raises(TypeError, match=r"is not a JobRunner: it needs `async def run\(self, job: HPCJob\)"):
        set_default_job_runner(object())  # type: ignore[arg-type]
    assert isinstance(default_job_runner(), InProcessJobRunner)


async def test_an_output_key_outside_the_output_directory_is_refused(hpc_stack: HPCStack, tmp_path: Path) -> None:
    name = play_echo(hpc_stack, tmp_path, "escape", "fine")
    hpc_stack.put_output(name, "../../escaped.txt", b"owned")
    with pytest.raises(HPCRequestError, match=r"output key outside its output directory: '\.\./\.\./escaped\.txt'"):
        await echo(hpc_stack, tmp_path, InProcessJobRunner()).invoke("run_echo", {"text": "escape"})
    assert list(tmp_path.rglob("escaped.txt")) == []


async def test_the_execute_span_names_the_job_and_its_batch_job(
    traced_here: FakeOtlpReceiver, hpc_stack: HPCStack, tmp_path: Path
) -> None:
    name = play_echo(hpc_stack, tmp_path, "traced", "traced back")
    with stage(EXECUTE):
        assert await echo(hpc_stack, tmp_path, InProcessJobRunner()).invoke("run_echo", {"text": "traced"})
    flush()
    [span] = [s for s in traced_here.wait_for(lambda spans: bool(spans)) if s.name == "colony.execute"]
    (job,) = hpc_stack.batch_jobs(name)
    assert span.attributes["colony.hpc.job"] == name
    assert span.attributes["colony.hpc.batch_job_id"] == job["jobId"]
