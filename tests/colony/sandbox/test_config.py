"""Image roles: the built-in table, the environment override, and the errors that name the role."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from colony.errors import SandboxError, UnknownSandboxRoleError
from colony.sandbox.config import ENV_VARIABLE, ImageRole, SandboxConfig


def test_default_table_has_busybox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VARIABLE, raising=False)
    assert SandboxConfig.from_env().role("busybox").image == "colony-sandbox/busybox:1"


def test_environment_adds_and_replaces_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VARIABLE, json.dumps({"python": {"image": "py:1", "pids_limit": 128}}))
    config = SandboxConfig.from_env()
    assert config.role("python").pids_limit == 128
    assert config.role("busybox").image == "colony-sandbox/busybox:1"


def test_unknown_role_names_the_role_and_the_known_ones() -> None:
    with pytest.raises(UnknownSandboxRoleError, match=r"role 'fortran'.*configured roles: busybox"):
        SandboxConfig().role("fortran")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1]", "must be a JSON object"),
        (json.dumps({"python": {"image": ""}}), r"python\.image"),
        (json.dumps({"python": {"image": "p", "bogus": 1}}), r"python\.bogus"),
    ],
)
def test_bad_environment_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, raw: str, message: str) -> None:
    monkeypatch.setenv(ENV_VARIABLE, raw)
    with pytest.raises(SandboxError, match=message):
        SandboxConfig.from_env()


@pytest.mark.parametrize("user", ["0:0", "root", "65533:1"])
def test_root_or_keeper_user_is_refused(user: str) -> None:
    with pytest.raises(ValidationError):
        ImageRole(image="x", user=user)
