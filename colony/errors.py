"""Every error Colony raises on purpose, in one hierarchy.

    ColonyError
    ├── ToolError                  a call to a tool went wrong
    │   ├── ToolInputError         the caller sent bad arguments (also a ValueError)
    │   ├── ToolOutputError        the tool answered outside its declared schema
    │   │   └── ToolOutputTooLargeError  the answer is over the tool's declared size cap
    │   ├── UnknownToolError       no such tool in the catalog or on the agent
    │   ├── UnknownActionError     the tool has no such action
    │   ├── ToolExecutionError     the tool ran and failed; ``retryable`` says if a
    │   │                          second attempt may succeed
    │   │   ├── SandboxError       the Docker sandbox failed (not the command inside it)
    │   │   │   ├── SandboxUnavailableError   no Docker engine answers, or it failed (5xx);
    │   │   │   │                             retryable
    │   │   │   ├── SandboxImageMissingError  the role's image is not built here
    │   │   │   └── UnknownSandboxRoleError   no image is configured for the role
    │   │   └── UpstreamError      a connected MCP server failed the call (not the caller)
    │   │       ├── UpstreamUnavailableError  it cannot be started or reached, or it
    │   │       │                             died mid-call; retryable
    │   │       ├── UpstreamTimeoutError      it did not answer in time
    │   │       ├── UpstreamProtocolError     it answered something that is not MCP
    │   │       └── UpstreamToolError         its tool reported an error (``isError``)
    │   ├── HPCError               an HPC job could not be run as asked
    │   │   ├── HPCLimitError      the run asks for more than the operator allows
    │   │   ├── HPCRequestError    the HPC service refused a request (unknown tool,
    │   │   │                      missing artifact, bad token, expired URL)
    │   │   ├── HPCUnavailableError  the HPC service cannot be reached (retryable)
    │   │   ├── HPCJobFailedError  the Batch job failed; carries reason and log tail
    │   │   ├── HPCTimeoutError    the job outran its wall-clock budget
    │   │   └── AWSError           S3 or Batch said no; keeps the AWS error code
    │   ├── MissingSecretError     a secret the tool needs is not configured
    │   └── VerificationError      the check run after a gated action failed
    ├── CatalogError               the tool registry file or an entry in it is wrong
    │   ├── RegistryFileError      unreadable or malformed registry file
    │   ├── CapabilityResolutionError  an entry's capability_fqn does not import
    │   ├── ToolEntrySpecMismatch  an entry's capability is not in its class's spec
    │   └── ToolUnavailableError   a call named a tool whose entry failed to load
    │                              (``tool`` and ``reason`` say which and why)
    ├── AgentSpecError             an agent definition is malformed or inconsistent
    ├── AgentModelError            an agent's model is unreachable or answered unusably
    ├── SettingsError              Colony's settings could not be read: a bad variable, or
    │   │                          a settings block the configured Prefect API does not give
    │   └── McpServersFileError    the MCP servers file is malformed or holds a literal secret
    ├── PolicyError                a policy file does not parse or does not fit the catalog's
    │                              schema (``file`` and ``line`` say where)
    ├── KernelError                the Colony kernel refused or failed a call
    │   ├── KernelInputError       a kernel call's input is malformed (also a ValueError)
    │   ├── AttestationError       an outcome's authorization is forged, expired,
    │   │   │                      replayed, mismatched or missing
    │   │   └── ActionRecordedError   it was used: the action ran and its outcome is recorded
    │   ├── ApprovalError          an approval request cannot be decided or used as asked
    │   │   │                      (already decided, expired, already executed, mismatched)
    │   │   └── UnknownApprovalError  no approval request has that id
    │   └── KernelStoreError       the kernel's database failed; ``retryable`` when
    │                              a second attempt may succeed (lock, deadlock)
    └── SurfaceError               the gateway, MCP server or client refused or failed a call
        ├── AuthenticationError    no bearer token, or one the gateway does not know
        ├── CapabilityDeniedError  the caller's token lacks a capability the tool requires
        │   ├── IdentityError      the caller named an agent it is not (only operators may)
        │   └── PolicyDeniedError  an operator's policy forbids the call (``policies`` and
        │                          ``reasons`` say which and why)
        ├── PayloadTooLargeError   a request body or a tool's arguments are over their cap
        ├── CallTimeoutError       a tool or a peer gateway did not answer in time
        ├── PeerError              a peer gateway is unreachable or answered badly
        ├── ActionNotExecutedError the gate refused or held a side-effecting call
        ├── UngatedActionError     code tried to run a side-effecting action without an
        │                          authorization from the gate (a route around it)
        └── RateLimitedError       the caller is over its rate or concurrency limit for
                                   a tool; ``retry_after_seconds`` says when to retry

Errors a caller caused (bad input, unknown names) are never retried; an error
with ``retryable = True`` marks a transient failure worth a second attempt.
Foreign exceptions (pydantic, jsonschema, boto3, docker, SQLAlchemy) are
translated into these once, at the boundary where they are caught.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "AWSError",
    "ActionNotExecutedError",
    "ActionRecordedError",
    "AgentModelError",
    "AgentSpecError",
    "ApprovalError",
    "AttestationError",
    "AuthenticationError",
    "CallTimeoutError",
    "CapabilityDeniedError",
    "CapabilityResolutionError",
    "CatalogError",
    "ColonyError",
    "FieldError",
    "HPCError",
    "HPCJobFailedError",
    "HPCLimitError",
    "HPCRequestError",
    "HPCTimeoutError",
    "HPCUnavailableError",
    "IdentityError",
    "KernelError",
    "KernelInputError",
    "KernelStoreError",
    "McpServersFileError",
    "MissingSecretError",
    "PayloadTooLargeError",
    "PeerError",
    "PolicyDeniedError",
    "PolicyError",
    "RateLimitedError",
    "RegistryFileError",
    "SandboxError",
    "SandboxImageMissingError",
    "SandboxUnavailableError",
    "SettingsError",
    "SurfaceError",
    "ToolEntrySpecMismatch",
    "ToolError",
    "ToolExecutionError",
    "ToolInputError",
    "ToolOutputError",
    "ToolOutputTooLargeError",
    "ToolUnavailableError",
    "UngatedActionError",
    "UnknownActionError",
    "UnknownApprovalError",
    "UnknownSandboxRoleError",
    "UnknownToolError",
    "UpstreamError",
    "UpstreamProtocolError",
    "UpstreamTimeoutError",
    "UpstreamToolError",
    "UpstreamUnavailableError",
    "VerificationError",
    "field_errors",
    "summarize",
]


class ColonyError(Exception):
    """Base of every error Colony raises on purpose."""

    retryable: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description of the error, for HTTP, MCP and logs."""
        return {"type": type(self).__name__, "message": str(self), "retryable": self.retryable}

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses take keyword-only fields, which Exception's pickling drops: keep every
        # attribute, so an error crossing a process boundary (a worker, a Prefect result) is whole.
        return (_restore_error, (type(self), self.args, self.__dict__))


def _restore_error(cls: type[ColonyError], args: tuple[Any, ...], state: dict[str, Any]) -> ColonyError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class FieldError(BaseModel):
    """One thing wrong with one argument."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str = Field(description="Dotted path of the argument at fault ('' for the whole input).")
    message: str = Field(description="What is wrong, in words a model can act on.")
    expected: str | None = Field(default=None, description="What would have been accepted.")


def field_errors(error: ValidationError | Iterable[Mapping[str, Any]], *, skip: int = 0) -> list[FieldError]:
    """Pydantic's report as one FieldError per problem: the one translation every boundary uses.

    Args:
        error: A ValidationError, or its ``errors()`` (FastAPI hands those over).
        skip: Leading location parts to drop (``("body",)`` of a request body).

    Returns:
        The problems in pydantic's order; ``field`` is the dotted location.
    """
    details = error.errors(include_url=False) if isinstance(error, ValidationError) else error
    problems = []
    for detail in details:
        kind = str(detail.get("type", ""))
        message = str(detail.get("msg", ""))
        if kind == "extra_forbidden":
            message = "unexpected argument"
        elif kind == "missing":
            message = "required argument is missing"
        field = ".".join(str(part) for part in tuple(detail.get("loc", ()))[skip:])
        problems.append(FieldError(field=field, message=message, expected=_expected(detail)))
    return problems


#: The problems an input error names; the rest are counted. Arguments within the size cap can hold
#: tens of thousands of wrong keys, which would otherwise come back as an answer eight times as large.
MAX_FIELD_ERRORS = 20


def summarize(problems: Sequence[FieldError]) -> str:
    """``field: message; field: message`` for an error's text: the first ``MAX_FIELD_ERRORS``, then a count."""
    text = "; ".join(f"{problem.field or '<input>'}: {problem.message}" for problem in problems[:MAX_FIELD_ERRORS])
    more = len(problems) - MAX_FIELD_ERRORS
    return f"{text}; and {more} more" if more > 0 else text


def _expected(detail: Mapping[str, Any]) -> str | None:
    context = detail.get("ctx") or {}
    if "expected" in context:
        return str(context["expected"])
    kind = str(detail.get("type", ""))
    for suffix in ("_type", "_parsing"):
        if kind.endswith(suffix):
            return kind.removesuffix(suffix)
    return None


class ToolError(ColonyError):
    """A call to a tool went wrong."""


class ToolInputError(ToolError, ValueError):
    """The caller's arguments do not fit the action; names each field at fault."""

    def __init__(
        self,
        message: str,
        *,
        action: str | None = None,
        errors: list[FieldError] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.action = action
        self.errors = (errors or [])[:MAX_FIELD_ERRORS]

    @classmethod
    def for_field(cls, field: str, message: str, *, expected: str | None = None) -> ToolInputError:
        """An input error about a single argument, raised from inside a tool."""
        return cls(message, errors=[FieldError(field=field, message=message, expected=expected)])

    def with_action(self, action: str) -> ToolInputError:
        """Name the action, once the dispatcher knows which one was called."""
        if self.action is None:
            self.action = action
        return self

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "action": self.action,
            "errors": [error.model_dump() for error in self.errors],
        }


class ToolOutputError(ToolError):
    """The tool answered with something its declared output schema does not allow."""


class ToolOutputTooLargeError(ToolOutputError):
    """The tool's answer, encoded as JSON, is over the size cap its capability declares."""

    def __init__(self, message: str, *, action: str, size_bytes: int, limit_bytes: int) -> None:
        super().__init__(message)
        self.action = action
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "action": self.action,
            "size_bytes": self.size_bytes,
            "limit_bytes": self.limit_bytes,
        }


class UnknownToolError(ToolError, LookupError):
    """No tool of that name is available."""


class UnknownActionError(ToolError, LookupError):
    """The tool has no action of that name."""


class ToolExecutionError(ToolError):
    """The tool ran and failed."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class SandboxError(ToolExecutionError):
    """The Docker sandbox failed; a command's own non-zero exit is a result, never this."""


class SandboxUnavailableError(SandboxError):
    """No Docker engine answers, or the engine failed; a later attempt may succeed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class SandboxImageMissingError(SandboxError):
    """The image a role names is not on this engine; the message says how to build it."""


class UnknownSandboxRoleError(SandboxError, LookupError):
    """No image is configured for the sandbox role a tool names."""


class UpstreamError(ToolExecutionError):
    """A connected MCP server failed a call: its fault, never the caller's (``server`` names it)."""

    def __init__(self, message: str, *, server: str, retryable: bool = False) -> None:
        super().__init__(message, retryable=retryable)
        self.server = server

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "server": self.server}


class UpstreamUnavailableError(UpstreamError):
    """The server cannot be started or reached, or it died mid-call; a later attempt may succeed."""

    def __init__(self, message: str, *, server: str) -> None:
        super().__init__(message, server=server, retryable=True)


class UpstreamTimeoutError(UpstreamError):
    """The server did not answer the call in time; the call was abandoned, the session kept."""


class UpstreamProtocolError(UpstreamError):
    """The server answered something that is not a valid MCP result."""


class UpstreamToolError(UpstreamError):
    """The server's tool ran and reported an error (``isError``); its text is the message."""


class MissingSecretError(ToolError):
    """A secret a tool declares it needs is not configured anywhere."""


class VerificationError(ToolError):
    """The check run after a gated action failed, so the action is rolled back."""


class HPCError(ToolError):
    """An HPC job could not be run as asked."""


class HPCLimitError(HPCError):
    """The run needs more than the operator's limits allow; one violation per limit."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("operator limits exceeded: " + "; ".join(violations))
        self.violations = violations

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "violations": self.violations}


class HPCRequestError(HPCError):
    """The HPC service refused a request; ``status_code`` is its HTTP status."""

    def __init__(self, message: str, *, status_code: int = 400) -> None:
        super().__init__(message)
        self.status_code = status_code


class HPCUnavailableError(HPCError):
    """The HPC service (or an upload target) cannot be reached right now."""

    retryable = True


class HPCJobFailedError(HPCError):
    """The Batch job ended FAILED: why, and the last lines it logged."""

    def __init__(self, job_name: str, status_reason: str, log_tail: list[str]) -> None:
        tail = "\n".join(log_tail) if log_tail else "(no log output)"
        super().__init__(f"HPC job {job_name} failed: {status_reason or 'no reason given'}\nlog tail:\n{tail}")
        self.job_name = job_name
        self.status_reason = status_reason
        self.log_tail = log_tail

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "status_reason": self.status_reason, "log_tail": self.log_tail}


class HPCTimeoutError(HPCError):
    """The job did not finish within the wall-clock budget its spec allows."""

    retryable = True


class AWSError(HPCError):
    """S3 or AWS Batch refused; ``code`` is AWS's own error code (``NoSuchKey``, ``ClientException``)."""

    def __init__(self, message: str, *, code: str, operation: str = "", retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.operation = operation
        self.retryable = retryable

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "code": self.code, "operation": self.operation}


class CatalogError(ColonyError):
    """The tool registry, or an entry in it, is wrong."""


class RegistryFileError(CatalogError):
    """The registry file cannot be read or does not hold a valid registry."""


class CapabilityResolutionError(CatalogError):
    """An entry's ``capability_fqn`` does not name an importable ToolCapability."""


class ToolEntrySpecMismatch(CatalogError):
    """An entry's ``capability`` is not among its class's ``spec.capabilities``."""


class ToolUnavailableError(CatalogError):
    """The catalog lists the tool, but its entry failed to load: the rest of the catalog still serves."""

    def __init__(self, message: str, *, tool: str, reason: str) -> None:
        super().__init__(message)
        self.tool = tool
        self.reason = reason

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "tool": self.tool, "reason": self.reason}


class AgentSpecError(ColonyError):
    """An agent definition is malformed or names things the agent does not have."""


class AgentModelError(ColonyError):
    """An agent's model could not be reached, refused the request, or answered something unusable."""


class SettingsError(ColonyError):
    """Colony's settings could not be read; the message names the variable, block or server at fault."""


class McpServersFileError(SettingsError):
    """The MCP servers file is malformed, names a server twice, or holds a credential in clear."""


class PolicyError(ColonyError):
    """A policy file does not parse, or names something the catalog's schema does not have."""

    def __init__(self, message: str, *, file: str = "", line: int = 0) -> None:
        super().__init__(message)
        self.file = file
        self.line = line

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "file": self.file, "line": self.line}


class KernelError(ColonyError):
    """The Colony kernel refused or failed a call."""


class KernelInputError(KernelError, ValueError):
    """A kernel call's input does not fit the seed's schema; names each field at fault."""

    def __init__(self, message: str, *, errors: list[FieldError] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = (errors or [])[:MAX_FIELD_ERRORS]

    @classmethod
    def for_field(cls, field: str, message: str, *, expected: str | None = None) -> KernelInputError:
        """An input error about a single field."""
        return cls(f"{field}: {message}", errors=[FieldError(field=field, message=message, expected=expected)])

    @property
    def fields(self) -> list[str]:
        """The names of the fields at fault, in order."""
        return [error.field for error in self.errors]

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "errors": [error.model_dump() for error in self.errors]}


class AttestationError(KernelError):
    """An outcome report's authorization token cannot be accepted; the message says why."""


class ActionRecordedError(AttestationError):
    """The authorization was used: the action ran and its outcome is recorded (``consequence_id``).

    What a retried run is told when it asks again for a verdict it already spent, so it reports
    the recorded outcome instead of running the action a second time.
    """

    def __init__(self, message: str, *, consequence_id: str) -> None:
        super().__init__(message)
        self.consequence_id = consequence_id

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "consequence_id": self.consequence_id}


class ApprovalError(KernelError):
    """An approval request cannot be decided or used as asked; ``state`` is where it stands."""

    def __init__(self, message: str, *, approval_id: str, state: str | None = None) -> None:
        super().__init__(message)
        self.approval_id = approval_id
        self.state = state

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "approval_id": self.approval_id, "state": self.state}


class UnknownApprovalError(ApprovalError, LookupError):
    """No approval request has that id."""

    def __init__(self, approval_id: str) -> None:
        super().__init__(f"no approval request {approval_id!r}", approval_id=approval_id)


class KernelStoreError(KernelError):
    """The kernel's database failed; ``retryable`` says whether a second attempt may succeed."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class SurfaceError(ColonyError):
    """The gateway, the MCP server or the client refused or failed a call."""


class AuthenticationError(SurfaceError):
    """The caller presented no bearer token, or one the gateway does not know."""


class CapabilityDeniedError(SurfaceError):
    """The caller's token does not grant a capability token the tool requires."""

    def __init__(self, message: str, *, missing: list[str]) -> None:
        super().__init__(message)
        self.missing = missing

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "missing": self.missing}


class IdentityError(CapabilityDeniedError):
    """The caller named an agent other than the one it authenticated as, without being an operator."""

    def __init__(self, message: str) -> None:
        super().__init__(message, missing=["colony:operator"])


class PolicyDeniedError(CapabilityDeniedError):
    """An operator's policy forbids the call: ``policies`` decided it, ``reasons`` are their ``@reason``s."""

    def __init__(self, message: str, *, policies: list[str], reasons: list[str]) -> None:
        super().__init__(message, missing=[])
        self.policies = policies
        self.reasons = reasons

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "policies": self.policies, "reasons": self.reasons}


class PayloadTooLargeError(SurfaceError):
    """A request body, or a tool call's arguments, is over its size cap."""


class CallTimeoutError(SurfaceError):
    """A tool, or a peer gateway, did not answer within the per-call timeout."""

    retryable = True


class PeerError(SurfaceError):
    """A peer gateway could not be reached, or answered with something that is not a tool result."""

    retryable = True


class ActionNotExecutedError(SurfaceError):
    """The gate refused or held a side-effecting call; ``verdict`` is the gate's answer."""

    def __init__(self, message: str, *, verdict: dict[str, Any]) -> None:
        super().__init__(message)
        self.verdict = verdict

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "verdict": self.verdict}


class UngatedActionError(SurfaceError):
    """Code tried to run a side-effecting action without the authorization the gate issues for it."""


class RateLimitedError(SurfaceError):
    """The caller is over its call rate, or its concurrent calls, for a tool; retry after ``retry_after_seconds``."""

    retryable = True

    def __init__(self, message: str, *, retry_after_seconds: float) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "retry_after_seconds": self.retry_after_seconds}
