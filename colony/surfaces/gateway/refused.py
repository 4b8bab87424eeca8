"""Refused calls at the gateway, counted for the audit log: 401 (no principal).

A 401 has no principal: it is counted as ``anonymous`` with the client's address (its
host: one key per source, not per connection). 403s and the limits' 429s are counted
where they are decided (the steps of ``Runtime.call``, routing, the approval API).
Counting is in memory; the runtime's :class:`~colony.runtime.refusals.RefusalRecorder`
aggregates them per kind and window, so a caller hammering a limit costs the database
two entries a minute, not one per request.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.runtime.refusals import ANONYMOUS, RefusalRecorder

__all__ = ["CountUnauthenticated"]


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
