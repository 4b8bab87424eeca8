"""Who the call being run is for, as a context variable: set by ``Runtime.call``, read by shared resources.

A resource several callers share (the sandbox's container pool) gives each caller a
share of it; the caller is never an argument a tool could forge, so the runtime, which
authenticated it, names it here for the length of the call. Outside a call it is None.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["CURRENT_CALLER"]

CURRENT_CALLER: ContextVar[str | None] = ContextVar("colony_current_caller", default=None)
