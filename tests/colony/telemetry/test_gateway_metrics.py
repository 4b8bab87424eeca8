"""GET /metrics of a real gateway, one worker and two, parsed with prometheus_client after a known sequence of calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from colony.kernel import ColonyKernel, KernelSettings
from tests.colony.surfaces.sample_tools import sample_repo
from tests.services import free_port
from tests.services.gateway import start_gateway_process, stop_gateway_process

TOKENS = {
    "ops-token": {"agent": "ops", "capabilities": ["*"], "operator": True},
    "scribe-token": {"agent": "scribe", "capabilities": ["tool:*", "kernel:read"]},
    "trusted-token": {"agent": "trusted", "capabilities": ["tool:*", "kernel:read"]},
    "newcomer-token": {"agent": "newcomer", "capabilities": ["tool:*", "kernel:read"]},
    "reader-token": {"agent": "reader", "capabilities": ["kernel:read"]},
}
CASE = {
    "rationale": "Record the outcome of the nightly calibration run for the operators to review",
    "rollback_plan": "Delete the appended line from notes.txt; nothing else is touched",
    "evidence": {"tests": ["tests/test_notes.py::test_append"]},
}
CONVERT = {"tool_name": "unit_convert", "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"}}
LIMITS = {"tools": {"unit_convert": {"rate": 0.001, "burst": 3}}}  # a fourth conversion in the test is refused 429
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@dataclass(frozen=True)
class Gateway:
    url: str
    workers: int

    def post(self, body: object, token: str) -> httpx.Response:
        headers = {"authorization": f"Bearer {token}", "connection": "close"}  # a new connection: any worker answers
        return httpx.post(f"{self.url}/v1/tool_call", json=body, headers=headers, timeout=60)

    def scrape(self, token: str = "reader-token") -> Samples:
        answer = httpx.get(f"{self.url}/metrics", headers={"authorization": f"Bearer {token}", "connection": "close"})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/plain")
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(answer.text)
            for sample in family.samples
        }


@pytest.fixture(scope="module", params=[1, 2], ids=["one-worker", "two-workers"])
def gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    workers: int = request.param
    root = sample_repo(tmp_path_factory.mktemp("repo"))
    home = tmp_path_factory.mktemp("home")
    kernel = ColonyKernel(KernelSettings(home=home))
    kernel.set_trust("scribe", 0.4)
    kernel.set_trust("trusted", 0.9)
    kernel.deposit("tool:append_note", "failure", 30.0)
    kernel.close()
    env: dict[str, str | None] = {
        "COLONY_REPO_ROOT": str(root),
        "COLONY_HOME": str(home),
        "COLONY_GATEWAY_TOKENS": json.dumps(TOKENS),
        "PROMETHEUS_MULTIPROC_DIR": None,  # unset: prometheus_client takes even an empty value as a directory
    }
    if workers == 1:
        env["COLONY_GATEWAY_RATE_LIMITS"] = json.dumps(LIMITS)  # each worker keeps its own buckets
    port = free_port()
    process = start_gateway_process(env, port, timeout=120, args=("--workers", str(workers)))
    yield Gateway(f"http://127.0.0.1:{port}", workers)
    stop_gateway_process(process)


def calls(samples: Samples, **labels: str) -> float:
    """colony_calls_total summed over the samples with these labels."""
    return sum(
        value
        for (name, given), value in samples.items()
        if name == "colony_calls_total" and labels.items() <= dict(given).items()
    )


def test_metrics_count_a_known_sequence_of_calls_exactly(gateway: Gateway, tmp_path: Path) -> None:
    for _ in range(3):
        assert gateway.post(CONVERT, "ops-token").status_code == 200
    if gateway.workers == 1:
        assert gateway.post(CONVERT, "ops-token").status_code == 429
    assert gateway.post(CONVERT, "reader-token").status_code == 403
    assert gateway.post(CONVERT, "no-such-token").status_code == 401
    note = {"tool_name": "append_note", "tool_args": {"note": "counted"}, **CASE}
    assert gateway.post(note, "trusted-token").status_code == 200
    assert gateway.post(note, "newcomer-token").status_code == 409
    assert gateway.post({**note, "evidence": {}}, "scribe-token").status_code == 202
    assert gateway.post({"tool_name": "no_such_tool", "tool_args": {}}, "ops-token").status_code == 404

    for _ in range(3):  # whichever worker answers, the counts are the whole gateway's
        samples = gateway.scrape()
        assert calls(samples, tool="unit_convert", verdict="none", outcome="executed") == 3
        assert calls(samples, tool="unit_convert", outcome="CapabilityDeniedError") == 1
        assert calls(samples, tool="append_note", verdict="execute", outcome="executed") == 1
        assert calls(samples, tool="append_note", verdict="refuse", outcome="refused") == 1
        assert calls(samples, tool="append_note", verdict="hold", outcome="held") == 1
        assert calls(samples, tool="(unresolved)", outcome="UnknownToolError") == 1
        limited = 1 if gateway.workers == 1 else 0  # refused by the limits step, before the tool is resolved
        assert calls(samples, tool="(unresolved)", outcome="RateLimitedError") == limited
        assert calls(samples) == 8 + limited  # the 401 never reaches the runtime
        assert samples[("colony_call_duration_seconds_count", (("tool", "unit_convert"),))] == 4
        assert samples[("colony_governance_duration_seconds_count", (("tool", "append_note"),))] == 3
        codes = {
            dict(labels)["code"]: value
            for (name, labels), value in samples.items()
            if name == "colony_http_responses_total"
        }
        expected = {"200": 4, "202": 1, "401": 1, "403": 1, "404": 1, "409": 1} | (
            {"429": 1} if gateway.workers == 1 else {}
        )
        assert {code: value for code, value in codes.items() if code in expected or code != "200"} == expected | {
            "200": codes["200"]
        }
        assert codes["200"] >= 4  # and the scrapes before this one
        assert samples[("colony_approvals_pending", ())] == 1
        assert samples[("colony_approval_oldest_pending_age_seconds", ())] >= 0
        assert ("colony_budget_used", (("resource", "runtime_seconds"),)) in samples


def test_metrics_ask_for_a_token(gateway: Gateway) -> None:
    answer = httpx.get(f"{gateway.url}/metrics")
    assert answer.status_code == 401
