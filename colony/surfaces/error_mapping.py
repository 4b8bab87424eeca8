"""Colony errors translated for the wire: one table for HTTP, one for MCP.

Every ColonyError subclass has an explicit row (a test walks the hierarchy),
so a new error cannot silently surface as a 500 or an internal JSON-RPC error.
"""

from __future__ import annotations

from typing import Any

from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, ErrorData

from colony import errors

__all__ = ["HTTP_STATUS", "MCP_ERROR_CODE", "error_class_named", "http_status", "mcp_error", "rebuild_error"]

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
    errors.AgentSpecError: 400,
    errors.KernelError: 500,
    errors.KernelInputError: 400,
    errors.AttestationError: 403,
    errors.KernelStoreError: 503,
    errors.SurfaceError: 500,
    errors.AuthenticationError: 401,
    errors.CapabilityDeniedError: 403,
    errors.PayloadTooLargeError: 413,
    errors.CallTimeoutError: 504,
    errors.PeerError: 502,
    errors.ActionNotExecutedError: 409,
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
    errors.AgentSpecError: INVALID_PARAMS,
    errors.KernelError: -32010,
    errors.KernelInputError: INVALID_PARAMS,
    errors.AttestationError: -32011,
    errors.KernelStoreError: -32012,
    errors.SurfaceError: -32020,
    errors.AuthenticationError: -32021,
    errors.CapabilityDeniedError: -32022,
    errors.PayloadTooLargeError: -32023,
    errors.CallTimeoutError: -32024,
    errors.PeerError: -32025,
    errors.ActionNotExecutedError: -32026,
}


def _lookup(table: dict[type[errors.ColonyError], int], error: errors.ColonyError) -> int:
    for cls in type(error).__mro__:
        if cls in table:
            return table[cls]
    return table[errors.ColonyError]


def http_status(error: errors.ColonyError) -> int:
    """The HTTP status a gateway answers ``error`` with."""
    return _lookup(HTTP_STATUS, error)


def mcp_error(error: errors.ColonyError) -> ErrorData:
    """``error`` as a JSON-RPC error object, its details under ``data``."""
    return ErrorData(code=_lookup(MCP_ERROR_CODE, error), message=str(error), data=error.to_dict())


def error_class_named(name: str) -> type[errors.ColonyError] | None:
    """The ColonyError subclass a wire error's ``type`` names, for rebuilding it on the client side."""
    return next((cls for cls in HTTP_STATUS if cls.__name__ == name), None)


def rebuild_error(payload: Any, status: int) -> errors.ColonyError:
    """The ColonyError a gateway's ``{"ok": false, "error": ...}`` answer describes, for re-raising locally."""
    detail = payload if isinstance(payload, dict) else {}
    message = str(detail.get("message") or f"the gateway answered HTTP {status}")
    cls = error_class_named(str(detail.get("type", "")))
    if cls is errors.CapabilityDeniedError:
        return errors.CapabilityDeniedError(message, missing=list(detail.get("missing") or []))
    if cls is errors.ActionNotExecutedError:
        return errors.ActionNotExecutedError(message, verdict=dict(detail.get("verdict") or {}))
    if cls is errors.ToolInputError or (cls is None and status in (400, 422)):
        problems = [errors.FieldError.model_validate(item) for item in detail.get("errors") or []]
        return errors.ToolInputError(message, action=detail.get("action"), errors=problems)
    if cls is errors.ToolExecutionError:
        return errors.ToolExecutionError(message, retryable=bool(detail.get("retryable")))
    if cls is errors.ToolOutputTooLargeError:
        return errors.ToolOutputTooLargeError(
            message,
            action=str(detail.get("action", "")),
            size_bytes=int(detail.get("size_bytes") or 0),
            limit_bytes=int(detail.get("limit_bytes") or 0),
        )
    if cls is errors.HPCLimitError:
        return errors.HPCLimitError([str(item) for item in detail.get("violations") or [message]])
    if cls is errors.AWSError:
        return errors.AWSError(message, code=str(detail.get("code", "")), operation=str(detail.get("operation", "")))
    if cls is errors.KernelInputError:
        return errors.KernelInputError(message)
    if cls is None:
        return errors.PeerError(f"HTTP {status}: {message}")
    # An error whose constructor needs fields the wire does not carry comes back as
    # its nearest ancestor that takes a message alone.
    for candidate in cls.__mro__:
        if isinstance(candidate, type) and issubclass(candidate, errors.ColonyError):
            try:
                return candidate(message)
            except TypeError:
                continue
    return errors.ColonyError(message)
