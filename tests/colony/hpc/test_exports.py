"""The public surface of colony.hpc is pinned."""

import colony.hpc


def test_exported_names() -> None:
    assert sorted(colony.hpc.__all__) == [
        "ArtifactDescriptor",
        "HPCClient",
        "HPCClientConfig",
        "HPCJob",
        "HPCLimits",
        "HPCSettings",
        "HPCToolCapability",
        "InProcessJobRunner",
        "InputArtifact",
        "InputArtifactDescriptor",
        "JobCreated",
        "JobRecord",
        "JobRequest",
        "JobRunner",
        "JobState",
        "JobStatus",
        "OutputArtifact",
        "PollPolicy",
        "UploadTarget",
        "create_app",
        "default_job_runner",
        "job_name",
        "poll_until_done",
        "set_default_job_runner",
        "upload_inputs",
    ]
    for name in colony.hpc.__all__:
        assert getattr(colony.hpc, name) is not None


def test_importing_colony_hpc_does_not_import_flows_tasks_or_blocks() -> None:
    import subprocess
    import sys

    code = (
        "import sys, colony.hpc\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('flows', 'tasks', 'blocks', 'tools')))"
    )
    answer = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert answer.stdout.strip() == "[]"
