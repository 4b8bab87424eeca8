"""``HPCClient``: the HPC REST service over httpx (async), with uploads streamed from disk.

Retries are limited to what is safe: a request that never reached the service
(connection refused, connect timeout) is retried always; one that may have
reached it (read timeout, 502/503/504) only when the call is idempotent. Every
service call is idempotent by job name except completing a multipart upload.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, TypeAdapter

from colony.errors import AWSError, HPCError, HPCLimitError, HPCRequestError, HPCUnavailableError
from colony.hpc.models import JobCreated, JobRequest, JobStatus, OutputArtifact, UploadTarget

__all__ = ["CHUNK_BYTES", "HPCClient", "HPCClientConfig"]

#: Bytes read from disk per chunk when streaming an upload or a download.
CHUNK_BYTES = 1024 * 1024
_RETRY_STATUSES = frozenset({502, 503, 504})
_UPLOADS = TypeAdapter(list[UploadTarget])
_OUTPUTS = TypeAdapter(list[OutputArtifact])


class HPCClientConfig(BaseModel):
    """How to reach the service: plain data, so a Prefect flow can take it as a parameter."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint: str = Field(description="Base URL of the HPC REST service.")
    token: SecretStr = Field(description="Bearer token.")
    timeout_seconds: float = Field(default=30.0, gt=0, description="Timeout of each HTTP request.")
    retries: int = Field(default=3, ge=0, description="Extra attempts for a request it is safe to repeat.")
    retry_backoff_seconds: float = Field(default=0.2, ge=0, description="First pause between attempts (doubles).")


def _error_from(response: httpx.Response) -> HPCError:
    try:
        detail: dict[str, Any] = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        detail = {"type": "", "message": response.text[:500] or response.reason_phrase}
    message = str(detail.get("message", ""))
    kind = detail.get("type")
    if kind == "HPCLimitError":
        return HPCLimitError(list(detail.get("violations") or [message]))
    if kind == "AWSError":
        return AWSError(
            message,
            code=str(detail.get("code", "Unknown")),
            operation=str(detail.get("operation", "")),
            retryable=response.status_code == 503,
        )
    if response.status_code in _RETRY_STATUSES:
        return HPCUnavailableError(f"HPC service answered {response.status_code}: {message}")
    return HPCRequestError(message, status_code=response.status_code)


async def _file_chunks(path: Path, offset: int, length: int) -> AsyncIterator[bytes]:
    with path.open("rb") as handle:
        handle.seek(offset)
        remaining = length
        while remaining > 0:
            chunk = handle.read(min(CHUNK_BYTES, remaining))
            if not chunk:
                raise HPCRequestError(f"{path} is shorter than declared while uploading")
            remaining -= len(chunk)
            yield chunk


class HPCClient:
    """Async client of the HPC REST service; one per process is enough."""

    def __init__(self, config: HPCClientConfig, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        self._transport = transport

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.config.endpoint,
            timeout=self.config.timeout_seconds,
            transport=self._transport,
            headers={"Authorization": f"Bearer {self.config.token.get_secret_value()}"},
        )

    async def _call(self, method: str, path: str, *, idempotent: bool, json: Any = None) -> Any:
        pause = self.config.retry_backoff_seconds
        for attempt in range(self.config.retries + 1):
            last = attempt == self.config.retries
            try:
                async with self._http() as http:
                    response = await http.request(method, path, json=json)
            except (httpx.ConnectError, httpx.ConnectTimeout) as error:
                if last:
                    raise HPCUnavailableError(
                        f"HPC service at {self.config.endpoint} is unreachable: {error}"
                    ) from None
            except httpx.TransportError as error:
                if last or not idempotent:
                    raise HPCUnavailableError(
                        f"HPC service at {self.config.endpoint} failed mid-request: {error}"
                    ) from None
            else:
                if response.is_success:
                    return response.json()
                if not (idempotent and response.status_code in _RETRY_STATUSES) or last:
                    raise _error_from(response)
            await asyncio.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    async def health(self) -> bool:
        """Whether the service answers at all."""
        await self._call("GET", "/v1/health", idempotent=True)
        return True

    async def create_job(self, request: JobRequest) -> JobCreated:
        """Create (or find) the job's record; upload targets for each input until it is submitted."""
        body = await self._call("POST", "/v1/jobs", idempotent=True, json=request.model_dump(mode="json"))
        return JobCreated.model_validate(body)

    async def renew_uploads(self, name: str) -> list[UploadTarget]:
        """Fresh upload targets, when the earlier ones expired."""
        return _UPLOADS.validate_python(await self._call("POST", f"/v1/jobs/{name}/uploads", idempotent=True))

    async def submit(self, name: str) -> JobStatus:
        """Submit the job to Batch (the service never submits one name twice)."""
        return JobStatus.model_validate(await self._call("POST", f"/v1/jobs/{name}/submit", idempotent=True))

    async def status(self, name: str) -> JobStatus:
        """The job's state now."""
        return JobStatus.model_validate(await self._call("GET", f"/v1/jobs/{name}", idempotent=True))

    async def outputs(self, name: str) -> list[OutputArtifact]:
        """The outputs of a SUCCEEDED job, with download URLs."""
        return _OUTPUTS.validate_python(await self._call("GET", f"/v1/jobs/{name}/outputs", idempotent=True))

    async def cancel(self, name: str, reason: str = "cancelled by request") -> JobStatus:
        """Stop the job."""
        body = await self._call("POST", f"/v1/jobs/{name}/cancel", idempotent=True, json={"reason": reason})
        return JobStatus.model_validate(body)

    async def upload(self, name: str, target: UploadTarget, path: Path) -> None:
        """Stream ``path`` to its presigned target(s), a chunk at a time; never the whole file in memory."""
        if target.expires_at <= datetime.now(UTC):
            raise HPCRequestError(f"the upload URL for {path.name} has expired", status_code=403)
        size = path.stat().st_size
        if target.url is not None:
            await self._put(target.url, path, 0, size, target.content_type)
            return
        part_size = target.part_size or size
        etags = []
        for part in target.parts:
            offset = (part.part_number - 1) * part_size
            etags.append(
                {
                    "part_number": part.part_number,
                    "etag": await self._put(part.url, path, offset, min(part_size, size - offset)),
                }
            )
        body = {"key": target.key, "upload_id": target.upload_id, "parts": etags}
        await self._call("POST", f"/v1/jobs/{name}/uploads/complete", idempotent=False, json=body)

    async def _put(self, url: str, path: Path, offset: int, length: int, content_type: str | None = None) -> str:
        headers = {"Content-Length": str(length)}
        if content_type is not None:
            headers["Content-Type"] = content_type  # signed into the URL: S3 refuses the PUT without it
        try:
            async with httpx.AsyncClient(timeout=self.config.timeout_seconds, transport=self._transport) as http:
                response = await http.put(url, content=_file_chunks(path, offset, length), headers=headers)
        except httpx.TransportError as error:
            raise HPCUnavailableError(f"upload of {path.name} could not reach S3: {error}") from None
        if response.status_code == 403 and "expired" in response.text.lower():
            raise HPCRequestError(f"the upload URL for {path.name} has expired", status_code=403)
        if not response.is_success:
            raise HPCRequestError(
                f"upload of {path.name} was refused ({response.status_code}): {response.text[:300]}",
                status_code=response.status_code,
            )
        return response.headers.get("ETag", "")

    async def download(self, artifact: OutputArtifact, destination: Path) -> Path:
        """Stream one output to ``destination`` (a file path), a chunk at a time."""
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            async with (
                httpx.AsyncClient(timeout=self.config.timeout_seconds, transport=self._transport) as http,
                http.stream("GET", artifact.url) as response,
            ):
                if not response.is_success:
                    raise HPCRequestError(
                        f"download of {artifact.key} was refused ({response.status_code})",
                        status_code=response.status_code,
                    )
                with destination.open("wb") as handle:
                    async for chunk in response.aiter_bytes(CHUNK_BYTES):
                        handle.write(chunk)
        except httpx.TransportError as error:
            raise HPCUnavailableError(f"download of {artifact.key} could not reach S3: {error}") from None
        return destination
