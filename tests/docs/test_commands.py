"""The documentation's commands, run as written against a live gateway: a renamed flag breaks a test, not a reader.

Each scenario runs in a directory of its own, with the gateway's Colony home, so the CLI and the
gateway share one kernel. The reader's ``.venv/bin/colony`` is this environment's, the gateway's
address is the live one's, and ``export PREFECT_API_URL=...`` is left out: no Prefect server runs
here, so a decision leaves a held run to the tick, as the page says it would without it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.commands import Command, Scenario, scenarios
from tests.services.gateway import StartGateway

DOCS = Path(__file__).resolve().parents[2] / "docs"
COLONY = Path(sys.executable).with_name("colony")
PENDING = re.compile(r'approval ([0-9a-f-]{36}) is pending|"approval_id":\s*"([0-9a-f-]{36})",\s*"state":\s*"pending"')
STATUS = re.compile(r"\nHTTP (\d{3})\n?$")
CASES = [
    ("getting-started.md", "first-run"),
    ("guides/approvals.md", "approvals"),
    ("guides/policies.md", "policies"),
]


class Reader:
    """Runs a scenario's commands one by one, as a reader at a shell would, and checks each claim."""

    def __init__(self, workdir: Path, gateway: str, env: dict[str, str]) -> None:
        self.workdir, self.gateway, self.env = workdir, gateway, env
        self.exports: list[str] = []
        self.approval_id: str | None = None

    def run(self, command: Command) -> None:
        line = command.line
        if line.startswith("export PREFECT_API_URL="):
            return
        if line.startswith("export "):
            self.exports.append(line)
            return
        line = line.replace(".venv/bin/colony", str(COLONY)).replace("http://127.0.0.1:8787", self.gateway)
        if re.search(r"\bID\b", line):
            assert self.approval_id, f"no held call printed an approval id before: {command.line}"
            line = re.sub(r"\bID\b", self.approval_id, line)
        curl = line.startswith("curl ")
        if curl:
            line += " -sS -w '\\nHTTP %{http_code}\\n'"
        script = "; ".join([*self.exports, line])
        answer = subprocess.run(
            ["bash", "-c", script], cwd=self.workdir, env=self.env, capture_output=True, text=True, timeout=120
        )
        output = answer.stdout + answer.stderr
        shown = f"{command.line}\n--- exit {answer.returncode} ---\n{output[-3000:]}"
        assert answer.returncode == command.exit_code, shown
        for text in command.printed:
            assert text in output, f"expected {text!r} in the output of\n{shown}"
        if curl:
            status = STATUS.search(answer.stdout)
            assert status is not None, shown
            if command.http_status is not None:
                assert int(status.group(1)) == command.http_status, shown
            else:
                assert int(status.group(1)) < 400, shown
        held = PENDING.search(output)
        if held:
            self.approval_id = held.group(1) or held.group(2)


@pytest.mark.parametrize(("page", "name"), CASES, ids=[name for _, name in CASES])
def test_the_pages_commands_work_as_written(
    page: str, name: str, tmp_path: Path, colony_home: Path, busybox_image: str, start_gateway: StartGateway
) -> None:
    scenario: Scenario = scenarios(DOCS / page)[name]
    assert scenario.commands, f"{page} marks no commands for {name}"
    for relative, text in scenario.files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    env = {**os.environ, "COLONY_HOME": str(colony_home), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("PREFECT_API_URL", None)
    gateway = start_gateway(COLONY_HOME=str(colony_home))
    reader = Reader(tmp_path, gateway, env)
    for command in scenario.commands:
        reader.run(command)


def test_every_marked_page_is_tested() -> None:
    marked = {(str(page.relative_to(DOCS)), name) for page in DOCS.rglob("*.md") for name in scenarios(page)}
    assert marked == set(CASES)
