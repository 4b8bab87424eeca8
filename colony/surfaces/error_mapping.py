"""Colony errors translated for the wire: one table for HTTP, one for MCP.

Every ColonyError subclass has an explicit row (a test walks the hierarchy),
so a new error cannot silently surface as a 500 or an internal JSON-RPC error.
"""

from __future__ import annotations

import math
from typing import Any

from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, ErrorData
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from colony import errors

__all__ = [
    "HTTP_STATUS",
    "MCP_ERROR_CODE",
    "error_class_named",
    "http_headers",
    "http_status",
    "mcp_error",
    "rebuild_error",
]

HTTP_STATUS: dict[type[errors.ColonyError], int] = {
    errors.ColonyError: 500,
    errors.ToolError: 500,
    errors.ToolInputError: 400,
    errors.ToolOutputError: 502,
    errors.ToolOutputTooLargeError: 502,
    errors.UnknownToolError: 404,
    errors.UnknownActionError: 404,
    errors.ToolExecutionError: 500,
    errors.MissingSecretError: 503,
    errors.VerificationError: 500,
    errors.SandboxError: 500,
    errors.SandboxUnavailableError: 503,
    errors.SandboxImageMissingError: 503,
    errors.UnknownSandboxRoleError: 500,
    errors.UpstreamError: 502,
    errors.UpstreamUnavailableError: 503,
    errors.UpstreamTimeoutError: 504,
    errors.UpstreamProtocolError: 502,
    errors.UpstreamToolError: 502,
    errors.HPCError: 500,
    errors.HPCLimitError: 422,
    errors.HPCRequestError: 502,
    errors.HPCUnavailableError: 503,
    errors.HPCJobFailedError: 502,
    errors.HPCTimeoutError: 504,
    errors.AWSError: 502,
    errors.CatalogError: 500,
    errors.RegistryFileError: 500,
    errors.CapabilityResolutionError: 500,
    errors.ToolEntrySpecMismatch: 500,
    errors.ToolUnavailableError: 503,
    errors.AgentSpecError: 400,
    errors.AgentModelError: 502,
    errors.SettingsError: 503,
    errors.McpServersFileError: 503,
    errors.PolicyError: 503,
    errors.KernelError: 500,
    errors.KernelInputError: 400,
    errors.AttestationError: 403,
    errors.ActionRecordedError: 409,
    errors.ApprovalError: 409,
    errors.UnknownApprovalError: 404,
    errors.KernelStoreError: 503,
    errors.SurfaceError: 500,
    errors.AuthenticationError: 401,
    errors.CapabilityDeniedError: 403,
    errors.PayloadTooLargeError: 413,
    errors.CallTimeoutError: 504,
    errors.PeerError: 502,
    errors.ActionNotExecutedError: 409,
    errors.IdentityError: 403,
    errors.PolicyDeniedError: 403,
    errors.UngatedActionError: 500,
    errors.RateLimitedError: 429,
}

# JSON-RPC codes: the protocol's own for bad parameters, the implementation-defined
# server range (-32000..-32099) for Colony's refusals and failures.
MCP_ERROR_CODE: dict[type[errors.ColonyError], int] = {
    errors.ColonyError: INTERNAL_ERROR,
    errors.ToolError: INTERNAL_ERROR,
    errors.ToolInputError: INVALID_PARAMS,
    errors.ToolOutputError: -32002,
    errors.ToolOutputTooLargeError: -32005,
    errors.UnknownToolError: INVALID_PARAMS,
    errors.UnknownActionError: INVALID_PARAMS,
    errors.ToolExecutionError: -32000,
    errors.MissingSecretError: -32003,
    errors.VerificationError: -32004,
    errors.SandboxError: -32030,
    errors.SandboxUnavailableError: -32031,
    errors.SandboxImageMissingError: -32032,
    errors.UnknownSandboxRoleError: -32033,
    errors.UpstreamError: -32050,
    errors.UpstreamUnavailableError: -32051,
    errors.UpstreamTimeoutError: -32052,
    errors.UpstreamProtocolError: -32053,
    errors.UpstreamToolError: -32054,
    errors.HPCError: -32040,
    errors.HPCLimitError: -32041,
    errors.HPCRequestError: -32042,
    errors.HPCUnavailableError: -32043,
    errors.HPCJobFailedError: -32044,
    errors.HPCTimeoutError: -32045,
    errors.AWSError: -32046,
    errors.CatalogError: INTERNAL_ERROR,
    errors.RegistryFileError: INTERNAL_ERROR,
    errors.CapabilityResolutionError: INTERNAL_ERROR,
    errors.ToolEntrySpecMismatch: INTERNAL_ERROR,
    errors.ToolUnavailableError: -32006,
    errors.AgentSpecError: INVALID_PARAMS,
    errors.AgentModelError: -32017,
    errors.SettingsError: -32016,
    errors.McpServersFileError: -32016,
    errors.PolicyError: -32018,
    errors.KernelError: -32010,
    errors.KernelInputError: INVALID_PARAMS,
    errors.AttestationError: -32011,
    errors.ActionRecordedError: -32015,
    errors.ApprovalError: -32013,
    errors.UnknownApprovalError: -32014,
    errors.KernelStoreError: -32012,
    errors.SurfaceError: -32020,
    errors.AuthenticationError: -32021,
    errors.CapabilityDeniedError: -32022,
    errors.PayloadTooLargeError: -32023,
    errors.CallTimeoutError: -32024,
    errors.PeerError: -32025,
    errors.ActionNotExecutedError: -32026,
    errors.IdentityError: -32027,
    errors.UngatedActionError: -32028,
    errors.RateLimitedError: -32029,
    errors.PolicyDeniedError: -32019,
}


def _lookup(table: dict[type[errors.ColonyError], int], error: errors.ColonyError) -> int:
    for cls in type(error).__mro__:
        if cls in table:
            return table[cls]
    return table[errors.ColonyError]


def http_status(error: errors.ColonyError) -> int:
    """The HTTP status a gateway answers ``error`` with."""
    return _lookup(HTTP_STATUS, error)


def http_headers(error: errors.ColonyError, *, challenge: str = 'Bearer realm="colony"') -> dict[str, str]:
    """The headers an answer of ``error`` carries: the ``challenge`` with 401, ``Retry-After`` with 429."""
    if isinstance(error, errors.AuthenticationError):
        return {"www-authenticate": challenge}
    if isinstance(error, errors.RateLimitedError):
        return {"retry-after": str(max(1, math.ceil(error.retry_after_seconds)))}
    return {}


def mcp_error(error: errors.ColonyError) -> ErrorData:
    """``error`` as a JSON-RPC error object, its details under ``data``."""
    return ErrorData(code=_lookup(MCP_ERROR_CODE, error), message=str(error), data=error.to_dict())


def error_class_named(name: str) -> type[errors.ColonyError] | None:
    """The ColonyError subclass a wire error's ``type`` names, for rebuilding it on the client side."""
    return next((cls for cls in HTTP_STATUS if cls.__name__ == name), None)


def rebuild_error(payload: Any, status: int) -> errors.ColonyError:
    """The ColonyError a gateway's ``{"ok": false, "error": ...}`` answer describes, for re-raising locally.

    Lossless: the error comes back as its own class with every field ``to_dict`` wrote
    (``retryable``, field errors, missing tokens, the verdict, AWS codes, ...), so
    ``rebuild_error(e.to_dict(), http_status(e)).to_dict() == e.to_dict()``. An answer whose
    fields have the wrong shape is a PeerError naming the field, never a pydantic traceback.
    """
    detail = payload if isinstance(payload, dict) else {}
    try:
        _WIRE_ERROR.validate_python(detail)
    except ValidationError as invalid:
        problem = invalid.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        return errors.PeerError(f"HTTP {status}: a malformed error answer (error.{where}: {problem['msg']})")
    message = str(detail.get("message") or f"the gateway answered HTTP {status}")
    cls = error_class_named(str(detail.get("type", "")))
    if cls is None:
        if status in (400, 422):
            cls = errors.ToolInputError
        else:
            return errors.PeerError(f"HTTP {status}: {message}")
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    fields = {key: value for key, value in detail.items() if key not in ("type", "message")}
    if "errors" in fields or cls in (errors.ToolInputError, errors.KernelInputError):
        fields["errors"] = [errors.FieldError.model_validate(item) for item in fields.get("errors") or []]
    if issubclass(cls, errors.ToolInputError | errors.KernelInputError):
        fields["message"] = message
    if issubclass(cls, errors.ToolInputError):
        fields.setdefault("action", None)
    if issubclass(cls, errors.CapabilityDeniedError):
        fields.setdefault("missing", [])
    if issubclass(cls, errors.PolicyDeniedError):
        fields.setdefault("policies", [])
        fields.setdefault("reasons", [])
    if issubclass(cls, errors.PolicyError):
        fields.setdefault("file", "")
        fields.setdefault("line", 0)
    if issubclass(cls, errors.ActionNotExecutedError):
        fields.setdefault("verdict", {})
    if issubclass(cls, errors.ActionRecordedError):
        fields.setdefault("consequence_id", "")
    if issubclass(cls, errors.ApprovalError):
        fields.setdefault("approval_id", "")
        fields.setdefault("state", None)
    if issubclass(cls, errors.UpstreamError):
        fields.setdefault("server", "")
    if issubclass(cls, errors.ToolUnavailableError):
        fields.setdefault("tool", "")
        fields.setdefault("reason", "")
    if issubclass(cls, errors.RateLimitedError):
        fields["retry_after_seconds"] = _seconds(fields.get("retry_after_seconds"))
    fields["retryable"] = bool(fields.get("retryable", cls.retryable))
    for key, value in fields.items():
        setattr(error, key, value)
    return error


_FieldErrors = list[errors.FieldError]  # the model's field ``errors`` would shadow the module


class _WireError(BaseModel):
    """The typed fields an error answer may carry; anything else travels as it is."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(default="", description="The error's class name.")
    message: str | None = Field(default=None, description="What went wrong.")
    retryable: bool | None = Field(default=None, description="Whether a second attempt may succeed.")
    action: str | None = Field(default=None, description="The action at fault.")
    errors: _FieldErrors | None = Field(default=None, description="Field errors.")
    missing: list[str] | None = Field(default=None, description="Capability tokens the caller lacks.")
    verdict: dict[str, Any] | None = Field(default=None, description="The gate's verdict.")


_WIRE_ERROR = TypeAdapter(_WireError)


def _seconds(value: Any) -> float:
    """A wire ``retry_after_seconds``, or one second when it is missing or not a finite non-negative number."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < math.inf:
        return float(value)
    return 1.0
