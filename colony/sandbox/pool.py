"""ContainerPool: the running containers of one session, lent out one call at a time.

A container runs one call at a time (the clean-up after a call kills every
process of the command's user in it). A call takes an idle container of its
plan, the one used last, so sequential calls share one warm container; when
all are busy, another is started, up to the role's ``max_containers``, so a
slow call never holds up the next caller. Past that a call waits for one to be
returned, until its deadline. A container returned unhealthy (timed out,
interrupted, not emptied) is removed, never lent again.

Callers share the containers fairly: one caller (a principal, named by the runtime)
holds at most the plan's ``max_per_caller`` at once, and callers waiting are served
in turn, one call each, the caller served last going to the back: one agent's long
calls cannot take every container while another's short call times out.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docker import errors as docker_errors

from colony.errors import SandboxError
from colony.sandbox.interrupt import Interrupt
from colony.sandbox.ownership import owner_labels, reap_orphans
from colony.sandbox.policy import ContainerPlan
from colony.telemetry import metrics

__all__ = ["Box", "ContainerPool", "remove_container"]

_WAIT_SLICE_SECONDS = 0.05  # how often a call waiting for a busy plan checks its interrupt

logger = logging.getLogger(__name__)


@dataclass
class Box:
    """One running container and whether a call holds it."""

    id: str
    busy: bool = False
    caller: str | None = None  # who holds it while busy


@dataclass
class _Plans:
    """Every container a pool holds, per plan; what a session's finalizer removes."""

    boxes: dict[ContainerPlan, list[Box]] = field(default_factory=dict)
    starting: dict[ContainerPlan, int] = field(default_factory=dict)
    holding: dict[ContainerPlan, Counter[str | None]] = field(default_factory=dict)  # busy or starting, per caller
    waiting: dict[ContainerPlan, OrderedDict[str | None, deque[object]]] = field(default_factory=dict)  # turn order


class ContainerPool:
    """Lends each call a container of its plan; starts, reuses and removes them."""

    def __init__(self) -> None:
        self.plans = _Plans()
        self._changed = threading.Condition()
        self._shown = (0, 0)  # the busy and idle containers the metrics count for this pool

    def _after_change(self) -> None:
        """Wake the waiting calls and show the metrics what changed (under the lock, after every change)."""
        self._changed.notify_all()
        boxes = [box for held in self.plans.boxes.values() for box in held]
        busy = sum(1 for box in boxes if box.busy)
        now = (busy, len(boxes) - busy)
        if now != self._shown:
            metrics.sandbox_containers(now[0] - self._shown[0], now[1] - self._shown[1])
            self._shown = now

    def newest(self, plan: ContainerPlan) -> str | None:
        """The id of the container the next call of ``plan`` would get, if one is running."""
        with self._changed:
            boxes = self.plans.boxes.get(plan, [])
            idle = [box for box in boxes if not box.busy]
            chosen = idle or boxes
            return chosen[-1].id if chosen else None

    def ids(self, plan: ContainerPlan) -> list[str]:
        """The ids of every container of ``plan``, idle or busy."""
        with self._changed:
            return [box.id for box in self.plans.boxes.get(plan, [])]

    def acquire(
        self,
        client: Any,
        plan: ContainerPlan,
        *,
        deadline: float,
        interrupt: Interrupt | None,
        caller: str | None = None,
    ) -> Box:
        """A container of ``plan`` for one call: an idle one, else a new one, else the next one returned."""
        box = self._take_or_reserve(plan, deadline, interrupt, caller)
        while box is not None:
            if self._running(client, plan, box):
                return box
            self.release(client, plan, box, healthy=False)
            box = self._take_or_reserve(plan, deadline, interrupt, caller)
        return self._start(client, plan, caller)

    def release(self, client: Any, plan: ContainerPlan, box: Box, *, healthy: bool) -> None:
        """Give the container back after a call; an unhealthy one is removed."""
        with self._changed:
            self._give_back(plan, box)
            if not healthy:
                boxes = self.plans.boxes.get(plan, [])
                if box in boxes:
                    boxes.remove(box)
            self._after_change()
        if not healthy:
            remove_container(client, box.id)

    def remove_all(self, client: Any, on_error: Callable[[ContainerPlan, BaseException], None]) -> None:
        """Remove every container of every plan (busy ones too): the session is closing."""
        with self._changed:
            held = [(plan, box) for plan, boxes in self.plans.boxes.items() for box in boxes]
            self.plans.boxes.clear()
            self.plans.holding.clear()
            self._after_change()
        for plan, box in held:
            try:
                remove_container(client, box.id)
            except (docker_errors.DockerException, OSError) as error:
                on_error(plan, error)

    def _take_or_reserve(
        self, plan: ContainerPlan, deadline: float, interrupt: Interrupt | None, caller: str | None
    ) -> Box | None:
        """An idle box (now busy), or None with a start reserved for the caller; waits its turn while none is free."""
        ticket = object()
        with self._changed:
            waiting = self.plans.waiting.setdefault(plan, OrderedDict())
            waiting.setdefault(caller, deque()).append(ticket)
            try:
                while True:
                    boxes = self.plans.boxes.setdefault(plan, [])
                    holding = self.plans.holding.setdefault(plan, Counter())
                    idle = [box for box in boxes if not box.busy]
                    free = bool(idle) or len(boxes) + self.plans.starting.get(plan, 0) < plan.max_containers
                    if free and self._next(plan, waiting, holding) == (caller, ticket):
                        self._served(waiting, caller)
                        holding[caller] += 1
                        if idle:
                            idle[-1].busy, idle[-1].caller = True, caller
                            self._after_change()
                            return idle[-1]
                        self.plans.starting[plan] = self.plans.starting.get(plan, 0) + 1
                        return None
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or (interrupt is not None and interrupt.is_set()):
                        raise SandboxError(self._busy_message(plan, holding, caller), retryable=True)
                    self._changed.wait(min(remaining, _WAIT_SLICE_SECONDS))
            finally:
                queue = waiting.get(caller)
                if queue is not None and ticket in queue:  # gave up: the next in turn may go
                    queue.remove(ticket)
                    if not queue:
                        del waiting[caller]
                    self._after_change()

    def _next(
        self, plan: ContainerPlan, waiting: OrderedDict[str | None, deque[object]], holding: Counter[str | None]
    ) -> tuple[str | None, object] | None:
        """The first waiting call, in turn order, of a caller under its share (None: no caller may take one)."""
        for caller, queue in waiting.items():
            if caller is None or holding[caller] < plan.max_per_caller:
                return caller, queue[0]
        return None

    @staticmethod
    def _served(waiting: OrderedDict[str | None, deque[object]], caller: str | None) -> None:
        """The caller's first waiting call was served: it goes to the back of the turn, or leaves it."""
        queue = waiting[caller]
        queue.popleft()
        if queue:
            waiting.move_to_end(caller)
        else:
            del waiting[caller]

    def _give_back(self, plan: ContainerPlan, box: Box) -> None:
        """A lent box is no longer busy; its caller holds one fewer (under the lock)."""
        if box.busy:
            holding = self.plans.holding.setdefault(plan, Counter())
            holding[box.caller] -= 1
            if holding[box.caller] <= 0:
                del holding[box.caller]
        box.busy, box.caller = False, None

    @staticmethod
    def _busy_message(plan: ContainerPlan, holding: Counter[str | None], caller: str | None) -> str:
        if caller is not None and holding[caller] >= plan.max_per_caller:
            return (
                f"caller {caller!r} already holds {plan.max_per_caller} sandbox container(s) for role "
                f"{plan.role!r}, its share, and none came back before the call's deadline; try again when "
                "fewer of its calls are running"
            )
        return (
            f"all {plan.max_containers} sandbox containers for role {plan.role!r} stayed busy "
            "until the call's deadline; try again when fewer calls are running"
        )

    def _running(self, client: Any, plan: ContainerPlan, box: Box) -> bool:
        """Whether a lent container still runs; on an engine failure it is given back before raising."""
        try:
            return bool(client.api.inspect_container(box.id)["State"].get("Running"))
        except docker_errors.NotFound:
            return False
        except BaseException:
            with self._changed:
                self._give_back(plan, box)
                self._after_change()
            raise

    def _start(self, client: Any, plan: ContainerPlan, caller: str | None) -> Box:
        """Start a container for a reserved slot; the slot is given back whatever happens."""
        started = None
        try:
            try:
                reap_orphans(client)
            except docker_errors.APIError as error:  # an orphan that will not go is for `colony sandbox reap`
                logger.warning("orphaned sandbox containers left in place: %s", error)
            # create + start, never run: run() would try to pull a missing image from a registry.
            container = client.containers.create(labels=owner_labels(plan.role), **plan.create_kwargs())
            try:
                container.start()
            except BaseException:
                with contextlib.suppress(docker_errors.DockerException, OSError):
                    remove_container(client, str(container.id))
                raise
            started = Box(str(container.id), busy=True, caller=caller)
            return started
        finally:
            with self._changed:
                self.plans.starting[plan] -= 1
                if started is not None:
                    self.plans.boxes.setdefault(plan, []).append(started)
                else:  # the reserved slot is given back: the caller holds one fewer
                    self._give_back(plan, Box("", busy=True, caller=caller))
                self._after_change()


def remove_container(client: Any, container_id: str) -> None:
    """Force-remove a container and its volumes; one already gone is fine."""
    try:
        client.api.remove_container(container_id, force=True, v=True)
    except docker_errors.NotFound:
        return
