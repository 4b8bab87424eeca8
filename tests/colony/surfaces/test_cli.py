"""``colony gateway`` refuses an unsafe or broken configuration before it listens."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from colony.cli import app


def test_binding_beyond_loopback_without_tokens_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLONY_GATEWAY_TOKENS", raising=False)
    result = CliRunner().invoke(app, ["gateway", "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert "needs bearer tokens" in " ".join(result.output.split())


def test_a_malformed_peer_list_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_GATEWAY_PEERS", '[{"url": "ftp://nowhere"}]')
    result = CliRunner().invoke(app, ["gateway"])
    assert result.exit_code == 1 and "gateway setting peers" in " ".join(result.output.split())
