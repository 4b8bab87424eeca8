"""The runtime every flow calls through: Runtime.call with Prefect's strategies plugged in.

The pipeline and the Governor are the same as on every other surface; here the
execute step is the action's task (``tasks.executor.TaskExecutor``), the gate is
asked through the ``colony.propose`` task (cached per flow run in Colony's result
storage, so a suspended run that resumes on any worker sees the verdict it was given;
the cache holds no token, the kernel signs an EXECUTE's authorization again when the
action runs), a HOLD shows its reviewer an artifact and waits for a person
(``flows.holds``, ``flows._approval``), and refusals and role changes are events.

A flow runs with the authority of whoever can reach the Prefect API: an operator
(``PREFECT_OPERATOR``), acting for the agent its request names, on Colony's settings as
every command loads them (``blocks.load_settings``): the kernel and policies they name, the MCP servers
they declare (else the home's file), and their sandbox roles and HPC service for the tools
the run creates.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import anyio.to_thread

from blocks.secrets import install_secret_resolver
from colony.catalog import registry_path
from colony.kernel import ColonyKernel
from colony.policy import PolicySettings
from colony.runtime import Acting, Catalog, HeldCall, HoldDecision, KernelProvider, Principal, Runtime
from colony.settings import ColonySettings, use_settings
from flows._approval import ApprovalInput, wait_for_approval
from flows._events import emit_gate_refused, emit_role_changed
from flows.holds import present_hold
from tasks.actions import POOL
from tasks.executor import TaskExecutor
from tasks.kernel import authorize, kernel_for, propose

__all__ = ["PREFECT_OPERATOR", "PrefectEvents", "flow_runtime"]

PREFECT_OPERATOR = Principal.of("prefect-operator", ["*"], operator=True)
_runtimes: dict[tuple[int, int, PolicySettings, int, int], Runtime] = {}
_catalogs: dict[tuple[Path, Path, str], Catalog] = {}
_lock = threading.Lock()


class PrefectEvents:
    """Refusals and role changes as Prefect events, for automations."""

    def gate_refused(self, acting: Acting, tool: str, action: str, verdict: dict[str, Any]) -> None:
        """Emit ``colony.gate.refused`` at the tool the call would have run."""
        emit_gate_refused(acting.agent_id, action, f"tool:{tool}", verdict)

    def role_changed(self, agent_id: str, before: str, after: str, trust: float) -> None:
        """Emit ``colony.agent.role-changed``."""
        emit_role_changed(agent_id, before, after, trust)


def _catalog(path: Path, settings: ColonySettings) -> Catalog:
    """One catalog per registry file, Colony home and MCP servers settings in the process; it reloads itself."""
    key = (path, settings.kernel.home.expanduser(), settings.upstream.model_dump_json())
    catalog = _catalogs.get(key)
    if catalog is None:
        catalog = _catalogs[key] = Catalog(path, upstream=settings.upstream_source())
    return catalog


def hold(kernel: ColonyKernel, held: HeldCall, timeout_seconds: int, poll_seconds: int) -> ApprovalInput | None:
    """Show the reviewer the held call, then wait for a decision until the request expires (at most the timeout).

    A run resumed after its wait shows nothing again: it reads the decision it was resumed with.
    """
    approval_id = held.verdict.approval_id
    assert approval_id is not None, "the gate holds a call only with an approval request"
    approval = kernel.get_approval(approval_id)
    wait = max(1, min(timeout_seconds, math.ceil(approval.expires_at - kernel.clock())))
    return wait_for_approval(wait, poll_seconds, lambda: present_hold(kernel, approval, held))


def flow_runtime(
    settings: ColonySettings,
    *,
    approval_timeout_seconds: int = 3600,
    poll_seconds: int = 5,
    pause_on_hold: bool = True,
) -> Runtime:
    """The process's runtime for ``settings``, sharing one catalog and one tool pool with every flow here.

    ``pause_on_hold=False`` answers a HOLD as HELD instead of pausing the run (``agent-run``
    ends and is resumed by a later run, holding no worker while a person decides).
    """
    install_secret_resolver()
    use_settings(settings)  # the sandbox roles and HPC service of the tools the shared pool creates
    kernel = kernel_for(settings.kernel)
    # One runtime per kernel and catalog (kernel_for keeps one per distinct settings, secret included).
    with _lock:
        catalog = _catalog(registry_path(), settings)
        key = (
            id(kernel),
            id(catalog),
            settings.policy,
            approval_timeout_seconds if pause_on_hold else -1,
            poll_seconds,
        )
        runtime = _runtimes.get(key)
        if runtime is None:

            async def on_hold(held: HeldCall) -> HoldDecision | None:
                decision = await anyio.to_thread.run_sync(hold, kernel, held, approval_timeout_seconds, poll_seconds)
                if decision is None:
                    return None
                # Whoever resumed the run reached the Prefect API, not Colony: no Colony principal decided,
                # so the record names the flow's operator and shows the name typed in the form beside it.
                return HoldDecision(
                    approved=decision.approve,
                    reviewer=PREFECT_OPERATOR.agent_id,
                    note=decision.note,
                    display_name=decision.reviewer,
                )

            kernel_settings = settings.kernel

            async def ask_gate(request: Any) -> Any:
                return await anyio.to_thread.run_sync(
                    lambda: authorize(propose(request, kernel_settings), request, kernel_settings)
                )

            runtime = _runtimes[key] = Runtime(
                catalog,
                pool=POOL,
                kernels=KernelProvider(kernel),
                executor=TaskExecutor(),
                on_hold=on_hold if pause_on_hold else None,
                events=PrefectEvents(),
                propose=ask_gate,
                policies=settings.policy,
            )
        return runtime
