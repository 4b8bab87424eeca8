"""The HPC tasks' retry rule and progress keys."""

from __future__ import annotations

import pytest
from prefect.states import Completed, Failed

from colony.errors import AWSError, HPCLimitError, HPCRequestError, HPCUnavailableError
from tasks.hpc import only_retryable, progress_key


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (HPCUnavailableError("down"), True),
        (AWSError("slow down", code="SlowDown", retryable=True), True),
        (AWSError("no queue", code="ClientException"), False),
        (HPCLimitError(["max_vcpus: too many"]), False),
        (HPCRequestError("missing artifact", status_code=409), False),
        (KeyError("bug"), False),
    ],
)
def test_only_errors_marked_retryable_are_retried(error: Exception, retried: bool) -> None:
    assert only_retryable(None, None, Failed(data=error)) is retried


def test_a_completed_state_is_not_retried() -> None:
    assert only_retryable(None, None, Completed(data=1)) is False


def test_progress_keys_are_valid_artifact_keys() -> None:
    assert progress_key("Sweep_Job.7") == "hpc-sweep-job-7"
    assert len(progress_key("x" * 200)) == 64
