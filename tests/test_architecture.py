"""The import contracts in pyproject.toml hold, and they do catch an arrow pointing the wrong way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
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


def with_import(source_root: Path, module: Path, statement: str) -> None:
    """A copy of the packages under ``source_root`` in which ``module`` (a path in the copy) makes one more import."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source_root / package, ignore=shutil.ignore_patterns("__pycache__"))
    target = source_root / module
    target.write_text(target.read_text() + f"\n\ndef _late():\n    {statement}\n")


def test_colony_importing_flows_breaks_a_contract(tmp_path: Path) -> None:
    with_import(tmp_path, Path("colony/hpc/capability.py"), "from flows.hpc_job import hpc_job")
    answer = lint_imports(tmp_path)
    assert answer.returncode == 1
    assert "Only colony.cli and flows import flows BROKEN" in answer.stdout
    assert "colony.hpc.capability -> flows.hpc_job" in answer.stdout


def test_the_hpc_service_and_tool_sides_importing_each_other_break_a_contract(tmp_path: Path) -> None:
    with_import(tmp_path, Path("colony/hpc/service/lifecycle.py"), "from colony.hpc.cycle import job_name")
    with_import(tmp_path / "tool", Path("colony/hpc/runner.py"), "from colony.hpc.service import create_app")
    service_side, tool_side = lint_imports(tmp_path), lint_imports(tmp_path / "tool")
    assert "The HPC service never imports the HPC tool side BROKEN" in service_side.stdout
    assert "colony.hpc.service.lifecycle -> colony.hpc.cycle" in service_side.stdout
    assert "The HPC tool side never imports the HPC service BROKEN" in tool_side.stdout
    assert "colony.hpc.runner -> colony.hpc.service" in tool_side.stdout


def test_mypy_checks_every_package_but_the_tests() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    roots = (ROOT, ROOT / config["mypy_path"])
    found = {path.name for root in roots for path in root.iterdir() if (path / "__init__.py").is_file()}
    assert found - {"tests"} == set(config["packages"])


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
