"""The gateway's request and response bodies (seed 004's shapes)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from colony.runtime.case import Evidence, Rationale, RollbackPlan

__all__ = ["DecisionRequest", "ErrorBody", "Target", "ToolCallRequest", "ToolCallResponse"]


class Target(BaseModel):
    """Where a call should run."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["local", "remote", "auto"] = Field(
        default="local", description="local: this node; remote: the peer at url; auto: any healthy node with the tool."
    )
    url: str | None = Field(
        default=None, pattern=r"^https?://", max_length=2048, description="The peer gateway's base URL (remote only)."
    )


class ToolCallRequest(BaseModel):
    """POST /v1/tool_call."""

    model_config = ConfigDict(extra="forbid")

    target: Target = Field(default_factory=Target, description="Where to run the call.")
    tool_name: str = Field(min_length=1, max_length=200, description="The tool's catalog name, e.g. unit_convert.")
    tool_args: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments (its input schema).")
    rationale: Rationale = None
    rollback_plan: RollbackPlan = None
    evidence: Evidence = None
    approval_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="Resubmit a held call (same tool and arguments): it runs once its approval request is approved.",
    )


class DecisionRequest(BaseModel):
    """POST /v1/approvals/{id}/approve or /reject."""

    model_config = ConfigDict(extra="forbid")

    display_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="A name shown beside the caller, e.g. an email address (the caller is who decides).",
    )
    note: str = Field(default="", max_length=10_000, description="Why, in a sentence; recorded with the decision.")


class ErrorBody(BaseModel):
    """What went wrong, as the Colony error hierarchy names it."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="The error's class, e.g. ToolInputError, CapabilityDeniedError.")
    message: str = Field(description="What was wrong, naming the field, token or limit at fault.")


class ToolCallResponse(BaseModel):
    """``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ...}``."""

    ok: bool = Field(description="Whether the tool ran and returned a result.")
    result: Any = Field(default=None, description="The tool's result (present when ok).")
    error: ErrorBody | None = Field(default=None, description="The failure (present when not ok).")
    node: str | None = Field(default=None, description="The node that served the call.")
    verdict: dict[str, Any] | None = Field(default=None, description="The gate's verdict (side-effecting tools).")
    outcome: dict[str, Any] | None = Field(default=None, description="The recorded outcome (side-effecting tools).")
    status: str | None = Field(default=None, description="'held' when the call waits for a person (HTTP 202).")
    approval: dict[str, Any] | None = Field(
        default=None, description="A held call's approval request: id, state, expiry, reason, url, how to resolve it."
    )
