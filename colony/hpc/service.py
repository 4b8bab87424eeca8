"""The HPC REST service: FastAPI over ``JobService``, behind a bearer token.

``create_app(settings)`` builds it; ``colony hpc serve`` runs it with uvicorn.
Errors answer ``{"error": {...}}`` with the Colony error's fields (an AWS
error keeps its ``code``), and a status that says whose fault it was.
"""

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from colony.errors import AWSError, ColonyError, HPCLimitError, HPCRequestError, HPCUnavailableError
from colony.hpc.backend import BatchBackend
from colony.hpc.jobs import JobService
from colony.hpc.models import CompletedPart, JobCreated, JobRequest, JobStatus, OutputArtifact, UploadTarget, error_body
from colony.hpc.settings import HPCSettings

__all__ = ["create_app", "status_for"]

_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "NoSuchUpload", "NotFound", "404"})
_DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "InvalidAccessKeyId", "SignatureDoesNotMatch"})


class CompleteUpload(BaseModel):
    """The parts of one finished multipart upload."""

    key: str = Field(description="The artifact's key.")
    upload_id: str = Field(description="The multipart upload id the service handed out.")
    parts: list[CompletedPart] = Field(min_length=1, description="Every part, with the ETag S3 answered.")


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


def create_app(settings: HPCSettings, backend: BatchBackend | None = None) -> FastAPI:
    """The service's ASGI app, for ``settings`` (a token is required)."""
    token = settings.token.get_secret_value()
    if not token:
        raise HPCRequestError("the HPC service needs a bearer token: set COLONY_HPC_TOKEN", status_code=500)
    jobs = JobService(backend or BatchBackend(settings))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        jobs.backend.close()

    bearer = HTTPBearer(auto_error=False)

    def authorized(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> None:
        if credentials is None or not secrets.compare_digest(credentials.credentials.encode(), token.encode()):
            raise HPCRequestError("missing or wrong bearer token", status_code=401)

    app = FastAPI(
        title="Colony HPC service",
        version="1.0.0",
        description="Runs tool jobs on AWS Batch with inputs and outputs in S3.",
        lifespan=lifespan,
    )
    api = [Depends(authorized)]

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

    @app.post("/v1/jobs", dependencies=api)
    def create_job(request: JobRequest) -> JobCreated:
        """Create the job's record (or return the existing one) and presigned upload targets."""
        return jobs.create(request)

    @app.post("/v1/jobs/{name}/uploads", dependencies=api)
    def renew_uploads(name: str) -> list[UploadTarget]:
        """Fresh presigned upload targets for a job not yet submitted."""
        return jobs.uploads(name)

    @app.post("/v1/jobs/{name}/uploads/complete", dependencies=api)
    def complete_upload(name: str, body: CompleteUpload) -> dict[str, str]:
        """Join the parts of a multipart upload."""
        jobs.complete_upload(name, body.key, body.upload_id, [(part.part_number, part.etag) for part in body.parts])
        return {"key": body.key, "status": "complete"}

    @app.post("/v1/jobs/{name}/submit", dependencies=api)
    def submit_job(name: str) -> JobStatus:
        """Submit the job to AWS Batch; a repeat returns the same Batch job."""
        return jobs.submit(name)

    @app.get("/v1/jobs/{name}", dependencies=api)
    def job_status(name: str) -> JobStatus:
        """The job's current state (and, if it failed, its log tail)."""
        return jobs.status(name)

    @app.get("/v1/jobs/{name}/outputs", dependencies=api)
    def job_outputs(name: str) -> list[OutputArtifact]:
        """The job's outputs with presigned download URLs."""
        return jobs.outputs(name)

    @app.post("/v1/jobs/{name}/cancel", dependencies=api)
    def cancel_job(name: str, body: CancelRequest | None = None) -> JobStatus:
        """Stop the job."""
        return jobs.cancel(name, (body or CancelRequest()).reason)

    return app
