"""Refused calls at the gateway, counted for the audit log: 401 (no principal) and 429 (over a limit).

A 401 has no principal: it is counted as ``anonymous`` with the client's address (its
host: one key per source, not per connection). A 429 is counted with the principal
and the tool. 403s are counted where they are decided (``Runtime.call``, routing, the
approval API, the kernel tools). Counting is in memory; the runtime's
:class:`~colony.runtime.refusals.RefusalRecorder` aggregates them per kind and window, so a
caller hammering a limit costs the database two entries a minute, not one per request.
"""

from __future__ import annotations

from types import TracebackType

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.errors import RateLimitedError
from colony.runtime.principal import Principal
from colony.runtime.rate_limits import RateLimiter
from colony.runtime.refusals import ANONYMOUS, RefusalRecorder

__all__ = ["Admitted", "CountUnauthenticated"]


class CountUnauthenticated:
    """Count every 401 the app answers (whichever route refused the credential)."""

    def __init__(self, app: ASGIApp, refusals: RefusalRecorder) -> None:
        self.app = app
        self.refusals = refusals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = False

        async def watched(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused = True
            await send(message)

        await self.app(scope, receive, watched)
        if refused:
            client = scope.get("client")
            what = f"{scope['method']} {scope['path']}"
            error = "no bearer token, or one this gateway does not accept"
            self.refusals.note(ANONYMOUS, None, what, 401, error, client=client[0] if client else None)
            await self.refusals.flush_if_due()  # after the answer was sent


class Admitted:
    """Hold ``principal``'s permit for ``tool``; a refusal at the door (429) is counted, then raised.

    A class, not a generator-based context manager: it wraps every call on the hot path.
    """

    __slots__ = ("_limiter", "_on_behalf", "_principal", "_refusals", "_tool")

    def __init__(
        self,
        limiter: RateLimiter,
        refusals: RefusalRecorder,
        principal: Principal,
        tool: str,
        on_behalf: str | None = None,
    ) -> None:
        self._limiter = limiter
        self._refusals = refusals
        self._principal = principal.agent_id
        self._tool = tool
        self._on_behalf = on_behalf

    async def __aenter__(self) -> None:
        try:
            self._limiter.admit(self._principal, self._tool)
        except RateLimitedError as error:
            self._refusals.note(self._principal, self._on_behalf, f"call {self._tool}", 429, str(error))
            await self._refusals.flush_if_due()
            raise

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._limiter.release(self._principal, self._tool)
