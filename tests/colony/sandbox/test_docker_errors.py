"""Every Docker SDK exception has its own translation, and transient ones are retryable."""

from __future__ import annotations

import inspect

import pytest
import requests
from docker import errors as docker_errors

from colony.errors import SandboxError, SandboxImageMissingError, SandboxUnavailableError
from colony.sandbox.docker_errors import RULES, DockerCall, docker_errors_translated, translate_docker_error

CALL = DockerCall("busybox", "colony-sandbox/busybox:1", "running 'sh'")


def _response(status: int) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.url = "http+docker://localhost/v1.41/containers/create"
    response.reason = "reason"
    return response


def test_every_docker_exception_class_has_its_own_rule() -> None:
    defined = {
        cls
        for _, cls in inspect.getmembers(docker_errors, inspect.isclass)
        if issubclass(cls, Exception) and cls.__module__ == docker_errors.__name__
    }
    assert defined, "docker.errors defines no exceptions?"
    assert defined - set(RULES) == set()


@pytest.mark.parametrize(
    ("error", "expected", "retryable"),
    [
        (docker_errors.DockerException("Error while fetching server API version"), SandboxUnavailableError, True),
        (
            docker_errors.APIError("boom", response=_response(500), explanation="engine broke"),
            SandboxUnavailableError,
            True,
        ),
        (docker_errors.APIError("bad", response=_response(400), explanation="bad parameter"), SandboxError, False),
        (
            docker_errors.ImageNotFound("gone", response=_response(404), explanation="No such image"),
            SandboxImageMissingError,
            False,
        ),
        (docker_errors.NotFound("gone", response=_response(404), explanation="No such container"), SandboxError, True),
        (requests.exceptions.ConnectionError("refused"), SandboxUnavailableError, True),
        (ConnectionResetError("reset"), SandboxUnavailableError, True),
        (docker_errors.BuildError("COPY failed", build_log=[]), SandboxError, False),
        (docker_errors.TLSParameterError("bad tls"), SandboxError, False),
    ],
)
def test_translation(error: BaseException, expected: type[SandboxError], retryable: bool) -> None:
    translated = translate_docker_error(error, CALL)
    assert type(translated) is expected
    assert translated.retryable is retryable
    assert "busybox" in str(translated)


def test_missing_image_names_the_build_command() -> None:
    error = docker_errors.ImageNotFound("gone", response=_response(404), explanation="No such image")
    assert "colony sandbox build busybox" in str(translate_docker_error(error, CALL))


def test_context_manager_translates_and_keeps_the_cause() -> None:
    with pytest.raises(SandboxUnavailableError) as raised, docker_errors_translated(CALL):
        raise requests.exceptions.ConnectionError("refused")
    assert isinstance(raised.value.__cause__, requests.exceptions.ConnectionError)


def test_colony_errors_pass_through_untouched() -> None:
    with pytest.raises(SandboxImageMissingError), docker_errors_translated(CALL):
        raise SandboxImageMissingError("already ours")
