"""pydantic-ai's own instrumentation, on Colony's provider: an agent's run, model requests and tool calls.

With it on, a tool call's Colony span (``execute_tool``, the gate, the record) nests under
pydantic-ai's span of the tool call, itself under the agent run: one trace per agent run.
"""

from __future__ import annotations

from typing import Any

from colony.telemetry.tracing import provider

__all__ = ["instrumentation"]


def instrumentation() -> list[Any]:
    """The pydantic-ai capabilities that trace an agent: none when tracing is off, else its Instrumentation.

    Message contents are left out (``include_content=False``): like a call's arguments, they may hold secrets.
    """
    exporting = provider()
    if exporting is None:
        return []
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    return [Instrumentation(InstrumentationSettings(tracer_provider=exporting, include_content=False))]
