"""Agents over a catalog of real tools plus a side-effecting double, their model scripted with FunctionModel."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from colony.kernel import ColonyKernel
from colony.runtime import Catalog, KernelProvider, Runtime

ENTRIES = {
    "unit_convert": ("convert_units", "tools.unit_convert.UnitConvert"),
    "pii_redact": ("redact_pii", "tools.pii_redact.PiiRedact"),
    "doc_summarize": ("summarize_text", "tools.doc_summarize.DocSummarize"),
    "ledger_double": ("write_entry", "tests.doubles.LedgerToolDouble"),
}

#: A governed call's case, strong enough for the gate at good trust.
CASE = {
    "rationale": "Write the redacted summary to the report file the reviewer asked for",
    "rollback_plan": "erase_entry removes the written file again",
    "evidence": {"tests": ["tests/colony/agents/test_running.py"]},
}

Step = Sequence[tuple[str, dict[str, Any]]] | str


class Script:
    """A FunctionModel that plays ``steps`` in order: each a list of tool calls, or the final text.

    ``seen`` keeps every request the model received, so a test reads what its tools answered.
    """

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.seen: list[ModelMessage] = []
        self.tools: list[Any] = []
        self.model = FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen = list(messages)
        self.tools = list(info.function_tools)
        step = self.steps.pop(0)
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(
            parts=[
                ToolCallPart(name, json.dumps(args), tool_call_id=f"call-{name}-{i}")
                for i, (name, args) in enumerate(step)
            ]
        )

    def returns(self) -> list[tuple[str, Any]]:
        """Every tool answer (or retry prompt) the model was sent, in order: (tool name, content)."""
        found = []
        for message in self.seen:
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if part.part_kind in ("tool-return", "retry-prompt"):
                        found.append((part.tool_name, part.content))
        return found


def write_registry(root: Path, names: Sequence[str]) -> Path:
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tools = [{"name": n, "capability": ENTRIES[n][0], "capability_fqn": ENTRIES[n][1]} for n in names]
    path.write_text(json.dumps({"version": 1, "tools": tools}))
    return path


def agent_runtime(root: Path, kernel: ColonyKernel) -> Runtime:
    """A runtime over ENTRIES (registry under ``root``) and ``kernel``."""
    return Runtime(Catalog(write_registry(root, list(ENTRIES))), kernels=KernelProvider(kernel))
