"""The documentation site builds strictly, and its reference pages are the code's own output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from colony.catalog import load_registry
from colony.docs import render_tools_reference
from colony.surfaces.error_mapping import HTTP_STATUS
from colony.surfaces.gateway import create_app
from colony.surfaces.gateway.settings import GatewaySettings

# One build of the site for the module, on one worker: the build takes seconds.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("docs-site")]

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).with_name("mkdocs")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``make docs`` builds it (``mkdocs build --strict``), into a directory of its own."""
    output = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    answer = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(output)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert answer.returncode == 0, answer.stdout + answer.stderr
    return output


def test_the_tools_page_is_what_colony_tools_docs_prints(site: Path) -> None:
    assert not (ROOT / "docs" / "reference" / "tools.md").exists(), "the tools reference is generated, not committed"
    page = (site / "reference" / "tools" / "index.html").read_text(encoding="utf-8")
    reference = render_tools_reference(load_registry())
    for line in reference.splitlines():
        if line.startswith("## "):
            assert f'id="{line[3:]}"' in page, f"tools page lacks {line[3:]}"


def test_the_http_page_carries_the_schema_the_gateway_serves(site: Path) -> None:
    served = create_app(GatewaySettings()).openapi()
    assert json.loads((site / "reference" / "openapi.json").read_text(encoding="utf-8")) == served
    page = (site / "reference" / "http" / "index.html").read_text(encoding="utf-8")
    for path in served["paths"]:
        assert path in page


def test_every_setting_and_every_command_is_on_its_page(site: Path) -> None:
    settings = (site / "reference" / "settings" / "index.html").read_text(encoding="utf-8")
    for variable in ("COLONY_HOME", "COLONY_GATEWAY_CALL_TIMEOUT", "COLONY_HPC_LIMITS__MAX_VCPUS", "COLONY_POLICIES"):
        assert variable in settings
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("colony-tools-call", "colony-approvals-approve", "colony-up", "colony-policy-explain"):
        assert f'id="{command}"' in cli


def test_every_error_is_on_the_errors_page_with_its_codes(site: Path) -> None:
    page = (site / "reference" / "errors" / "index.html").read_text(encoding="utf-8")
    for error, status in HTTP_STATUS.items():
        assert f"<code>{error.__name__}</code></td>\n<td>{status}</td>" in page, error.__name__
