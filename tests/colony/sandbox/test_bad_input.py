"""Bad input and missing pieces get a clear error naming what is wrong, never a traceback."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from colony.errors import (
    SandboxImageMissingError,
    SandboxUnavailableError,
    ToolInputError,
    UnknownSandboxRoleError,
)
from colony.kernel import ColonyKernel
from colony.sandbox import ImageRole, SandboxConfig, SandboxSession
from tests.colony.sandbox.conftest import TightShell

DEAD_ENGINE = "unix:///nonexistent/docker.sock"


def _tool_with_roles(**roles: ImageRole) -> TightShell:
    return TightShell(session=SandboxSession(SandboxConfig(roles=roles)))


def test_unknown_role_is_named() -> None:
    tool = _tool_with_roles(python=ImageRole(image="py:1"))
    with pytest.raises(UnknownSandboxRoleError, match=r"role 'busybox'.*configured roles: python"):
        asyncio.run(tool.invoke("run", {"script": "true"}))
    assert "no sandbox image is configured for role 'busybox'" in tool.check_preconditions()["warnings"][0]


def test_missing_image_gives_the_build_hint(docker_client: Any) -> None:
    tool = _tool_with_roles(busybox=ImageRole(image="colony-sandbox/absent:0"))
    with pytest.raises(SandboxImageMissingError, match="colony sandbox build busybox") as raised:
        asyncio.run(tool.invoke("run", {"script": "true"}))
    assert not raised.value.retryable
    report = tool.check_preconditions()
    assert not report["ok"]
    assert any("colony sandbox build busybox" in warning for warning in report["warnings"])


@pytest.mark.parametrize(
    ("command", "field"),
    [("echo hi", "command"), ([], "command"), (["echo", 3], "command.1"), (["echo", "a\x00b"], "command.1")],
)
def test_command_must_be_a_list_of_strings(busybox_image: str, command: Any, field: str) -> None:
    tool = TightShell()
    with pytest.raises(ToolInputError) as raised:
        asyncio.run(tool._exec_in_sandbox(command))
    assert raised.value.errors[0].field == field
    assert tool.sandbox_session.container_id(tool._container_plan()) is None  # refused before any container


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({"script": 1}, "script"), ({"script": "x", "files": {"../x": "y"}}, "files.../x")],
)
def test_bad_arguments_are_input_errors(arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(ToolInputError) as raised:
        asyncio.run(TightShell().invoke("run", arguments))
    assert raised.value.errors[0].field == field


@pytest.fixture
def dead_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """DOCKER_HOST at a socket nobody listens on.

    The docker SDK leaks the socket of a failed unix connect (transport/unixconn.py
    never closes it); that ResourceWarning is the SDK's, so it is collected and
    silenced here rather than failing the test.
    """
    monkeypatch.setenv("DOCKER_HOST", DEAD_ENGINE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        yield
        gc.collect()


@pytest.mark.usefixtures("dead_engine")
def test_engine_down_is_a_retryable_clear_error() -> None:
    tool = TightShell()
    with pytest.raises(SandboxUnavailableError, match="no Docker engine answers at unix:///nonexistent") as raised:
        asyncio.run(tool.invoke("run", {"script": "true"}))
    assert raised.value.retryable
    assert SandboxUnavailableError in tool.retryable_errors
    warnings = tool.check_preconditions()["warnings"]
    assert any("no Docker engine answers" in warning for warning in warnings)


@pytest.mark.slow
def test_engine_down_from_the_cli_prints_no_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", DEAD_ENGINE)
    ColonyKernel.from_env().set_trust("builder", 0.9)  # the gate lets the call through: the engine is what fails
    arguments = json.dumps({"script": "echo hi"})
    case = ["--agent", "builder", "--rationale", "Say hello from the sandbox for the smoke check",
            "--rollback-plan", "Nothing to undo", "--evidence", '{"tests": ["tests/colony/sandbox"]}']  # fmt: skip
    done = subprocess.run(
        [str(Path(sys.executable).parent / "colony"), "tools", "call", "shell_exec", arguments, "--json", *case],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["type"] == "SandboxUnavailableError"
    assert "is dockerd running" in error["message"]
