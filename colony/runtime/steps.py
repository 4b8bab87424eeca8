"""The steps every call passes through before its handler runs, in one ordered list.

    trace -> count refusals -> limit calls -> the handler

A step is an async callable ``step(call, proceed) -> CallOutcome`` that wraps the
rest: it may look at the call, refuse it (raise), pass it on with ``await proceed(call)``
and look at the outcome. ``call_steps`` lists them outermost first; a step joins with one
line there, at its place in the order:

- counting refusals is outermost, so a 403 any later step or the handler raises
  (``CapabilityDeniedError``, ``IdentityError``) is counted for the audit log;
- the rate and concurrency limits come next: a call over them is refused (429, counted)
  before anything of it is resolved, validated or run;
- tracing goes first, so it sees every call, refused ones too (only when tracing or
  metrics are configured: off, the step is not in the list and costs nothing);
- the operators' policy decision is the handler's, after the limits (a flood is
  refused before any decision is paid for): it judges the resolved tool, the checked
  arguments and the identity, so it sits right after them in ``Runtime._run``, before
  the gate.

The handler is what the call is: for a catalog tool ``Runtime._run`` (resolve, permit,
identity, validate, secrets, then the Governor or the executor); for a kernel or
approval tool served by MCP, that kernel operation. Every surface therefore holds its
calls to the same limits and counts its refusals the same way, in one place.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

from colony.errors import CapabilityDeniedError, IdentityError, RateLimitedError
from colony.runtime.call import CallOutcome, CallRequest
from colony.runtime.principal import Principal
from colony.runtime.rate_limits import RateLimiter
from colony.runtime.refusals import RefusalRecorder
from colony.telemetry import observe_call
from colony.telemetry import settings as telemetry_settings

if TYPE_CHECKING:
    from colony.runtime.governor import Verifier

__all__ = ["Call", "CountRefusals", "Handler", "LimitCalls", "Step", "TraceCalls", "call_steps", "chain"]


@dataclass(slots=True)
class Call:
    """One call in flight: what was asked, by whom, and what the steps learned about it.

    Attributes:
        request: The call as the surface received it (for a kernel operation: its name and
            arguments, ``agent_id`` the agent the operation names).
        principal: Who calls.
        verb: How the audit log names the kind of call: ``call`` (a catalog tool), ``mcp``
            (a kernel or approval tool over MCP).
        verify: The governed path's verification of the result (see the Governor).
        limited: The limits' refusal, when they refused it (a surface may answer it at the
            transport, as /mcp answers 429).
    """

    request: CallRequest
    principal: Principal
    verb: str = "call"
    verify: Verifier | None = None
    limited: RateLimitedError | None = None

    @property
    def what(self) -> str:
        """What the audit log says was asked: ``call shell_exec``, ``call repo.read``, ``mcp colony_status``."""
        action = self.request.action
        return f"{self.verb} {self.request.tool}" if action is None else f"{self.verb} {self.request.tool}.{action}"


Handler = Callable[[Call], Awaitable[CallOutcome]]


class Step(Protocol):
    """One step of the pipeline: refuse the call, or pass it to ``proceed`` (the rest) and return its outcome."""

    async def __call__(self, call: Call, proceed: Handler) -> CallOutcome: ...


class TraceCalls:
    """One span (and the metrics' counts) per call, around everything the call goes through."""

    __slots__ = ()

    async def __call__(self, call: Call, proceed: Handler) -> CallOutcome:
        request = call.request
        with observe_call(request.tool, request.action, request.arguments) as observed:
            outcome = await proceed(call)
            observed.finish(outcome)
            return outcome


class CountRefusals:
    """Count a permission or identity refusal (403) raised further in for the audit log, then let it go on."""

    __slots__ = ("refusals",)

    def __init__(self, refusals: RefusalRecorder) -> None:
        self.refusals = refusals

    async def __call__(self, call: Call, proceed: Handler) -> CallOutcome:
        try:
            return await proceed(call)
        except (CapabilityDeniedError, IdentityError) as error:
            self.refusals.note(call.principal.agent_id, call.request.agent_id, call.what, 403, str(error))
            await self.refusals.flush_if_due()
            raise


class LimitCalls:
    """Hold each call to its principal's rate and concurrency limits for the tool (429, counted, when over)."""

    __slots__ = ("limiter", "refusals")

    def __init__(self, limiter: RateLimiter, refusals: RefusalRecorder) -> None:
        self.limiter = limiter
        self.refusals = refusals

    async def __call__(self, call: Call, proceed: Handler) -> CallOutcome:
        who, tool = call.principal.agent_id, call.request.tool
        try:
            self.limiter.admit(who, tool)
        except RateLimitedError as error:
            call.limited = error
            self.refusals.note(who, call.request.agent_id, f"call {tool}", 429, str(error))
            await self.refusals.flush_if_due()
            raise
        try:
            return await proceed(call)
        finally:
            self.limiter.release(who, tool)


def call_steps(refusals: RefusalRecorder, limiter: RateLimiter | None) -> tuple[Step, ...]:
    """The steps of every call, outermost first (the order is the module docstring's)."""
    observed = telemetry_settings()
    steps: list[Step] = [TraceCalls()] if observed.tracing or observed.metrics else []
    steps.append(CountRefusals(refusals))
    if limiter is not None:
        steps.append(LimitCalls(limiter, refusals))
    return tuple(steps)


def chain(steps: Sequence[Step], handler: Handler) -> Handler:
    """``handler`` behind ``steps``: one callable that runs a call through each step, outermost first."""
    proceed = handler
    for step in reversed(steps):
        proceed = partial(step, proceed=proceed)
    return proceed
