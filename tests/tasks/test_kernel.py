"""The kernel's steps as tasks: one kernel per settings, store failures retried, bad input not."""

from __future__ import annotations

import pytest
from prefect import flow

from colony.errors import KernelStoreError
from colony.kernel import Decision, KernelSettings, ProposeActionRequest, RecordOutcomeRequest
from tasks.kernel import authorize, kernel_for, propose, record, tick
from tasks.policy import is_transient

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_propose_record_and_tick_run_as_tasks() -> None:
    settings = KernelSettings()
    kernel_for(settings).set_trust("eng", 0.8)

    @flow
    def lifecycle() -> tuple[Decision, bool, float, int]:
        proposal = ProposeActionRequest(
            agent_id="eng",
            action_type="read_config",
            target="pkg.config",
            rationale="Read the configuration to report the current settings",
            rollback_plan="nothing to undo",
            evidence='{"tests": ["t"]}',
        )
        cached = propose(proposal, settings)
        assert cached.authorization is None  # the kept verdict holds no token
        verdict = authorize(cached, proposal, settings)  # the kernel signs it again for the run
        outcome = record(
            RecordOutcomeRequest(
                agent_id="eng", action_type="read_config", target="pkg.config", actual_outcome="ok", tests_passed=True
            ),
            verdict.authorization,
            settings,
        )
        return verdict.decision, outcome.attested, outcome.trust_score, tick(settings).tick_count

    assert lifecycle() == (Decision.EXECUTE, True, 0.8, 1)  # its own word: kept, raising no trust


def test_the_same_settings_share_one_kernel() -> None:
    assert kernel_for(KernelSettings()) is kernel_for(KernelSettings())


def test_only_retryable_store_failures_are_transient() -> None:
    assert is_transient(KernelStoreError("database is locked", retryable=True))
    assert not is_transient(KernelStoreError("no such table"))
