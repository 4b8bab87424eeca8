"""Every Python sample in the seed documents runs as written, through the seeds' import paths.

The samples are read from the seed files when the tests run (tests/seed_samples.py) and
never edited. Seed 004's run in document order in one session (tests/seed_session.py),
inside a private network namespace holding the gateways they call at the addresses they
name. The harness adds only this:

- a prelude of the names a fragment uses without importing: seed 004's ``ToolSchema``
  (``dataclass``, ``Dict``) and seed 000's HPC samples (their classes, from the seed's paths);
- the ``_render_simulation_deck`` and ``parse_openems_h5`` helpers seed 000's HPC sample
  calls but does not show;
- a call of each ``test_*`` function a sample defines.

Samples that cannot run, and why:

- 000:80 writes ``spec = ToolSpec(...)``: the fields are elided, and ``ToolSpec`` takes them by name.
- 004:906 adds to a ``TOOL_SCHEMAS`` dict the seed never defines: a Colony tool is a
  ``ToolCapability`` class in ``.colony/tool-registry.json`` (docs/design.md, "From the seeds", seed 004).
- Seed 000's SandboxToolCapability sample is not Python (``ToolSpec(name=..., ...)`` puts a
  positional argument after a keyword), so it is no sample here; tests/test_seed_examples.py
  runs it with its spec filled in.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from catalog.tool_schemas import ToolSchema as CatalogToolSchema
from catalog.tool_schemas import get_tool_schema
from clients.unified_client import UnifiedToolClient
from colony.capability import action_menu
from colony.errors import UnknownToolError
from colony.hpc import HPCLimits, InProcessJobRunner, InputArtifact, PollPolicy, job_name
from tests.seed_samples import ROOT, Sample, seed_samples, seed_text
from tests.services import unavailable
from tests.services.hpc import HPCStack

#: Every sample the seeds hold, by seed and first line: a sample found or lost fails the test.
SAMPLE_IDS = (
    "000:80",  # HPCToolCapability._domain_tags (cannot run: ToolSpec(...))
    "000:104",  # LocalToolCapability: MagerSumnerShieldingCapability
    "000:154",  # HPCToolCapability: OpenEMSFdtdCapability
    *(
        f"004:{line}"
        for line in (33, 46, 154, 167, 177, 187, 308, 319, 329, 341, 412, 434, 455, 475, 498, 637, 684, 700)
    ),
    *(f"004:{line}" for line in (738, 756, 780, 791, 820, 847, 855, 862, 871, 906, 935, 957, 1000, 1007)),
)
HPC_PRELUDE = """\
from typing import Any
from polymathera.colony.agents.patterns.actions import action_executor
from polymathera.colony.tools import ExecutionLocality, GpuRequirement, ResourceRequirements, ToolSpec
from polymathera.cps.tools.hpc.capability import HPCToolCapability, InputArtifactDescriptor
"""
PRELUDES = {"004:46": "from dataclasses import dataclass\nfrom typing import Dict\n"}
CANNOT_RUN = {"004:906": ("NameError", "name 'TOOL_SCHEMAS' is not defined")}
#: Lines each sample prints, as the seed's comments state them.
PRINTED = {
    "004:154": ["100°C = 212.0°F"],
    "004:167": ["150 lbs = 68.0388 kg"],
    "004:177": ["100 ft = 30.48 m"],
    "004:187": ["Error: Unsupported unit: invalid_unit"],
    "004:308": ["Call me at [REDACTED] or [REDACTED]", "[{'type': 'phone', 'count': 2}]"],
    "004:319": ["Email: ***HIDDEN***, Phone: ***HIDDEN***"],
    "004:329": ["Contact: [REDACTED] or 555-123-4567"],
    "004:341": ["[{'type': 'email', 'count': 2}, {'type': 'phone', 'count': 2}]"],
    "004:412": ["Valid: True", "Errors: []"],
    "004:434": ["Valid: False", "Errors: [\"'email' is a required property\"]"],
    "004:455": ["Valid: False", "Errors: [\"'not_a_number' is not of type 'integer'\"]"],
    "004:475": ["Valid: True"],
    "004:498": ["Valid: False", "Errors: [\"'invalid_status' is not one of ['pending', 'active', 'completed']\"]"],
    "004:637": ["Original: 7 sentences", "Summary: 3 sentences"],
    "004:684": ["Climate change is one of the biggest challenges facing humanity."],
    "004:700": ["This is a short text.", "1", "1"],
    "004:756": ["Capability: tool:unit_convert"],
    "004:820": ["10 miles = 16.0934 km"],
}
SEED_004_TOOLS = ["doc_summarize", "jsonschema_validate", "pii_redact", "unit_convert"]
#: Values the samples assign, where they print nothing that shows them.
ASSIGNED = {
    "004:780": {"result": {"redacted_text": "Contact [REDACTED]", "redactions": [{"type": "email", "count": 1}]}},
    "004:791": {"result": {"value": 16.0934, "from_unit": "miles", "to_unit": "km"}},
}


def samples_of(seed: str) -> list[Sample]:
    return [sample for sample in seed_samples() if sample.seed == seed]


def sample(sample_id: str) -> Sample:
    (found,) = (each for each in seed_samples() if each.id == sample_id)
    return found


def run_in(namespace: dict[str, Any], sample_id: str, prelude: str = "") -> dict[str, Any]:
    """Exec ``prelude``, then the sample's text as it is in the seed, in ``namespace``."""
    exec(compile(prelude, "<harness>", "exec", dont_inherit=True), namespace)
    exec(compile(sample(sample_id).text, sample_id, "exec", dont_inherit=True), namespace)
    return namespace


def test_every_sample_in_the_seeds_is_one_this_module_runs() -> None:
    assert tuple(each.id for each in seed_samples()) == SAMPLE_IDS


# --- Seed 000 ---


async def test_seed_000_local_tool_sample_runs_as_written() -> None:
    """The MagerSumnerShieldingCapability sample imports everything it uses from the seed's paths."""
    tool = run_in({"__name__": "seed_000"}, "000:104")["MagerSumnerShieldingCapability"]()
    assert tool.get_capability_tags() == {"tool", "em", "local", "magnetic_shielding"}
    assert [entry.action for entry in action_menu([tool], include_tags={"tool"})] == [
        "check_preconditions",
        "compute_shielding_factor",
    ]
    snapshot = await tool.invoke("check_preconditions")
    assert (snapshot["tool"], snapshot["ok"], snapshot["resource_requirements"]["min_memory_gb"]) == (
        "mager_sumner_shielding",
        True,
        0.5,
    )


def test_seed_000_sample_with_an_elided_spec_cannot_run() -> None:
    with pytest.raises(TypeError, match="positional argument"):
        run_in({"__name__": "seed_000"}, "000:80", HPC_PRELUDE)


def test_seed_000_sandbox_sample_is_not_python() -> None:
    text = seed_text("000")
    start = text.index("class FemmShieldingCapability")
    with pytest.raises(SyntaxError, match="positional argument follows keyword argument"):
        ast.parse(text[start : text.index("\n\nThe sandbox image", start)])


def parse_openems_h5(path: Path) -> dict[str, Any]:
    """Stands in for the sample's HDF5 reader: the test's job writes its fields as JSON."""
    return json.loads(path.read_text())


def render_simulation_deck(self: Any, call_args: Mapping[str, Any]) -> str:
    """The deck renderer the sample calls but does not show."""
    return f'<openEMS><FDTD f0="{call_args["freq_hz"]}" mesh="{call_args["mesh_resolution"]}"/></openEMS>'


async def test_seed_000_hpc_sample_runs_as_written(start_hpc: Any, tmp_path: Path) -> None:
    """OpenEMSFdtdCapability, from the seed's text, submits, uploads, polls and fetches on AWS Batch (moto)."""
    namespace = run_in({"__name__": "seed_000", "parse_openems_h5": parse_openems_h5}, "000:154", HPC_PRELUDE)
    capability = namespace["OpenEMSFdtdCapability"]
    capability._render_simulation_deck = render_simulation_deck
    assert capability().get_capability_tags() == {"tool", "general", "hpc", "em", "fdtd"}
    limits = HPCLimits(max_vcpus=16, max_memory_gb=64, max_gpus=1, max_wallclock_seconds=86400)
    stack: HPCStack = start_hpc(job_definitions={"openems_fdtd": "colony-echo"}, limits=limits)
    arguments = {"freq_hz": 2.4e9, "mesh_resolution": 1e-3}
    (tmp_path / "sim.xml").write_text(render_simulation_deck(None, arguments))
    name = job_name(capability.spec, arguments, [InputArtifact(key="sim.xml", path=tmp_path / "sim.xml")])
    stack.put_output(name, "fields.h5", json.dumps({"s11_db": -17.5}).encode())
    tool = capability(
        client=stack.client,
        settings=stack.settings,
        runner=InProcessJobRunner(),
        poll_policy=PollPolicy(initial_seconds=0.05, max_seconds=0.2),
    )
    assert (await tool.invoke("check_preconditions"))["ok"] is True
    result = await tool.invoke("run_em_fdtd", {"geometry_step": "board.step", "excitation_freq_hz": 2.4e9})
    assert result == {"s11_db": -17.5}
    (job,) = stack.batch_jobs(name)
    assert job["status"] == "SUCCEEDED"


# --- Seed 004 ---


def test_seed_004_tool_schema_is_the_record_the_seed_path_serves(colony_home: Path) -> None:
    """The seed's ``ToolSchema`` dataclass has the fields ``catalog.tool_schemas`` and the catalog give."""
    seed_schema = run_in({"__name__": "seed_004"}, "004:46", PRELUDES["004:46"])["ToolSchema"]
    names = [field.name for field in fields(seed_schema)]
    assert names == [field.name for field in fields(CatalogToolSchema)]
    record = UnifiedToolClient().get_local_toolhost().list_tools()[0]
    assert set(names) <= set(record)


def test_the_seed_path_s_get_tool_schema_names_an_unknown_tool(colony_home: Path) -> None:
    assert get_tool_schema("unit_convert").required_capabilities == ["tool:unit_convert"]
    with pytest.raises(UnknownToolError, match=r"unknown tool 'unit_conversion'; the catalog has \[.*'unit_convert'"):
        get_tool_schema("unit_conversion")


@pytest.fixture(scope="module")
def seed_004_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Seed 004's samples, run once in document order, each sample's stdout, values and error."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rn", "true"], capture_output=True, check=False).returncode:
        unavailable("the seed 004 session needs a private network namespace (unshare -rn, user namespaces)")
    work = tmp_path_factory.mktemp("seed-004")
    samples = [{"id": each.id, "text": each.text, "prelude": PRELUDES.get(each.id, "")} for each in samples_of("004")]
    (work / "samples.json").write_text(json.dumps(samples))
    files = [str(work / "samples.json"), str(work / "report.json")]
    network = "ip link set lo up && ip addr add 192.168.1.100/32 dev lo"
    done = subprocess.run(
        [unshare, "-rn", "sh", "-c", f'{network} && exec "$0" -m tests.seed_session "$@"', sys.executable, *files],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, dict[str, Any]] = json.loads((work / "report.json").read_text())
    return report


@pytest.mark.parametrize("sample_id", [each for each in SAMPLE_IDS if each.startswith("004:")])
def test_seed_004_sample_runs_as_written(seed_004_report: dict[str, dict[str, Any]], sample_id: str) -> None:
    answer = seed_004_report[sample_id]
    if sample_id in CANNOT_RUN:
        assert answer["error"] is not None
        assert (answer["error"]["type"], answer["error"]["message"]) == CANNOT_RUN[sample_id]
        return
    assert answer["error"] is None, answer["error"]["traceback"]
    printed = answer["stdout"].splitlines()
    for line in PRINTED.get(sample_id, []):
        assert line in printed, (line, printed)
    for name, value in ASSIGNED.get(sample_id, {}).items():
        assert answer["values"][name] == value


def test_seed_004_listings_show_the_seed_tools(seed_004_report: dict[str, dict[str, Any]]) -> None:
    """The local toolhost (``print`` of each tool), the MCP listing on :8787 and the policy-tag filters."""
    local = seed_004_report["004:33"]["stdout"]
    mcp = seed_004_report["004:738"]["stdout"]
    for name in SEED_004_TOOLS:
        assert f"\n{name} v" in f"\n{local}" and f"\n{name}: " in f"\n{mcp}", name
    assert "colony_propose_action: " in mcp
    privacy_safe = seed_004_report["004:847"]["values"]["privacy_safe"]
    assert [tool["name"] for tool in privacy_safe] == ["pii_redact"]
    offline = {tool["name"] for tool in seed_004_report["004:862"]["values"]["offline_tools"]}
    assert set(SEED_004_TOOLS) <= offline
    names = seed_004_report["004:1000"]["stdout"]
    assert all(repr(name) in names for name in SEED_004_TOOLS)
    assert "'required': ['value', 'from_unit', 'to_unit']" in seed_004_report["004:1007"]["stdout"]
