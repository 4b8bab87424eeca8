"""The Prefect surface fails closed too: tool-call runs a side-effecting tool only through the gate.

A reader of Colony's result storage finds data only (JSON, never a pickle to run) and no
authorization it could replay.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from colony.errors import ActionNotExecutedError, ToolInputError, UnknownToolError
from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.attestation import Claims
from colony.kernel.schema import tables
from flows.gated_action import GatedActionRequest, gated_action
from flows.tool_call import ToolCall, tool_call
from tasks.kernel import kernel_for

pytestmark = pytest.mark.usefixtures("prefect_harness", "catalog_with_doubles")


def test_tool_call_runs_a_side_effecting_tool_only_through_the_gate(tmp_path: Path) -> None:
    call = ToolCall(tool="ledger_double", arguments={"path": str(tmp_path / "entry"), "text": "x"})
    with pytest.raises(ToolInputError, match="rationale"):
        tool_call(call)
    with pytest.raises(ActionNotExecutedError, match="refused"):
        tool_call(call, agent_id="newcomer", rationale="Write the figures for tonight's audit trail")
    assert not (tmp_path / "entry").exists()


def test_tool_call_never_imports_a_path_from_its_input() -> None:
    sys.modules.pop("this", None)
    with pytest.raises(UnknownToolError, match=r"unknown tool 'this\.Anything'"):
        tool_call(ToolCall(tool="this.Anything"))
    assert "this" not in sys.modules


def test_results_are_json_and_hold_no_authorization(tmp_path: Path, colony_home: Path) -> None:
    kernel = kernel_for(KernelSettings())
    kernel.set_trust("engineer-1", 0.8)
    request = GatedActionRequest(
        agent_id="engineer-1",
        call=ToolCall(tool="ledger_double", arguments={"path": str(tmp_path / "entry"), "text": "figures"}),
        rationale="Record the nightly figures in the ledger file for the audit trail",
        rollback_plan="erase_entry removes the written file again",
        evidence={"tests": ["tests/test_ledger.py::test_write"]},
    )
    summary = gated_action(request)  # executed: the kernel issued, and the run used, a signed authorization
    assert summary.verdict is not None and summary.verdict.proposal_id is not None
    token = issued_token(kernel, summary.verdict.proposal_id)
    files = [path for path in (colony_home / "results").rglob("*") if path.is_file()]
    assert len(files) >= 2  # the cached verdict and the run's summary, at least
    for path in files:
        text = path.read_text()
        record = json.loads(text)
        assert record["metadata"]["serializer"]["type"] == "json", path
        json.loads(record["result"])  # the value itself is JSON too, never a pickle
        assert token not in text and token.rsplit(".", 1)[1] not in text, path  # nor its signature
    assert kernel.proposal_counts("engineer-1").total == 1


def issued_token(kernel: ColonyKernel, proposal_id: str) -> str:
    """The token the kernel signed for ``proposal_id``, rebuilt from its stored proposal."""
    proposals = tables.proposals
    row = kernel.store.run(
        lambda connection: connection.execute(select(proposals).where(proposals.c.proposal_id == proposal_id)).one()
    )
    assert row.token_nonce is not None  # the kernel did issue one
    claims = Claims(proposal_id, row.agent_id, row.action_type, row.target, row.expires_at, row.token_nonce)
    return kernel.attestor.sign(claims)
