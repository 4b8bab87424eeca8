"""``colony sandbox``: build, roles and reap against the real engine; clear errors otherwise."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from colony.cli import app

runner = CliRunner()


def test_build_and_roles(docker_client: Any) -> None:
    built = runner.invoke(app, ["sandbox", "build", "busybox"])
    assert built.exit_code == 0, built.output
    assert "colony-sandbox/busybox:1" in built.output
    roles = runner.invoke(app, ["sandbox", "roles"])
    assert roles.exit_code == 0 and "busybox" in roles.output and "yes" in roles.output


def test_unknown_role_is_a_clear_error() -> None:
    result = runner.invoke(app, ["sandbox", "build", "cobol"])
    assert result.exit_code == 1
    assert "role 'cobol'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_reap(docker_client: Any) -> None:
    result = runner.invoke(app, ["sandbox", "reap"])
    assert result.exit_code == 0 and "orphaned sandbox container" in result.output
