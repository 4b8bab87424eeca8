"""The HPC REST service: FastAPI over ``JobService``, behind bearer tokens.

``create_app(settings)`` builds it; ``colony hpc serve`` runs it with uvicorn.
Each token is a principal (``colony.hpc.service.auth``); a job belongs to the
principal that created it, and a route reaches only the caller's own jobs
(an operator may name another ``owner``). Submitting spends shared Batch
capacity, so it needs ``hpc:submit`` (``SUBMIT_CAPABILITY``): Colony's own
service token holds it, and an agent reaches Batch through a governed call
of the HPC tool, which the gate budgets first. Job names in paths are checked
against the Batch name pattern before anything else runs. Errors answer
``{"error": {...}}`` with the Colony error's fields (an AWS error keeps its
``code``), and a status that says whose fault it was.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from colony.api_docs import serve_docs
from colony.errors import AWSError, ColonyError, HPCLimitError, HPCRequestError, HPCUnavailableError
from colony.hpc.models import (
    JOB_NAME_PATTERN,
    CompletedPart,
    JobCreated,
    JobRequest,
    JobStatus,
    OutputArtifact,
    UploadTarget,
    error_body,
)
from colony.hpc.service.auth import HPCPrincipal, TokenTable, resolve_owner
from colony.hpc.service.backend import BatchBackend
from colony.hpc.service.lifecycle import JobService
from colony.hpc.settings import HPCSettings

__all__ = ["SUBMIT_CAPABILITY", "create_app", "status_for"]

_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "NoSuchUpload", "NotFound", "404"})
_DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "InvalidAccessKeyId", "SignatureDoesNotMatch"})


class CompleteUpload(BaseModel):
    """The parts of one finished multipart upload."""

    key: str = Field(description="The artifact's key.")
    upload_id: str = Field(description="The multipart upload id the service handed out.")
    parts: list[CompletedPart] = Field(
        min_length=1, max_length=10_000, description="Every part, with the ETag S3 answered."
    )


class CancelRequest(BaseModel):
    """Why the job is being stopped."""

    reason: str = Field(default="cancelled by request", max_length=256, description="Recorded as the status reason.")


def status_for(error: ColonyError) -> int:
    """The HTTP status an error is answered with."""
    if isinstance(error, HPCRequestError):
        return error.status_code
    if isinstance(error, HPCLimitError):
        return 422
    if isinstance(error, AWSError):
        if error.retryable:
            return 503
        if error.code in _NOT_FOUND_CODES:
            return 404
        return 403 if error.code in _DENIED_CODES else 502
    if isinstance(error, HPCUnavailableError):
        return 503
    return 400


JobName = Annotated[
    str, Path(pattern=JOB_NAME_PATTERN, description="The job's name: letters, digits, '-' and '_', at most 128.")
]
Owner = Annotated[
    str | None,
    Query(min_length=1, max_length=256, description="Whose job (operators only); the caller's own when omitted."),
]


SUBMIT_CAPABILITY = "hpc:submit"


def create_app(settings: HPCSettings, backend: BatchBackend | None = None) -> FastAPI:
    """The service's ASGI app, for ``settings`` (a token or a token table is required)."""
    tokens = TokenTable.from_settings(settings)
    jobs = JobService(backend or BatchBackend(settings))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        jobs.backend.close()

    bearer = HTTPBearer(auto_error=False)

    def principal(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> HPCPrincipal:
        return tokens.authenticate(credentials.credentials if credentials else None)

    Caller = Annotated[HPCPrincipal, Depends(principal)]

    app = FastAPI(
        title="Colony HPC service",
        version="1.0.0",
        description="Runs tool jobs on AWS Batch with inputs and outputs in S3.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    serve_docs(app)

    @app.exception_handler(ColonyError)
    async def colony_error(_: Request, error: ColonyError) -> JSONResponse:
        return JSONResponse(error_body(error), status_code=status_for(error))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in detail['loc'])}: {detail['msg']}" for detail in error.errors()
        )
        return JSONResponse(error_body(HPCRequestError(f"invalid request: {problems}")), status_code=422)

    @app.get("/v1/health")
    def health() -> dict[str, str]:
        """Liveness, without authentication."""
        return {"status": "ok"}

    @app.post("/v1/jobs")
    def create_job(caller: Caller, request: JobRequest) -> JobCreated:
        """Create the caller's job record (or return the existing one) and presigned upload targets."""
        capability = f"tool:{request.tool}"
        if not caller.allows(capability):
            raise HPCRequestError(
                f"tool: running {request.tool!r} needs the capability {capability!r}", status_code=403
            )
        return jobs.create(caller.agent, request)

    @app.post("/v1/jobs/{name}/uploads")
    def renew_uploads(caller: Caller, name: JobName, owner: Owner = None) -> list[UploadTarget]:
        """Fresh presigned upload targets for a job not yet submitted."""
        return jobs.uploads(resolve_owner(caller, owner), name)

    @app.post("/v1/jobs/{name}/uploads/complete")
    def complete_upload(caller: Caller, name: JobName, body: CompleteUpload, owner: Owner = None) -> dict[str, str]:
        """Join the parts of a multipart upload."""
        parts = [(part.part_number, part.etag) for part in body.parts]
        jobs.complete_upload(resolve_owner(caller, owner), name, body.key, body.upload_id, parts)
        return {"key": body.key, "status": "complete"}

    @app.post("/v1/jobs/{name}/submit")
    def submit_job(caller: Caller, name: JobName, owner: Owner = None) -> JobStatus:
        """Submit the job to AWS Batch; a repeat returns the same Batch job."""
        if not (caller.operator or caller.allows(SUBMIT_CAPABILITY)):
            raise HPCRequestError(
                f"submitting spends shared capacity and needs the capability {SUBMIT_CAPABILITY!r}: "
                "call the HPC tool through Colony, whose gate budgets the job first",
                status_code=403,
            )
        return jobs.submit(resolve_owner(caller, owner), name)

    @app.get("/v1/jobs/{name}")
    def job_status(caller: Caller, name: JobName, owner: Owner = None) -> JobStatus:
        """The job's current state (and, if it failed, its log tail)."""
        return jobs.status(resolve_owner(caller, owner), name)

    @app.get("/v1/jobs/{name}/outputs")
    def job_outputs(caller: Caller, name: JobName, owner: Owner = None) -> list[OutputArtifact]:
        """The job's outputs with presigned download URLs."""
        return jobs.outputs(resolve_owner(caller, owner), name)

    @app.post("/v1/jobs/{name}/cancel")
    def cancel_job(caller: Caller, name: JobName, body: CancelRequest | None = None, owner: Owner = None) -> JobStatus:
        """Stop the job."""
        return jobs.cancel(resolve_owner(caller, owner), name, (body or CancelRequest()).reason)

    return app
