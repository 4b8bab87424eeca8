"""Per-principal rate and concurrency limits, so one caller cannot monopolise a tool or the process.

Each call takes one token from two buckets, the principal's (every tool
together) and the principal's for that tool, and holds one of the tool's
concurrency slots while it runs. A call over any limit is refused at once with
``RateLimitedError`` naming when to retry; it neither waits nor spends a token.

    limiter = RateLimiter(RateLimitSettings.model_validate_json(text))
    async with limiter.acquire("token:3f2a...", "shell_exec"):
        ...  # run the call

The clock is injected so tests drive refills instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from colony.errors import RateLimitedError

__all__ = ["BUSY_RETRY_AFTER_SECONDS", "PrincipalLimit", "RateLimitSettings", "RateLimiter", "ToolLimit"]

BUSY_RETRY_AFTER_SECONDS = 1.0
"""What a call refused for concurrency is told to wait: a slot frees when a running call ends, at no known time."""

_SWEEP_ABOVE = 10_000


class PrincipalLimit(BaseModel):
    """One principal's calls to every tool together: a token bucket."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: float = Field(default=500, gt=0, le=1e6, description="Calls per second the bucket refills at.")
    burst: int = Field(
        default=1000, ge=1, le=10_000_000, description="The bucket's size: calls allowed at once after a quiet spell."
    )


class ToolLimit(BaseModel):
    """One principal's calls to one tool: a token bucket and a cap on calls running at once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: float = Field(default=100, gt=0, le=1e6, description="Calls per second the bucket refills at.")
    burst: int = Field(
        default=200, ge=1, le=10_000_000, description="The bucket's size: calls allowed at once after a quiet spell."
    )
    concurrency: int = Field(
        default=16, ge=1, le=100_000, description="Calls of this tool one principal may have running at once."
    )


class RateLimitSettings(BaseModel):
    """The limits, per principal and per principal x tool; a tool not named under ``tools`` gets ``default``.

    Each entry may name only the fields it changes: an entry under ``tools``
    takes the rest from ``default``, and ``default`` and ``principal`` from the
    built-in values. JSON, e.g. ``COLONY_GATEWAY_RATE_LIMITS``::

        {"default": {"rate": 50, "burst": 100, "concurrency": 8},
         "tools": {"shell_exec": {"rate": 2, "burst": 4, "concurrency": 1}}}
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    principal: PrincipalLimit = Field(
        default_factory=PrincipalLimit, description="Each principal's calls to every tool together."
    )
    default: ToolLimit = Field(default_factory=ToolLimit, description="Each principal's calls to any one tool.")
    tools: dict[str, ToolLimit] = Field(default_factory=dict, description="Tool name -> its own limits.")

    @model_validator(mode="before")
    @classmethod
    def _tools_inherit_default(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("tools"), dict):
            return data
        default = data.get("default", {})
        base = default.model_dump() if isinstance(default, BaseModel) else default
        if not isinstance(base, dict):
            return data
        tools = {name: {**base, **limit} if isinstance(limit, dict) else limit for name, limit in data["tools"].items()}
        return {**data, "tools": tools}

    def for_tool(self, tool: str) -> ToolLimit:
        """The limits that apply to ``tool``."""
        return self.tools.get(tool, self.default)


@dataclass(slots=True)
class _Bucket:
    rate: float
    burst: float
    tokens: float
    stamp: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self) -> float:
        """Seconds until one token is back (0 when one is here)."""
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate


class RateLimiter:
    """Token buckets per principal and per principal x tool, and a concurrency cap per principal x tool."""

    def __init__(self, settings: RateLimitSettings | None = None, *, clock: Callable[[], float] = time.monotonic):
        self.settings = settings or RateLimitSettings()
        self._clock = clock
        self._principals: dict[str, _Bucket] = {}
        self._tools: dict[tuple[str, str], _Bucket] = {}
        self._running: dict[tuple[str, str], int] = {}
        self._sweep_at = _SWEEP_ABOVE

    def acquire(self, principal: str, tool: str) -> _Permit:
        """An async context manager that admits one call of ``tool`` by ``principal``.

        Entering takes the tokens and a concurrency slot, or raises RateLimitedError;
        leaving frees the slot. Admission never awaits, so it is atomic on the event loop.
        """
        return _Permit(self, principal, tool)

    def running(self, principal: str, tool: str) -> int:
        """How many calls of ``tool`` by ``principal`` hold a slot now."""
        return self._running.get((principal, tool), 0)

    def admit(self, principal: str, tool: str) -> None:
        """Take ``principal``'s tokens and a concurrency slot for one call of ``tool``, or raise RateLimitedError."""
        limit = self.settings.for_tool(tool)
        key = (principal, tool)
        now = self._clock()
        running = self._running.get(key, 0)
        if running >= limit.concurrency:
            raise RateLimitedError(
                f"caller {principal!r} already has {running} call(s) of {tool} running, the most allowed at once; "
                "retry when one finishes",
                retry_after_seconds=BUSY_RETRY_AFTER_SECONDS,
            )
        overall = self._bucket(self._principals, principal, self.settings.principal, now)
        per_tool = self._bucket(self._tools, key, limit, now)
        if overall.tokens < 1 or per_tool.tokens < 1:
            wait = max(overall.wait(), per_tool.wait())
            which = (
                f"{tool} at {limit.rate:g} calls/s (burst {limit.burst})"
                if per_tool.tokens < 1
                else f"all tools together at {self.settings.principal.rate:g} calls/s "
                f"(burst {self.settings.principal.burst})"
            )
            raise RateLimitedError(
                f"caller {principal!r} is over its rate limit for {which}; retry in {wait:.2f} s",
                retry_after_seconds=wait,
            )
        overall.tokens -= 1
        per_tool.tokens -= 1
        self._running[key] = running + 1

    def release(self, principal: str, tool: str) -> None:
        """Free the concurrency slot an admitted call of ``tool`` held."""
        key = (principal, tool)
        left = self._running.get(key, 0) - 1
        if left > 0:
            self._running[key] = left
        else:
            self._running.pop(key, None)

    def _bucket(self, table: dict[Any, _Bucket], key: Any, limit: PrincipalLimit | ToolLimit, now: float) -> _Bucket:
        bucket = table.get(key)
        if bucket is None:
            if len(table) >= self._sweep_at:
                self._sweep(now)
            bucket = table[key] = _Bucket(rate=limit.rate, burst=limit.burst, tokens=limit.burst, stamp=now)
        else:
            bucket.refill(now)
        return bucket

    def _sweep(self, now: float) -> None:
        """Forget full, idle buckets (a fresh one is the same), so unseen names cannot grow the tables forever."""
        for principal, bucket in list(self._principals.items()):
            bucket.refill(now)
            if bucket.tokens >= bucket.burst:
                del self._principals[principal]
        for key, bucket in list(self._tools.items()):
            bucket.refill(now)
            if bucket.tokens >= bucket.burst and key not in self._running:
                del self._tools[key]
        self._sweep_at = max(_SWEEP_ABOVE, 2 * max(len(self._principals), len(self._tools)))


class _Permit:
    """One admitted call; see RateLimiter.acquire."""

    __slots__ = ("_limiter", "_principal", "_tool")

    def __init__(self, limiter: RateLimiter, principal: str, tool: str) -> None:
        self._limiter = limiter
        self._principal = principal
        self._tool = tool

    async def __aenter__(self) -> None:
        self._limiter.admit(self._principal, self._tool)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._limiter.release(self._principal, self._tool)
