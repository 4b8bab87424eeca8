"""The colony_* tools as data, and their failures as the seed's error results."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony.kernel import ColonyKernel
from colony.runtime import LOCAL_OPERATOR, KernelProvider
from colony.surfaces.kernel_tools import kernel_tools, run_kernel_tool
from tests.colony.surfaces.seed001 import KERNEL_TOOLS


def test_the_seed_tools_in_the_seed_order() -> None:
    tools = kernel_tools()
    assert list(tools) == KERNEL_TOOLS
    assert tools["colony_pheromone_query"].structured_output_schema is None  # the seed answers with a list
    assert tools["colony_status"].structured_output_schema is not None


def test_a_store_that_cannot_open_is_an_error_result(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLONY_DATABASE_URL", f"sqlite:///{tmp_path}/missing-directory/kernel.db")
    answer = run_kernel_tool(KernelProvider(), "colony_status", {}, LOCAL_OPERATOR)
    assert set(answer) == {"error"} and answer["error"]


def test_arguments_are_checked_before_the_kernel_is_opened() -> None:
    provider = KernelProvider()
    answer = run_kernel_tool(provider, "colony_record_outcome", {"agent_id": 3}, LOCAL_OPERATOR)
    assert set(answer) == {"error"}
    for field in ("agent_id", "action_type", "target", "actual_outcome", "tests_passed"):
        assert field in answer["error"]
    answer = run_kernel_tool(provider, "colony_record_outcome", {
        "agent_id": "a", "action_type": "t", "target": "x", "actual_outcome": "y", "tests_passed": True,
        "human_feedback": 3.0,
    }, LOCAL_OPERATOR)  # fmt: skip
    assert "human_feedback" in answer["error"]


def test_a_shared_kernel_answers(colony_home: Path) -> None:
    provider = KernelProvider(ColonyKernel.from_env())
    profile = run_kernel_tool(provider, "colony_agent_profile", {"agent_id": "kt-agent"}, LOCAL_OPERATOR)
    assert (profile["agent_id"], profile["role"], profile["trust_score"]) == ("kt-agent", "sandbox", 0.1)
