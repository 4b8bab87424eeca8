"""Traces of calls over a real gateway process, exported over OTLP/HTTP to a fake receiver and decoded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from colony.kernel import ColonyKernel, KernelSettings
from tests.colony.surfaces.sample_tools import sample_repo
from tests.colony.surfaces.seed001 import mcp_over_http
from tests.services.gateway import StartGateway
from tests.services.otlp import FakeOtlpReceiver, ReceivedSpan

TOKENS = {
    "ops-token": {"agent": "ops", "capabilities": ["*"], "operator": True},
    "scribe-token": {"agent": "scribe", "capabilities": ["tool:*", "kernel:read"]},
    "trusted-token": {"agent": "trusted", "capabilities": ["tool:*", "kernel:read"]},
    "newcomer-token": {"agent": "newcomer", "capabilities": ["tool:*", "kernel:read"]},
}
CASE = {
    "rationale": "Record the outcome of the nightly calibration run for the operators to review",
    "rollback_plan": "Delete the appended line from notes.txt; nothing else is touched",
    "evidence": {"tests": ["tests/test_notes.py::test_append"]},
}
SECRET = "hunter2-sk-live-0123456789abcdef"
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@dataclass(frozen=True)
class Gateway:
    url: str
    receiver: FakeOtlpReceiver

    def post(self, path: str, body: object, token: str, **headers: str) -> httpx.Response:
        return httpx.post(
            f"{self.url}{path}", json=body, headers={"authorization": f"Bearer {token}", **headers}, timeout=60
        )

    def note(self, note: str, token: str, **fields: object) -> httpx.Response:
        return self.post(
            "/v1/tool_call", {"tool_name": "append_note", "tool_args": {"note": note}, **CASE, **fields}, token
        )


@pytest.fixture(scope="module")
def gateway(
    start_gateway: StartGateway, otlp_receiver: FakeOtlpReceiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    """A traced gateway over the sample catalog: the gate runs trusted's notes, holds scribe's, refuses newcomer's."""
    root = sample_repo(tmp_path_factory.mktemp("repo"))
    home = tmp_path_factory.mktemp("home")
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    kernel = ColonyKernel(KernelSettings(home=home))
    kernel.set_trust("scribe", 0.4)
    kernel.set_trust("trusted", 0.9)
    kernel.deposit("tool:append_note", "failure", 30.0)
    kernel.close()
    url = start_gateway(
        COLONY_REPO_ROOT=str(root),
        COLONY_HOME=str(home),
        COLONY_GATEWAY_TOKENS_FILE=str(tokens),
        OTEL_EXPORTER_OTLP_ENDPOINT=otlp_receiver.endpoint,
        OTEL_SERVICE_NAME="colony-under-test",
        OTEL_BSP_SCHEDULE_DELAY="50",
    )
    yield Gateway(url, otlp_receiver)


def call_spans(receiver: FakeOtlpReceiver, agent: str, count: int = 1) -> list[ReceivedSpan]:
    """The ``execute_tool`` spans of ``agent``'s calls, once ``count`` of them arrived."""

    def calls(spans: list[ReceivedSpan]) -> list[ReceivedSpan]:
        return [s for s in spans if s.name.startswith("execute_tool") and s.attributes.get("colony.agent") == agent]

    return calls(receiver.wait_for(lambda spans: len(calls(spans)) >= count))


def tree(receiver: FakeOtlpReceiver, root: ReceivedSpan, expected: int) -> dict[str, list[str]]:
    """Each span name of ``root``'s trace mapped to its children's names, once ``expected`` spans arrived."""
    spans = receiver.wait_for(lambda spans: len([s for s in spans if s.trace_id == root.trace_id]) >= expected)
    spans = [s for s in spans if s.trace_id == root.trace_id]
    by_id = {s.span_id: s for s in spans}
    children: dict[str, list[str]] = {s.name: [] for s in spans}
    for span in spans:
        if span.parent_id in by_id:
            children[by_id[span.parent_id].name].append(span.name)
    return {name: sorted(names) for name, names in children.items()}


def test_an_executed_call_is_one_trace_from_the_http_route_to_the_record(gateway: Gateway) -> None:
    answered = gateway.note("executed and traced", "trusted-token")
    assert answered.status_code == 200, answered.text
    [call] = call_spans(gateway.receiver, "trusted")
    shape = tree(gateway.receiver, call, 6)
    assert shape["POST /v1/tool_call"] == ["execute_tool append_note"]
    assert shape["execute_tool append_note"] == ["colony.authorize", "colony.execute", "colony.gate", "colony.record"]
    attributes = call.attributes
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "append_note" and attributes["gen_ai.tool.call.id"]
    assert (attributes["colony.verdict"], attributes["colony.outcome"]) == ("execute", "executed")
    assert attributes["colony.action"] == "append_note" and 0 < attributes["colony.gate.score"] <= 1
    assert call.resource["service.name"] == "colony-under-test"
    [server] = [s for s in gateway.receiver.trace(call.trace_id) if s.name == "POST /v1/tool_call"]
    assert server.attributes["http.response.status_code"] == 200 and server.attributes["http.route"] == "/v1/tool_call"


def test_a_refused_call_ends_at_the_gate(gateway: Gateway) -> None:
    answered = gateway.note("refused and traced", "newcomer-token")
    assert answered.status_code == 409, answered.text
    [call] = call_spans(gateway.receiver, "newcomer")
    shape = tree(gateway.receiver, call, 4)
    assert shape["execute_tool append_note"] == ["colony.authorize", "colony.gate"]
    assert (call.attributes["colony.verdict"], call.attributes["colony.outcome"]) == ("refuse", "refused")


def test_a_held_then_approved_call_links_its_run_to_the_hold(gateway: Gateway) -> None:
    held = gateway.note("held, then approved", "scribe-token", evidence={})  # no tests: held for evidence
    assert held.status_code == 202, held.text
    approval_id = held.json()["approval"]["approval_id"]
    decided = gateway.post(f"/v1/approvals/{approval_id}/approve", {"note": "fine"}, "ops-token")
    assert decided.status_code == 200, decided.text
    done = gateway.note("held, then approved", "scribe-token", evidence={}, approval_id=approval_id)
    assert done.status_code == 200, done.text
    hold, run = sorted(
        call_spans(gateway.receiver, "scribe", 2), key=lambda s: s.attributes["colony.outcome"] != "held"
    )
    assert hold.attributes["colony.outcome"] == "held" and hold.attributes["colony.approval.id"] == approval_id
    assert tree(gateway.receiver, hold, 4)["execute_tool append_note"] == [
        "colony.approval",
        "colony.authorize",
        "colony.gate",
    ]
    assert run.attributes["colony.outcome"] == "executed" and run.attributes["colony.approval.id"] == approval_id
    shape = tree(gateway.receiver, run, 6)
    assert shape["execute_tool append_note"] == [
        "colony.approval",
        "colony.authorize",
        "colony.execute",
        "colony.record",
    ]
    assert (hold.trace_id, hold.span_id) in run.links


def test_a_callers_traceparent_is_continued(gateway: Gateway) -> None:
    answered = gateway.post(
        "/v1/tool_call",
        {"tool_name": "append_note", "tool_args": {"note": "continued"}, **CASE},
        "trusted-token",
        traceparent=TRACEPARENT,
    )
    assert answered.status_code == 200, answered.text
    spans = gateway.receiver.wait_for(
        lambda spans: any(s.trace_id == TRACEPARENT.split("-")[1] and s.name.startswith("execute_tool") for s in spans)
    )
    [server] = [s for s in spans if s.trace_id == TRACEPARENT.split("-")[1] and s.name == "POST /v1/tool_call"]
    assert server.parent_id == TRACEPARENT.split("-")[2]


def test_no_argument_value_reaches_a_span_by_default(gateway: Gateway) -> None:
    with gateway.receiver.lock:
        before = len([s for s in gateway.receiver.spans if s.attributes.get("colony.agent") == "trusted"])
    answered = gateway.note(SECRET, "trusted-token")
    assert answered.status_code == 200, answered.text
    spans = gateway.receiver.wait_for(lambda spans: len(spans) > 0)
    call_spans(gateway.receiver, "trusted", before + 1)
    with gateway.receiver.lock:
        everything = list(gateway.receiver.spans)
    for span in everything:
        assert SECRET not in json.dumps([span.name, span.attributes, span.resource], default=str)
    assert spans


async def test_an_mcp_call_continues_the_trace_its_meta_names(gateway: Gateway) -> None:
    caller_trace, caller_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    # The caller's span is current too: the official client injects the current context into
    # ``_meta`` itself (over the one given) when its process traces, as a caller's would.
    caller = SpanContext(int(caller_trace, 16), int(caller_span, 16), is_remote=True, trace_flags=TraceFlags(1))
    token = otel_context.attach(trace.set_span_in_context(NonRecordingSpan(caller)))
    try:
        async with mcp_over_http(gateway.url, authorization="Bearer trusted-token") as client:
            result = await client.call_tool(
                "append_note",
                {"note": "over mcp", **CASE},
                meta={"traceparent": f"00-{caller_trace}-{caller_span}-01"},  # type: ignore[arg-type]
            )
    finally:
        otel_context.detach(token)
    assert not result.is_error, result
    spans = gateway.receiver.wait_for(
        lambda spans: any(s.trace_id == caller_trace and s.name.startswith("execute_tool") for s in spans)
    )
    mine = {s.name: s for s in spans if s.trace_id == caller_trace}
    method = mine["tools/call append_note"]  # one span: the MCP SDK's server span, with Colony's attributes
    assert [s.name for s in spans if s.trace_id == caller_trace].count("tools/call append_note") == 1
    assert method.attributes["colony.surface"] == "mcp"
    # Its parent is the caller's span, or the official client's own span under it when the test process traces.
    assert method.parent_id and method.parent_id not in {s.span_id for s in spans}
    call = mine["execute_tool append_note"]
    assert call.parent_id == method.span_id
    assert (call.attributes["colony.verdict"], call.attributes["colony.outcome"]) == ("execute", "executed")
    assert {"colony.gate", "colony.execute", "colony.record"} <= set(mine)
