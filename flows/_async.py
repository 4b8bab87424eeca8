"""Running a synchronous flow from async agent code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread

__all__ = ["in_thread"]

P = ParamSpec("P")
R = TypeVar("R")


async def in_thread(flow: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run ``flow(*args, **kwargs)`` in a worker thread and await its result.

    ``result = await in_thread(tool_call, ToolCall(tool="unit_convert", arguments={...}))``
    """
    call: Callable[[], Any] = functools.partial(flow, *args, **kwargs)
    result: R = await anyio.to_thread.run_sync(call)
    return result
