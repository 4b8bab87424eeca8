"""A run that ended waiting for a person, kept as JSON so any process can resume it later.

Holding nothing open while a person decides is the point: the run's messages and its
held calls (each naming Colony's ``approval_id``) are data. ``colony agent run`` keeps one
under ``COLONY_HOME/agent-runs/``; the ``agent-run`` flow returns it as its result.
Resuming reads the kernel's decisions (``running.decisions``), never the file's.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from colony.errors import AgentSpecError, field_errors, summarize

__all__ = ["HeldRun"]

_REQUESTS = TypeAdapter(DeferredToolRequests)
_RUN_ID = re.compile(r"^[0-9a-f]{32}$")


class HeldRun(BaseModel):
    """An agent run paused on held calls: its history and what it waits for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(pattern=_RUN_ID.pattern, description="This held run's id.")
    agent: str = Field(description="The agent's name.")
    spec_path: str | None = Field(default=None, description="The spec file the run was started from.")
    messages: list[dict[str, Any]] = Field(description="The run's messages, as pydantic-ai serializes them.")
    requests: dict[str, Any] = Field(description="The held calls (DeferredToolRequests), each naming its approval_id.")

    @classmethod
    def of(
        cls, agent: str, messages: list[ModelMessage], requests: DeferredToolRequests, spec_path: str | None = None
    ) -> HeldRun:
        """A new held run from a result's messages and its deferred requests."""
        return cls(
            run_id=uuid.uuid4().hex,
            agent=agent,
            spec_path=spec_path,
            messages=ModelMessagesTypeAdapter.dump_python(messages, mode="json"),
            requests=_REQUESTS.dump_python(requests, mode="json"),
        )

    @property
    def approval_ids(self) -> list[str]:
        """The approval requests the run waits on, in call order."""
        deferred = self.deferred()
        found = (deferred.metadata.get(call.tool_call_id, {}).get("approval_id") for call in deferred.approvals)
        return [approval_id for approval_id in found if isinstance(approval_id, str)]

    def history(self) -> list[ModelMessage]:
        """The messages to resume with."""
        return ModelMessagesTypeAdapter.validate_python(self.messages)

    def deferred(self) -> DeferredToolRequests:
        """The held calls."""
        return _REQUESTS.validate_python(self.requests)

    def save(self, directory: Path) -> Path:
        """Write the run to ``directory/<run_id>.json``."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.run_id}.json"
        path.write_text(self.model_dump_json(indent=2), encoding="utf-8")
        return path

    @classmethod
    def waiting_on(cls, directory: Path, approval_id: str) -> str | None:
        """The id of the saved held run that waits on ``approval_id``, if any (unreadable files are skipped)."""
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else ():
            try:
                held = cls.model_validate_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if approval_id in held.approval_ids:
                return held.run_id
        return None

    @classmethod
    def load(cls, directory: Path, run_id: str) -> HeldRun:
        """Read a held run back, naming what is wrong when it cannot."""
        if not _RUN_ID.match(run_id):
            raise AgentSpecError(f"{run_id!r} is not a held run's id (32 hex digits)")
        path = directory / f"{run_id}.json"
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AgentSpecError(f"no held run {run_id} in {directory}") from None
        except OSError as error:
            raise AgentSpecError(f"{path}: cannot read the held run: {error}") from None
        except ValidationError as error:
            raise AgentSpecError(f"{path}: not a held run: {summarize(field_errors(error))}") from None
