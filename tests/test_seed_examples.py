"""The seeds' examples and rules that no other test runs as written, through the real code.

Seed 004's tool examples live in tests/seed004.py (run by the client, gateway and MCP tests),
seed 001's in tests/colony/kernel/test_seed_examples.py and tests/colony/surfaces/seed001.py,
seed 000's HPC sample in tests/colony/hpc/test_seed_sample.py; every Python sample, read from
the seed files, runs in tests/test_seed_samples.py. Where Colony deliberately
differs from a seed, the test asserts what Colony does and names the entry in docs/design.md
("Design changes, and why" -> "From the seeds") that says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from colony.capability import action_executor, action_menu
from colony.catalog import discover_tools, planner_visible, resolve_capability
from colony.client import UnifiedToolClient
from colony.errors import ColonyError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import KernelProvider, Principal
from colony.sandbox import SandboxToolCapability
from colony.spec import ToolSpec
from colony.surfaces.kernel_tools import run_kernel_tool
from colony.surfaces.pinning import semver_key

PRECONDITION_KEYS = {"tool", "execution_locality", "resource_requirements", "ok", "warnings"}
TOOLSCHEMA_FIELDS = {
    "tool_id",
    "name",
    "version",
    "description",
    "input_schema",
    "output_schema",
    "required_capabilities",
    "policy_tags",
    "deterministic",
}
# Seed 004's 1.0.0 contract per tool: required inputs, input property types, required outputs, policy tags.
SEED_004_TOOLS: dict[str, tuple[list[str], dict[str, str | None], list[str], list[str]]] = {
    "unit_convert": (
        ["value", "from_unit", "to_unit"],
        {"value": "number", "from_unit": "string", "to_unit": "string"},
        ["value", "from_unit", "to_unit"],
        ["pure", "deterministic", "no_network"],
    ),
    "pii_redact": (
        ["text"],
        {"text": "string", "redact_emails": "boolean", "redact_phones": "boolean", "replacement": "string"},
        ["redacted_text", "redactions"],
        ["pii", "privacy", "pure", "no_network"],
    ),
    "jsonschema_validate": (
        ["schema", "data"],
        {"schema": "object", "data": None},
        ["valid", "errors"],
        ["validation", "pure", "deterministic", "no_network"],
    ),
    "doc_summarize": (
        ["text"],
        {"text": "string", "max_sentences": "integer"},
        ["summary", "original_sentences", "summary_sentences", "method"],
        ["nlp", "pure", "no_network"],
    ),
}
GOOD_PLAN = {
    "action_type": "patch_file",
    "target": "pkg.parser",
    "rationale": "Fix the off-by-one error in the branch name parser",
    "rollback_plan": "git revert",
    "tests": ["t"],
}
# Seed 004's Python examples are top-level script code, with no ``if __name__ == "__main__"`` guard.
SEED_004_SCRIPT = """\
from colony.client import UnifiedToolClient

client = UnifiedToolClient()
result = client.call_tool_local("doc_summarize", {"text": "This is a short text.", "max_sentences": 5})
print(result["summary"])
"""
OPERATOR = Principal(agent_id="ops", capabilities=frozenset({"*"}), operator=True)
AGENT = Principal(agent_id="engineer-1", capabilities=frozenset({"kernel:read", "kernel:propose", "kernel:record"}))


@pytest.fixture
def kernels(colony_home: Path) -> Iterator[KernelProvider]:
    """The kernel the colony_* tools run on: a fresh SQLite file."""
    kernel = ColonyKernel(KernelSettings(home=colony_home, database_url=None))
    yield KernelProvider(kernel)
    kernel.close()


# --- Seed 000: tags, the preflight snapshot, the sandbox sample ---


def test_seed_000_tool_tags_filter_the_catalog_menu() -> None:
    """``include_tags={"tool"}`` is every tool; ``{"tool", "hpc"}`` the HPC tools only.

    Colony's tags also carry the spec's domain and locality (docs/design.md, "From the seeds": tags).
    """
    tools = [resolve_capability(entry)() for entry in planner_visible(discover_tools().tools).values()]
    every = {entry.capability for entry in action_menu(tools, include_tags={"tool"})}
    hpc = {entry.capability for entry in action_menu(tools, include_tags={"tool", "hpc"})}
    assert every == {tool.capability_name() for tool in tools}
    assert hpc == {tool.capability_name() for tool in tools if tool.spec.execution_locality.value == "hpc"}
    assert hpc and hpc < every
    for tool in tools:
        assert {"tool", tool.spec.domain, tool.spec.execution_locality.value} <= tool.get_capability_tags()


@pytest.mark.parametrize("name", ["unit_convert", "pii_redact", "jsonschema_validate", "doc_summarize"])
async def test_seed_000_check_preconditions_snapshot(name: str) -> None:
    """Every tool's inherited ``check_preconditions`` answers the seed's five keys."""
    tool = resolve_capability(discover_tools().tools[name])()
    snapshot = await tool.invoke("check_preconditions", {})
    assert set(snapshot) == PRECONDITION_KEYS
    assert (snapshot["tool"], snapshot["execution_locality"], snapshot["ok"], snapshot["warnings"]) == (
        name,
        "local",
        True,
        [],
    )
    assert snapshot["resource_requirements"]["min_vcpus"] == tool.spec.resource_requirements.min_vcpus


class FemmShieldingCapability(SandboxToolCapability):
    """Seed 000's SandboxToolCapability sample, as written (its elided spec given its one capability)."""

    spec = ToolSpec(name="femm_2d_shielding", capabilities=("run_femm_2d",))
    sandbox_image_role = "femm"

    @action_executor()
    async def run_femm_2d(self, *, geometry_step: str) -> dict[str, Any]:
        """Run a 2-D FEMM shielding model.

        Args:
            geometry_step: The geometry, as STEP text.

        Returns:
            The sandbox result.
        """
        return await self._exec_in_sandbox(  # type: ignore[return-value]  # the seed's annotation
            ["femm-batch", "/mnt/inputs/geometry.step"],
            timeout_seconds=600,
        )


async def test_seed_000_sandbox_sample_defines_and_names_its_missing_image() -> None:
    """The sample is accepted as written; with no ``femm`` image configured, preflight and the call say so.

    Its containers come from a SandboxSession, not an agent-mounted SandboxedShellCapability
    (docs/design.md, "From the seeds": sandbox sessions).
    """
    tool = FemmShieldingCapability()
    try:
        assert "Docker image role 'femm'" in tool.get_action_group_description()
        snapshot = await tool.invoke("check_preconditions", {})
        assert set(snapshot) == PRECONDITION_KEYS and snapshot["ok"] is False
        assert any("role 'femm'" in warning for warning in snapshot["warnings"])
        with pytest.raises(ColonyError, match="role 'femm'"):
            await tool.invoke("run_femm_2d", {"geometry_step": "ISO-10303-21;"})
    finally:
        await tool.shutdown()


# --- Seed 004: the ToolSchema record, versions, the "Testing Tools" examples ---


@pytest.mark.parametrize("name", sorted(SEED_004_TOOLS))
def test_seed_004_catalog_records_keep_the_1_0_0_contract(name: str) -> None:
    """Each record has ToolSchema's nine fields and the seed's 1.0.0 schemas, tags and tokens.

    Versions moved on under seed 004's rule (docs/design.md, "From the seeds": versions and
    pii_redact / jsonschema_validate); the breaking ones are checked below.
    """
    required_in, types, required_out, tags = SEED_004_TOOLS[name]
    records = {record["name"]: record for record in UnifiedToolClient().get_local_toolhost().list_tools()}
    record = records[name]
    assert set(record) >= TOOLSCHEMA_FIELDS
    assert record["tool_id"] == f"tool:{name}"
    assert record["required_capabilities"] == [f"tool:{name}"] and record["required_capability"] == f"tool:{name}"
    assert record["policy_tags"] == tags and record["deterministic"] is True
    assert semver_key(record["version"]) >= semver_key("1.0.0")
    assert record["input_schema"]["required"] == required_in
    assert record["input_schema"]["additionalProperties"] is False
    for field, kind in types.items():
        assert record["input_schema"]["properties"][field].get("type") == kind, field
    assert set(required_out) <= set(record["output_schema"]["required"])


def test_seed_004_a_tool_refusing_what_1_0_0_accepted_is_a_new_major_version() -> None:
    """Seed 004: breaking changes to input schemas are MAJOR.

    pii_redact caps ``replacement`` (1.0.0 took any string); jsonschema_validate checks formats
    that plain ``jsonschema`` accepts unchecked.
    """
    client = UnifiedToolClient()
    records = {record["name"]: record for record in client.get_local_toolhost().list_tools()}
    assert "maxLength" in records["pii_redact"]["input_schema"]["properties"]["replacement"]
    schema = {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}
    data = {"email": "not an address"}
    jsonschema.validate(data, schema)  # plain jsonschema accepts it
    assert client.call_tool_local("jsonschema_validate", {"schema": schema, "data": data})["valid"] is False
    for name in ("pii_redact", "jsonschema_validate"):
        assert semver_key(records[name]["version"]) >= semver_key("2.0.0"), name


def test_seed_004_input_defaults_are_the_seeds() -> None:
    """pii_redact's and doc_summarize's defaults and minimum are seed 004's."""
    records = {record["name"]: record for record in UnifiedToolClient().get_local_toolhost().list_tools()}
    redact = records["pii_redact"]["input_schema"]["properties"]
    assert (redact["redact_emails"]["default"], redact["redact_phones"]["default"]) == (True, True)
    assert redact["replacement"]["default"] == "[REDACTED]"
    summarize = records["doc_summarize"]["input_schema"]["properties"]["max_sentences"]
    assert (summarize["default"], summarize["minimum"]) == (3, 1)


def test_seed_004_unit_testing_examples() -> None:
    """Seed 004's "Unit Testing" section, through the local toolhost."""
    client = UnifiedToolClient()
    result = client.call_tool_local("pii_redact", {"text": "Contact admin@example.com"})
    assert "[REDACTED]" in result["redacted_text"]
    assert result["redactions"][0]["type"] == "email"
    assert result["redactions"][0]["count"] == 1
    result = client.call_tool_local("pii_redact", {"text": "Call 555-123-4567"})
    assert "[REDACTED]" in result["redacted_text"]
    assert result["redactions"][0]["type"] == "phone"


def test_seed_004_integration_testing_example() -> None:
    """Seed 004's "Integration Testing" section, as written."""
    result = UnifiedToolClient().call_tool_local("unit_convert", {"value": 10, "from_unit": "miles", "to_unit": "km"})
    assert result["value"] == pytest.approx(16.0934, rel=1e-3)
    assert result["from_unit"] == "miles"
    assert result["to_unit"] == "km"


def test_seed_004_python_example_runs_as_a_plain_script(tmp_path: Path) -> None:
    """Seed 004's doc_summarize example 4, saved as a script and run as one."""
    script = tmp_path / "example.py"
    script.write_text(SEED_004_SCRIPT)
    env = os.environ | {"COLONY_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "This is a short text."


# --- Seed 001: the colony_* tools' stated rules, and where Colony is stricter ---


def test_seed_001_falsify_plan_ignores_unknown_keys(kernels: KernelProvider) -> None:
    """'Unknown keys are silently ignored.'"""
    plain = run_kernel_tool(kernels, "colony_falsify_plan", {"plan_json": json.dumps(GOOD_PLAN)}, OPERATOR)
    extra = GOOD_PLAN | {"reviewers": ["a", "b"], "ticket": 42}
    assert run_kernel_tool(kernels, "colony_falsify_plan", {"plan_json": json.dumps(extra)}, OPERATOR) == plain
    assert plain == {"findings": [], "severity_score": 0.0, "recommendation": "execute"}


def test_seed_001_a_recognised_plan_key_of_the_wrong_type_is_a_field_error(kernels: KernelProvider) -> None:
    """A string ``tests`` is not test coverage (docs/design.md, "From the seeds": plan fields are typed)."""
    plan = GOOD_PLAN | {"tests": "t"}
    answer = run_kernel_tool(kernels, "colony_falsify_plan", {"plan_json": json.dumps(plan)}, OPERATOR)
    assert set(answer) == {"error"} and "plan_json.tests" in answer["error"]


def test_seed_001_arguments_outside_the_input_schema_are_refused(kernels: KernelProvider) -> None:
    """The seed's schemas do not close their objects; Colony refuses an undeclared argument, naming it
    (docs/design.md, "From the seeds": unknown arguments)."""
    arguments = {
        "agent_id": "ops",
        "action_type": "run_tests",
        "target": "pkg.parser",
        "rationale": "Run the parser suite before the release",
        "rollback_plan": "Nothing to undo",
        "side_effecting": False,
    }
    answer = run_kernel_tool(kernels, "colony_propose_action", arguments, OPERATOR)
    assert answer == {"error": "invalid arguments for colony_propose_action: side_effecting: unknown argument"}


def test_seed_001_an_unattested_report_is_an_operators(kernels: KernelProvider) -> None:
    """The seed's unattested colony_record_outcome is kept for operators; an agent brings its authorization
    (docs/design.md, "From the seeds": who may report)."""
    report = {
        "agent_id": "engineer-1",
        "action_type": "patch_file",
        "target": "pkg.parser",
        "actual_outcome": "Patch applied; the parser suite passes",
        "tests_passed": True,
    }
    refused = run_kernel_tool(kernels, "colony_record_outcome", report, AGENT)
    assert set(refused) == {"error"} and "authorization" in refused["error"]
    recorded = run_kernel_tool(kernels, "colony_record_outcome", report, OPERATOR)
    assert (recorded["status"], recorded["role"]) == ("recorded", "sandbox")


def test_seed_001_unknown_agent_profile_is_the_sandbox_default_and_stores_nothing(kernels: KernelProvider) -> None:
    """An unknown agent reads as a SANDBOX profile with trust_score=0.1; the read-only tool stores nothing."""
    profile = run_kernel_tool(kernels, "colony_agent_profile", {"agent_id": "newcomer"}, OPERATOR)
    assert (profile["role"], profile["trust_score"], profile["total_proposals"]) == ("sandbox", 0.1, 0)
    status = run_kernel_tool(kernels, "colony_status", {}, OPERATOR)
    assert status["role_distribution"] == {}
