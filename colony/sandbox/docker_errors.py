"""The one place Docker SDK exceptions become Colony errors.

Transient failures (the engine is unreachable, answered 5xx, dropped the
connection, or lost a container mid-call) become retryable errors; mistakes a
retry cannot fix (a missing image, a refused request) do not. A test checks that
every exception class ``docker.errors`` defines has its own rule here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import requests
from docker import errors as docker_errors

from colony.errors import SandboxError, SandboxImageMissingError, SandboxUnavailableError

__all__ = ["RULES", "DockerCall", "docker_errors_translated", "translate_docker_error"]


@dataclass(frozen=True)
class DockerCall:
    """What Colony was doing when Docker failed, for the message."""

    role: str
    image: str
    doing: str = "running the sandbox"


def _engine() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def _explain(error: BaseException) -> str:
    explanation = getattr(error, "explanation", None)
    return str(explanation or error).strip() or type(error).__name__


def _unavailable(error: BaseException, call: DockerCall) -> SandboxError:
    return SandboxUnavailableError(
        f"no Docker engine answers at {_engine()} while {call.doing} for sandbox role {call.role!r} "
        f"(is dockerd running and DOCKER_HOST right?): {_explain(error)}"
    )


def _api_error(error: BaseException, call: DockerCall) -> SandboxError:
    status = getattr(error, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return SandboxUnavailableError(
            f"the Docker engine failed ({status}) while {call.doing} for sandbox role {call.role!r}: {_explain(error)}"
        )
    return SandboxError(f"Docker refused {call.doing} for sandbox role {call.role!r} ({status}): {_explain(error)}")


def _image_missing(error: BaseException, call: DockerCall) -> SandboxError:
    return SandboxImageMissingError(
        f"image {call.image!r} for sandbox role {call.role!r} is not on this Docker engine; "
        f"build it with `colony sandbox build {call.role}`"
    )


def _container_gone(error: BaseException, call: DockerCall) -> SandboxError:
    return SandboxError(
        f"the sandbox container for role {call.role!r} disappeared while {call.doing}: {_explain(error)}",
        retryable=True,
    )


def _stream_broken(error: BaseException, call: DockerCall) -> SandboxError:
    return SandboxUnavailableError(
        f"the Docker engine's stream broke while {call.doing} for sandbox role {call.role!r}: {_explain(error)}"
    )


def _misconfigured(error: BaseException, call: DockerCall) -> SandboxError:
    return SandboxError(
        f"Docker client configuration is wrong ({type(error).__name__}) while {call.doing} "
        f"for sandbox role {call.role!r}: {_explain(error)}"
    )


def _refused(error: BaseException, call: DockerCall) -> SandboxError:
    return SandboxError(f"{call.doing} for sandbox role {call.role!r} failed: {_explain(error)}")


def _build_failed(error: BaseException, call: DockerCall) -> SandboxError:
    return SandboxError(f"building image {call.image!r} for sandbox role {call.role!r} failed: {_explain(error)}")


Rule = Callable[[BaseException, DockerCall], SandboxError]

#: Exception class -> translation. Looked up along the exception's MRO, most specific first.
RULES: dict[type[BaseException], Rule] = {
    docker_errors.ImageNotFound: _image_missing,
    docker_errors.NotFound: _container_gone,
    docker_errors.APIError: _api_error,
    docker_errors.BuildError: _build_failed,
    docker_errors.ImageLoadError: _build_failed,
    docker_errors.ContainerError: _refused,
    docker_errors.NullResource: _refused,
    docker_errors.InvalidArgument: _refused,
    docker_errors.InvalidRepository: _refused,
    docker_errors.DeprecatedMethod: _refused,
    docker_errors.InvalidVersion: _misconfigured,
    docker_errors.InvalidConfigFile: _misconfigured,
    docker_errors.TLSParameterError: _misconfigured,
    docker_errors.MissingContextParameter: _misconfigured,
    docker_errors.ContextAlreadyExists: _misconfigured,
    docker_errors.ContextException: _misconfigured,
    docker_errors.ContextNotFound: _misconfigured,
    docker_errors.StreamParseError: _stream_broken,
    # Raised bare by the client when it cannot reach the engine at all.
    docker_errors.DockerException: _unavailable,
    # Raised from under the SDK when the engine goes away mid-call.
    requests.exceptions.RequestException: _unavailable,
    ConnectionError: _unavailable,
    TimeoutError: _unavailable,
}


def translate_docker_error(error: BaseException, call: DockerCall) -> SandboxError:
    """The Colony error for ``error``; a class with no rule is a bug, reported as such."""
    for cls in type(error).__mro__:
        rule = RULES.get(cls)
        if rule is not None:
            return rule(error, call)
    return SandboxError(f"unexpected {type(error).__name__} while {call.doing}: {error}")


#: What ``docker_errors_translated`` catches: everything ``RULES`` knows how to translate.
TRANSLATED: tuple[type[BaseException], ...] = tuple(RULES)


@contextmanager
def docker_errors_translated(call: DockerCall) -> Iterator[None]:
    """Run a block of Docker SDK calls, re-raising its failures as Colony errors."""
    try:
        yield
    except TRANSLATED as error:
        raise translate_docker_error(error, call) from error
