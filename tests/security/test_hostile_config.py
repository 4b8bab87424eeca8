"""Hostile configuration and hostile peers: each is one clear line or a PeerError, never a traceback or a 500.

A COLONY_HOME that is a file, cannot be created or is read-only stops every
command before it does anything; a registry entry whose ``extra`` nests 10,000
levels is named; a peer (or whatever answers at a peer's address) sending
garbage is a PeerError through the gateway's router and ``UnifiedToolClient``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from colony.catalog import load_registry
from colony.errors import PeerError, RegistryFileError
from colony.runtime import Catalog
from colony.surfaces.client import UnifiedToolClient
from tests.services import unavailable
from tests.services.gateway import StartGateway
from tests.services.peers import StartMisbehavingPeer

REPO_ROOT = Path(__file__).resolve().parents[2]
COLONY = str(Path(sys.executable).parent / "colony")
CONVERT = '{"value": 1, "from_unit": "km", "to_unit": "m"}'
COMMANDS = {
    "tools call": ["tools", "call", "unit_convert", CONVERT],
    "kernel status": ["kernel", "status"],
    "mcp": ["mcp"],
    "gateway": ["gateway", "--port", "0"],
}


def colony(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **env}
    return subprocess.run(
        [COLONY, *args], env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-2000:]
    assert "Traceback" not in result.stderr and not result.stdout
    return lines[0]


def read_only_directory(tmp_path: Path) -> Path:
    """A directory this process cannot write: a 0555 one, or (as root, which ignores modes) /sys."""
    candidate = tmp_path / "read-only"
    candidate.mkdir()
    candidate.chmod(0o555)
    for directory in (candidate, Path("/sys")):
        try:
            with tempfile.TemporaryFile(dir=directory):
                pass
        except OSError:
            return directory
    unavailable("no directory here is read-only to this process (root on writable filesystems)")


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_a_colony_home_that_is_a_file_stops_every_command(command: str, tmp_path: Path) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory")
    line = one_line_error(colony(*COMMANDS[command], COLONY_HOME=str(home)))
    assert line == f"error: COLONY_HOME {home} is not a directory (it is a file)"


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_a_colony_home_that_cannot_be_created_stops_every_command(command: str, tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where a directory should be")
    home = tmp_path / "blocker" / "home"
    line = one_line_error(colony(*COMMANDS[command], COLONY_HOME=str(home)))
    assert line.startswith(f"error: COLONY_HOME {home} cannot be created: ")


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_a_read_only_colony_home_stops_every_command(command: str, tmp_path: Path) -> None:
    home = read_only_directory(tmp_path)
    line = one_line_error(colony(*COMMANDS[command], COLONY_HOME=str(home)))
    assert line.startswith(f"error: COLONY_HOME {home} is not writable: ")


def deep_registry(root: Path, depth: int = 10_000) -> Path:
    """A registry whose second entry's ``extra`` nests ``depth`` levels of dicts in lists."""
    nested = '[{"a": ' * depth + "1" + "}]" * depth
    text = (
        '{"version": 1, "tools": [{"name": "unit_convert", "capability": "convert_units", '
        '"capability_fqn": "tools.unit_convert.UnitConvert"}, '
        f'{{"name": "deep_one", "capability_fqn": "", "extra": {{"x": {nested}}}}}]}}'
    )
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


@pytest.mark.slow
def test_a_deeply_nested_registry_extra_names_the_entry(tmp_path: Path) -> None:
    path = deep_registry(tmp_path / "repo")
    with pytest.raises(RegistryFileError, match=r"entry 1 \('deep_one'\): nested too deeply") as raised:
        load_registry(path)
    assert "may nest 32 levels" in str(raised.value)
    with pytest.raises(RegistryFileError, match="deep_one"):
        Catalog(path)
    line = one_line_error(colony("tools", "list", COLONY_REPO_ROOT=str(tmp_path / "repo")))
    assert "entry 1 ('deep_one'): nested too deeply" in line
    assert "deep_one" in one_line_error(colony("mcp", COLONY_REPO_ROOT=str(tmp_path / "repo")))


def test_moderately_deep_extra_is_refused_by_the_entry_check(tmp_path: Path) -> None:
    path = tmp_path / "tool-registry.json"
    nested: Any = "leaf"
    for _ in range(40):
        nested = [nested]
    path.write_text(json.dumps({"version": 1, "tools": [{"name": "stub", "extra": {"x": nested}}]}))
    with pytest.raises(RegistryFileError, match=r"entry 0 \('stub'\): extra: .*nested deeper than 32 levels"):
        load_registry(path)


MALFORMED_ANSWERS: dict[str, Any] = {
    "not JSON": b"<html>502 Bad Gateway</html>",
    "a JSON list": [1, 2, 3],
    "ok is not a boolean": {"ok": "yes", "result": 1},
    "a verdict that is not an object": {"ok": True, "result": 1, "verdict": "execute"},
    "field errors that are not a list": {
        "ok": False,
        "error": {"type": "ToolInputError", "message": "bad", "errors": "value: wrong"},
    },
    "missing tokens that are not a list": {
        "ok": False,
        "error": {"type": "CapabilityDeniedError", "message": "no", "missing": 5},
    },
    "a verdict in an error that is not an object": {
        "ok": False,
        "error": {"type": "ActionNotExecutedError", "message": "refused", "verdict": ["refuse"]},
    },
    "JSON nested beyond any parser's depth": b"[" * 200_000,
}


def test_a_malformed_peer_answer_is_a_peer_error(
    start_gateway: StartGateway, start_misbehaving_peer: StartMisbehavingPeer
) -> None:
    peer = start_misbehaving_peer()
    gateway = start_gateway(COLONY_GATEWAY_PEERS=peer.url)
    body = {"target": {"kind": "remote", "url": peer.url}, "tool_name": "unit_convert", "tool_args": {}}
    client = UnifiedToolClient()
    for answer, content in MALFORMED_ANSWERS.items():
        peer.answer("/v1/tool_call", content)
        response = httpx.post(f"{gateway}/v1/tool_call", json=body, timeout=30)
        assert response.status_code == 502, (answer, response.text)
        assert response.json()["error"]["type"] == "PeerError", answer
        with pytest.raises(PeerError):
            client.call_tool_remote(http_url=peer.url, tool_name="unit_convert", tool_args={})
