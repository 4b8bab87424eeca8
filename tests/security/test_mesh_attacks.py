"""Attacks through a gateway's peers: a routed call is judged by the peer as its caller, never as the gateway.

Sent with the gateway's peer token (an operator at the peer), a caller holding one tool token
reached the peer as the gateway: the peer's policies, capabilities and limits judged the gateway's
principal, and every caller of the gateway shared one rate bucket there.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.colony.policy.test_policy_decisions import guide_policies
from tests.services.gateway import StartGateway

TOKENS = {
    "clerk": {"agent": "clerk", "capabilities": ["tool:*"]},
    "privacy": {"agent": "dpo", "capabilities": ["tool:*"], "groups": ["privacy"]},
    "gateway-a": {"agent": "gateway-a", "capabilities": ["*"], "operator": True},
}
TEXT = {"text": "Write to ann@example.org"}


def test_a_routed_call_meets_the_peers_policies_and_limits_as_its_caller(
    start_gateway: StartGateway, tmp_path: Path
) -> None:
    rules = tmp_path / "policies"
    rules.mkdir()
    (rules / "guide.cedar").write_text(guide_policies())
    (rules / "baseline.cedar").write_text("permit(principal, action, resource);\n")
    tokens = json.dumps(TOKENS)
    limits = json.dumps({"principal": {"rate": 0.001, "burst": 2}})
    peer = start_gateway(COLONY_POLICIES=str(rules), COLONY_GATEWAY_TOKENS=tokens, COLONY_GATEWAY_RATE_LIMITS=limits)
    gateway = start_gateway(
        COLONY_GATEWAY_TOKENS=tokens, COLONY_GATEWAY_PEERS=json.dumps([{"url": peer, "token": "gateway-a"}])
    )

    def routed(token: str, tool: str = "pii_redact", arguments: dict[str, object] = TEXT) -> httpx.Response:
        body = {"target": {"kind": "remote", "url": peer}, "tool_name": tool, "tool_args": arguments}
        return httpx.post(
            f"{gateway}/v1/tool_call", json=body, headers={"authorization": f"Bearer {token}"}, timeout=30
        )

    refused = routed("clerk")
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["policies"] == ["pii-privacy-group-only"]  # the peer judged the clerk
    allowed = routed("privacy")
    assert allowed.status_code == 200 and "[REDACTED]" in allowed.json()["result"]["redacted_text"]
    # The peer's limits count each caller, not the gateway: the dpo's burst is spent, the clerk's is not.
    convert = {"value": 1, "from_unit": "km", "to_unit": "m"}
    assert routed("privacy", "unit_convert", convert).status_code == 200
    assert routed("privacy", "unit_convert", convert).status_code == 429
    assert routed("clerk", "unit_convert", convert).status_code == 200
