"""Which refusals lay a FAILURE trace at their target: an agent's first there in each window.

Seed 001 lays a FAILURE trace at a refused proposal's target, and the gate reads those traces
as pressure on every agent's proposals there. But a refusal says as much about the agent (a
new SANDBOX identity, a plan it wrote to fail) as about the target: one agent proposing in a
loop would raise the pressure for all, and have other agents' calls held or refused. Here
each agent's refusals at one target lay at most one trace per window, in this process (a
server's worker processes each keep their own count, so the bound is per process).
"""

from __future__ import annotations

import threading

__all__ = ["RefusalTraces"]


class RefusalTraces:
    """Remembers when each (agent, target) last laid a refusal's trace; a bounded table."""

    def __init__(self, window_seconds: float = 300.0, max_keys: int = 10_000) -> None:
        self.window_seconds = window_seconds
        self.max_keys = max_keys
        self._lock = threading.Lock()
        self._laid: dict[tuple[str, str], float] = {}

    def due(self, agent_id: str, target: str, now: float) -> bool:
        """Whether a refusal of ``agent_id`` at ``target`` now lays a trace."""
        with self._lock:
            last = self._laid.get((agent_id, target))
        return last is None or now - last >= self.window_seconds

    def laid(self, agent_id: str, target: str, now: float) -> None:
        """Note that a refusal's trace was laid (after its transaction committed)."""
        with self._lock:
            self._laid[(agent_id, target)] = now
            if len(self._laid) > self.max_keys:  # forget what is past its window; if still full, the oldest half
                self._laid = {key: at for key, at in self._laid.items() if now - at < self.window_seconds}
                if len(self._laid) > self.max_keys:
                    kept = sorted(self._laid.items(), key=lambda item: item[1])[len(self._laid) // 2 :]
                    self._laid = dict(kept)
