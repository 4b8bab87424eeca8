"""The import contracts in pyproject.toml hold, and they do catch an arrow pointing the wrong way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("colony", "flows", "tasks", "blocks", "tools")
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def lint_imports(source_root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the project's contracts over the packages found under ``source_root``."""
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    return subprocess.run(
        [LINT_IMPORTS, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=source_root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_contracts_hold() -> None:
    answer = lint_imports(ROOT)
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "0 broken" in answer.stdout


def test_colony_importing_flows_breaks_a_contract(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    capability = tmp_path / "colony" / "hpc" / "capability.py"
    capability.write_text(capability.read_text() + "\n\ndef _runner():\n    from flows.hpc_job import hpc_job\n")
    answer = lint_imports(tmp_path)
    assert answer.returncode == 1
    assert "Only colony.cli and flows import flows BROKEN" in answer.stdout
    assert "colony.hpc.capability -> flows.hpc_job" in answer.stdout


def test_the_mcp_server_importing_the_gateway_breaks_a_contract(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "colony" / "surfaces" / "mcp" / "results.py"
    results.write_text(
        results.read_text() + "\n\ndef _send():\n    from colony.surfaces.gateway.replies import send_json\n"
    )
    answer = lint_imports(tmp_path)
    assert answer.returncode == 1
    assert "The MCP server is served by the gateway and by colony mcp: it imports neither BROKEN" in answer.stdout
    assert "colony.surfaces.mcp.results -> colony.surfaces.gateway.replies" in answer.stdout
