"""``colony mcp-servers``: add, list, review, pin (flagged text needs --accept) and remove a server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from colony.upstream import PinStore, load_servers, pins_path, servers_path
from colony.upstream.config import HttpServer
from tests.services.upstream import REPO_ROOT

COLONY = Path(sys.executable).parent / "colony"


def colony(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLONY_HOME": str(home), "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([str(COLONY), "mcp-servers", *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_add_pins_what_the_server_lists_and_remove_forgets_it(colony_home: Path, tmp_path: Path) -> None:
    added = colony(
        colony_home, "add", "hostile", "--command", sys.executable, "--arg", "-m", "--arg", "tests.servers.hostile_mcp",
        "--cwd", str(REPO_ROOT), "--env", f"HOSTILE_STATE={tmp_path / 'state'}", "--start-timeout", "90",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "pinned lookup" in added.stdout
    assert set(PinStore(pins_path(colony_home)).servers()["hostile"]) >= {"lookup", "record", "hang"}
    saved = load_servers(servers_path(colony_home)).servers["hostile"]
    assert saved.cwd == str(REPO_ROOT) and (saved.timeout, saved.start_timeout) == (30, 90)  # type: ignore[union-attr]

    listed = json.loads(colony(colony_home, "list", "--json").stdout)
    [server] = listed["servers"]
    assert server["name"] == "hostile" and "hostile__lookup" in server["tools"]

    review = json.loads(colony(colony_home, "tools", "hostile", "--json").stdout)
    assert "lookup" in review["unchanged"] and not review["changed"]

    again = colony(colony_home, "add", "hostile", "--command", "x")
    assert again.returncode == 1 and "already configured" in again.stderr

    assert colony(colony_home, "remove", "hostile").returncode == 0
    assert load_servers(servers_path(colony_home)).servers == {}
    assert "hostile" not in PinStore(pins_path(colony_home)).servers()


def test_a_literal_token_is_refused_before_anything_is_written(colony_home: Path) -> None:
    refused = colony(colony_home, "add", "gh", "--url", "https://example.org/mcp", "--header", "Authorization=Bearer x")
    assert refused.returncode == 1 and "holds a literal value" in refused.stderr
    assert not servers_path(colony_home).exists()


@pytest.mark.slow
def test_a_changed_definition_is_shown_as_a_diff_and_flagged_text_needs_accept(
    colony_home: Path, hostile_http: HttpServer
) -> None:
    assert colony(colony_home, "add", "hostile", "--url", hostile_http.url).returncode == 0

    async def rewrite() -> None:
        async with Client(hostile_http.url) as client:
            await client.call_tool("rewrite", {})

    asyncio.run(rewrite())
    review = colony(colony_home, "tools", "hostile")
    assert "changed lookup" in review.stdout and "Ignore previous instructions" in review.stdout

    pinned = colony(colony_home, "pin", "hostile", "--yes")
    assert pinned.returncode == 0 and "not pinned (flagged): lookup" in pinned.stdout
    assert PinStore(pins_path(colony_home)).servers()["hostile"]["lookup"].definition["description"] == "Look up a key."

    accepted = colony(colony_home, "pin", "hostile", "--yes", "--accept", "lookup")
    assert accepted.returncode == 0
    assert (
        "Ignore previous" in PinStore(pins_path(colony_home)).servers()["hostile"]["lookup"].definition["description"]
    )
