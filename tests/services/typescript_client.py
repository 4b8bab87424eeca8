"""The official TypeScript MCP SDK client, run by Node from tests/clients/ts (installed by scripts/services.sh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.services import unavailable

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIENT_DIR = REPO_ROOT / "tests" / "clients" / "ts"
MINIMUM_NODE = 18


@dataclass(frozen=True)
class TypeScriptClient:
    """Runs ``exercise.mjs``: list every tool, make each planned call, return what the SDK client saw."""

    node: str
    sdk_version: str

    def run(
        self,
        plan: list[dict[str, Any]],
        workdir: Path,
        *,
        stdio: list[str] | None = None,
        url: str | None = None,
        headers: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 240.0,
    ) -> dict[str, Any]:
        """The report for ``plan``, over stdio (``stdio`` is the server command) or streamable HTTP (``url``)."""
        plan_file = workdir / "plan.json"
        plan_file.write_text(json.dumps(plan))
        command = [self.node, str(CLIENT_DIR / "exercise.mjs"), "--plan", str(plan_file)]
        if url is not None:
            command += ["--http", url]
            for name, value in (headers or {}).items():
                command += ["--header", f"{name}={value}"]
        else:
            command += ["--stdio", "--", *(stdio or [])]
        finished = subprocess.run(
            command, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout, check=False
        )
        assert finished.returncode == 0, f"exercise.mjs exited {finished.returncode}: {finished.stderr[-4000:]}"
        report: dict[str, Any] = json.loads(finished.stdout)
        return report


@pytest.fixture(scope="session")
def typescript_client() -> TypeScriptClient:
    """Node and the SDK as ``npm ci`` installed them; unavailable (a failure in CI) when either is missing."""
    node = shutil.which("node")
    if node is None:
        unavailable("node is not installed (scripts/services.sh installs Debian's nodejs and npm)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    major = int(version.lstrip("v").split(".")[0]) if version.lstrip("v")[:1].isdigit() else 0
    if major < MINIMUM_NODE:
        unavailable(f"node {version or '(unknown version)'} is too old: the MCP SDK needs {MINIMUM_NODE} or later")
    installed = CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    if not installed.exists():
        unavailable(f"the TypeScript MCP SDK is not installed: run `npm ci` in {CLIENT_DIR} (scripts/services.sh does)")
    locked = json.loads((CLIENT_DIR / "package-lock.json").read_text())["packages"]
    wanted = locked["node_modules/@modelcontextprotocol/sdk"]["version"]
    have = json.loads(installed.read_text())["version"]
    if have != wanted:
        unavailable(f"the TypeScript MCP SDK installed is {have}, the lock pins {wanted}: run `npm ci` in {CLIENT_DIR}")
    return TypeScriptClient(node=node, sdk_version=have)
