"""The kernel's steps as Prefect tasks: propose, record, tick, pruning report.

Each task takes the ``KernelSettings`` to run against (the ``kernel`` part of
``blocks.load_settings()``) and reuses one ``ColonyKernel`` per distinct settings in the process. A store failure the
kernel marks ``retryable`` (a dropped database connection) is retried; a refused or invalid
request is not. ``propose`` is cached for the flow run in Colony's result storage (as JSON),
so a suspended flow that restarts after a person's decision, on any worker, sees the verdict
it was given instead of asking the gate again. The cached verdict never holds the signed
authorization: ``authorize`` asks the kernel for it again when the action is about to run.
"""

from __future__ import annotations

import threading
from typing import Any

from prefect import task
from prefect.cache_policies import INPUTS, NO_CACHE, RUN_ID

from colony.errors import ActionRecordedError, AttestationError
from colony.kernel import (
    ColonyKernel,
    ColonyStatus,
    ConsequenceKind,
    Decision,
    GateVerdict,
    KernelSettings,
    OutcomeRecord,
    ProposeActionRequest,
    PruningReport,
    RecordOutcomeRequest,
    Reporter,
)
from tasks.policy import retry_condition_for
from tasks.storage import RESULT_SERIALIZER, result_storage

__all__ = ["authorize", "kernel_for", "propose", "prune_report", "record", "status", "tick"]

_kernels: dict[str, ColonyKernel] = {}
_lock = threading.Lock()
_RETRY: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": [0.5, 1.0],
    "retry_jitter_factor": 0.5,
    "retry_condition_fn": retry_condition_for(()),
}


def kernel_for(settings: KernelSettings | None = None) -> ColonyKernel:
    """The process's kernel for ``settings`` (the environment's when omitted)."""
    settings = settings or KernelSettings()
    key = settings.model_dump_json() + repr(
        settings.attestation_secret.get_secret_value() if settings.attestation_secret else None
    )
    with _lock:
        if key not in _kernels:
            _kernels[key] = ColonyKernel(settings)
        return _kernels[key]


@task(
    name="colony.propose",
    tags={"colony", "kernel"},
    cache_policy=RUN_ID + INPUTS - "settings",
    persist_result=True,
    result_serializer=RESULT_SERIALIZER,
    **_RETRY,
)
def _propose(request: ProposeActionRequest, settings: KernelSettings | None = None) -> GateVerdict:
    """Ask the gate for a verdict on a proposal; the result kept is the verdict without its token."""
    return kernel_for(settings).propose_action(request).model_copy(update={"authorization": None})


def propose(request: ProposeActionRequest, settings: KernelSettings | None = None) -> GateVerdict:
    """The gate's verdict on ``request`` for this flow run (cached in Colony's result storage), without its token."""
    return _propose.with_options(result_storage=result_storage())(request, settings)


def authorize(
    verdict: GateVerdict, request: ProposeActionRequest, settings: KernelSettings | None = None
) -> GateVerdict:
    """``verdict`` with the signed authorization the kernel issued for it, read again from the kernel.

    Not a task: a task's result may be persisted, and a stored token could be replayed. A run
    retried after a crash that came after its record gets ActionRecordedError: the action ran
    and is recorded, so nothing runs or is recorded twice and the run reports that outcome.
    """
    if verdict.decision is not Decision.EXECUTE or verdict.proposal_id is None:
        return verdict
    kernel = kernel_for(settings)
    try:
        token = kernel.authorization_for(verdict.proposal_id, request)
    except AttestationError:
        recorded = kernel.consequence_of(verdict.proposal_id)
        if recorded is None or recorded.kind is not ConsequenceKind.OUTCOME:
            raise
        raise ActionRecordedError(
            f"proposal {verdict.proposal_id} was executed and its outcome recorded "
            f"(consequence {recorded.consequence_id}) before this run was interrupted",
            consequence_id=recorded.consequence_id,
        ) from None
    return verdict.model_copy(update={"authorization": token})


@task(name="colony.record", tags={"colony", "kernel"}, cache_policy=NO_CACHE, **_RETRY)
def record(
    request: RecordOutcomeRequest,
    authorization: str | None = None,
    settings: KernelSettings | None = None,
    reported_by: Reporter = Reporter.AGENT,
) -> OutcomeRecord:
    """Record what an action did, attested by the EXECUTE verdict's authorization when given.

    A flow in an agent's code reports on its own work: by default the agent's word, kept but
    raising no trust. Code that runs the action itself, or a person's review, says so.
    """
    return kernel_for(settings).record_outcome(request, authorization=authorization, reported_by=reported_by)


@task(name="colony.tick", tags={"colony", "kernel"}, cache_policy=NO_CACHE, **_RETRY)
def tick(settings: KernelSettings | None = None, key: str | None = None) -> ColonyStatus:
    """Advance the colony one tick (evaporation, expiry) and return its status; once per ``key``."""
    return kernel_for(settings).tick(key=key)


@task(name="colony.status", tags={"colony", "kernel"}, cache_policy=NO_CACHE, **_RETRY)
def status(settings: KernelSettings | None = None) -> ColonyStatus:
    """The colony's status without advancing it."""
    return kernel_for(settings).status()


@task(name="colony.pruning-report", tags={"colony", "kernel"}, cache_policy=NO_CACHE, **_RETRY)
def prune_report(settings: KernelSettings | None = None) -> PruningReport:
    """The pruning daemon's advisory report."""
    return kernel_for(settings).pruning_report()
