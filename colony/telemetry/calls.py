"""One call, observed: its span (when tracing is on), its stages, and its metrics.

``Runtime.call`` opens one ``observe_call`` around the whole call; each step inside it
(authorization, the gate, the approval, the execution, the record) is a ``stage``. A
stage is a child span when tracing is on and the call's span was sampled; otherwise it is
one shared object whose methods do nothing, except the execution stage, which also times
the action so the metrics can tell the tool's own time from the governance around it. An
unsampled call's stages would be unsampled children too: they are not made at all. With
tracing off, a call's observation only times and counts it (``_Counted``), and with the
metrics off too there is none.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from colony.telemetry import attributes as attrs
from colony.telemetry import metrics
from colony.telemetry.failures import SPAN_OPTIONS, mark_failed
from colony.telemetry.redaction import redacted
from colony.telemetry.tracing import STATE as _TRACING
from colony.telemetry.tracing import settings, tracer

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

__all__ = [
    "APPROVAL",
    "AUTHORIZE",
    "EXECUTE",
    "GATE",
    "RECORD",
    "CallObservation",
    "Stage",
    "note_execution",
    "observe_call",
    "resolved",
    "stage",
]

AUTHORIZE, GATE, APPROVAL, EXECUTE, RECORD = "authorize", "gate", "approval", "execute", "record"

_CURRENT: ContextVar[CallObservation | None] = ContextVar("colony_call_observation", default=None)
_HOLDS: OrderedDict[str, Any] = OrderedDict()  # approval id -> the span context of the call the gate held
_MAX_HOLDS = 4096


class Stage:
    """One step of a call: a span when tracing is on; ``note`` adds what the step learned to it."""

    __slots__ = ("_manager", "_started", "_tracer", "name", "span", "timed")

    def __init__(self, name: str, timed: bool = False, active: Tracer | None = None) -> None:
        self.name, self.timed, self._tracer = name, timed, active  # the tracer its span starts on, or None
        self.span: Any = None
        self._manager: Any = None
        self._started = 0.0

    def __enter__(self) -> Stage:
        if self._tracer is not None:
            self._manager = self._tracer.start_as_current_span(f"colony.{self.name}", **SPAN_OPTIONS)
            self.span = self._manager.__enter__()
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        if self.timed:
            observation = _CURRENT.get()
            if observation is not None:
                taken = time.perf_counter() - self._started
                observation.executed_seconds = (observation.executed_seconds or 0.0) + taken
        if self._manager is not None:
            if error is not None:
                mark_failed(self.span, error)
            self._manager.__exit__(kind, error, traceback)

    def note(self, values: dict[str, Any]) -> None:
        """Set span attributes (None values are left out)."""
        if self.span is not None:
            self.span.set_attributes({name: value for name, value in values.items() if value is not None})

    def verdict(self, verdict: Any) -> None:
        """The gate's verdict on this stage's span and the call's."""
        if self.span is not None:
            values = attrs.of_verdict(verdict)
            self.note(values)
            observation = _CURRENT.get()
            if observation is not None and observation.span is not None:
                observation.span.set_attributes(values)

    def approval(self, approval: Any) -> None:
        """The approval request on this stage's span; a HOLD is remembered, a resubmission links to it."""
        if self.span is None:
            return
        self.note(attrs.of_approval(approval))
        observation = _CURRENT.get()
        if observation is None or observation.span is None:
            return
        observation.span.set_attribute(attrs.APPROVAL_ID, approval.approval_id)
        held = _HOLDS.get(approval.approval_id)
        if held is None:
            _HOLDS[approval.approval_id] = observation.span.get_span_context()
            while len(_HOLDS) > _MAX_HOLDS:
                _HOLDS.popitem(last=False)
        elif held != observation.span.get_span_context():
            self.span.add_link(held, {attrs.LINK_KIND: "held_call"})
            observation.span.add_link(held, {attrs.LINK_KIND: "held_call"})


class _Untraced(Stage):
    """The stage of an untraced call: enters and leaves without a clock or a span."""

    def __enter__(self) -> Stage:
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        return None


_UNTRACED = _Untraced("untraced")


def stage(name: str, *, timed: bool = True) -> Stage:
    """The context manager of one step of the current call (see the module docstring).

    A governed call's execution is timed for the governance-cost histogram (``timed=False``: a pure call's is not).
    """
    active = _TRACING["tracer"]
    if active is None and not (timed and name == EXECUTE):
        return _UNTRACED  # the common case, decided without reading the call's observation
    observation = _CURRENT.get()
    timed = timed and name == EXECUTE and observation is not None
    if active is not None and observation is not None and not observation.sampled:
        active = None  # its span would be an unsampled child of an unsampled call
    if active is None and not timed:
        return _UNTRACED
    return Stage(name, timed, active)


class CallObservation:
    """The observation of one call through ``Runtime.call``: its span and, as it ends, its metrics."""

    __slots__ = (
        "_manager",
        "_outcome",
        "_started",
        "_token",
        "action",
        "arguments",
        "executed_seconds",
        "span",
        "tool",
    )

    def __init__(self, tool: str, action: str | None, arguments: Any) -> None:
        self.tool, self.arguments = tool, arguments
        self.action: str | None = None  # the tool and action count once resolved: a caller's names are unbounded
        self.span: Any = None
        self._outcome: Any = None
        self.executed_seconds: float | None = None  # a governed call's execution, once timed
        self._manager: Any = None
        self._started = 0.0
        self._token: Any = None

    def __enter__(self) -> CallObservation:
        active = tracer()
        if active is not None:
            self._manager = active.start_as_current_span(f"execute_tool {self.tool}", **SPAN_OPTIONS)
            self.span = self._manager.__enter__()
            self.span.set_attributes(attrs.of_call(self.tool))
            if settings().capture_bytes:
                self.span.set_attribute(attrs.ARGUMENTS, redacted(self.arguments, settings().capture_bytes))
        self._token = _CURRENT.set(self)
        self._started = time.perf_counter()
        return self

    @property
    def sampled(self) -> bool:
        """Whether the call's span is recorded (False when tracing is off or its trace was not sampled)."""
        return self.span is not None and self.span.is_recording()

    def resolved(self, tool: str, action: str) -> None:
        """The catalog tool and action the call resolved to."""
        self.tool, self.action = tool, action
        if self.span is not None:
            self.span.set_attribute(attrs.ACTION, action)

    def finish(self, outcome: Any) -> None:
        """Set what the call ended as on its span (the metrics are counted on exit)."""
        self._outcome = outcome
        if self.span is not None:
            self.span.set_attributes(attrs.of_outcome(outcome))
            self.span.set_attributes(attrs.of_acting(outcome.action, outcome.acting.agent_id, outcome.acting.acted_by))
            if settings().capture_bytes and outcome.result is not None:
                self.span.set_attribute(attrs.RESULT, redacted(outcome.result, settings().capture_bytes))

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        elapsed = time.perf_counter() - self._started
        _CURRENT.reset(self._token)
        if settings().metrics:
            tool = self.tool if self.action is not None else metrics.UNRESOLVED
            metrics.count_call(tool, self.action, self._outcome, error, elapsed, self.executed_seconds)
        if self._manager is not None:
            if error is not None:
                mark_failed(self.span, error)
            self._manager.__exit__(kind, error, traceback)


class _Counted(CallObservation):
    """The observation of an untraced call when metrics are on: its time and its counts, nothing else.

    The metrics' path on every call: no span to check, one context variable, one count.
    """

    __slots__ = ()

    def __init__(self, tool: str) -> None:
        self.tool, self.action, self._outcome, self.executed_seconds, self.span = tool, None, None, None, None

    def __enter__(self) -> CallObservation:
        self._token = _CURRENT.set(self)
        self._started = time.perf_counter()
        return self

    @property
    def sampled(self) -> bool:
        return False

    def resolved(self, tool: str, action: str) -> None:
        self.tool, self.action = tool, action

    def finish(self, outcome: Any) -> None:
        self._outcome = outcome

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        elapsed = time.perf_counter() - self._started
        _CURRENT.reset(self._token)
        tool = self.tool if self.action is not None else metrics.UNRESOLVED
        metrics.count_call(tool, self.action, self._outcome, error, elapsed, self.executed_seconds)


class _Unobserved(CallObservation):
    """The observation when neither tracing nor metrics are on: nothing is kept."""

    __slots__ = ()

    def __enter__(self) -> CallObservation:
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        return None

    def finish(self, outcome: Any) -> None:
        return None


_UNOBSERVED = _Unobserved("", None, None)


def observe_call(tool: str, action: str | None, arguments: Any) -> CallObservation:
    """The observation of one call (a context manager); ``tool`` and ``action`` as the caller named them."""
    if _TRACING["tracer"] is not None:
        return CallObservation(tool, action, arguments)
    return _Counted(tool) if _TRACING["settings"].metrics else _UNOBSERVED


def resolved(tool: str, action: str) -> None:
    """Tell the current call's observation what the call resolved to (see ``CallObservation.resolved``)."""
    observation = _CURRENT.get()
    if observation is not None:
        observation.resolved(tool, action)


def note_execution(values: dict[str, Any]) -> None:
    """Say where the action runs on the current span (the execute stage's): a container, a Batch job, a server.

    Called by the tools' own machinery (sandbox, HPC, upstream MCP) as the place becomes known;
    off, it returns at once.
    """
    if tracer() is None:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes({name: value for name, value in values.items() if value is not None})
