"""Authorizations: issued on EXECUTE, accepted once, and refused when forged, expired, replayed or mismatched."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from colony.errors import AttestationError
from colony.kernel import AttestationMode, ColonyKernel, KernelSettings
from tests.colony.kernel.conftest import FakeClock, good_plan

REPORT = {
    "agent_id": "engineer-1",
    "action_type": "patch_file",
    "target": "pkg.parser",
    "actual_outcome": "patched; tests pass",
    "tests_passed": True,
}


def _authorized(kernel: ColonyKernel) -> str:
    kernel.set_trust("engineer-1", 0.3)
    verdict = kernel.propose_action(good_plan(budget_estimate={"llm_calls": 2, "runtime_seconds": 30}))
    assert verdict.authorization
    return verdict.authorization


def test_attested_report_settles_the_reservation_with_actual_usage(kernel: ColonyKernel) -> None:
    token = _authorized(kernel)
    record = kernel.record_outcome({**REPORT, "llm_calls": 1, "runtime_seconds": 12.5}, authorization=token)
    assert record.attested
    usage = kernel.status().budget_usage
    assert (usage["llm_calls"].used, usage["runtime_seconds"].used) == (1, 12.5)
    [consequence] = kernel.consequence_log("engineer-1")
    assert consequence.proposal_id is not None


def test_replay_is_refused_and_writes_nothing(kernel: ColonyKernel) -> None:
    token = _authorized(kernel)
    kernel.record_outcome(REPORT, authorization=token)
    with pytest.raises(AttestationError, match="already used"):
        kernel.record_outcome(REPORT, authorization=token)
    assert len(kernel.consequence_log("engineer-1")) == 1


def test_forged_signature_is_refused(kernel: ColonyKernel) -> None:
    version, payload, mac = _authorized(kernel).split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["tgt"] = "pkg.other"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    with pytest.raises(AttestationError, match="signature is invalid"):
        kernel.record_outcome({**REPORT, "target": "pkg.other"}, authorization=f"{version}.{forged}.{mac}")
    assert kernel.consequence_log("engineer-1") == []


@pytest.mark.parametrize("token", ["", "garbage", "v1.a.b.c", "v2.abc.def"])
def test_malformed_token_is_refused(kernel: ColonyKernel, token: str) -> None:
    with pytest.raises(AttestationError):
        kernel.record_outcome(REPORT, authorization=token)


def test_token_from_another_key_is_refused(colony_home: Path, clock: FakeClock, kernel: ColonyKernel) -> None:
    other = ColonyKernel(
        KernelSettings(home=colony_home, database_url=f"sqlite:///{colony_home / 'other.db'}"), clock=clock
    )
    other.set_trust("engineer-1", 0.3)
    token = other.propose_action(good_plan()).authorization
    assert token
    with pytest.raises(AttestationError, match="signature is invalid"):
        kernel.record_outcome(REPORT, authorization=token)
    other.close()


def test_expired_token_is_refused(kernel: ColonyKernel, clock: FakeClock) -> None:
    token = _authorized(kernel)
    clock.advance(3601)
    with pytest.raises(AttestationError, match="expired"):
        kernel.record_outcome(REPORT, authorization=token)


@pytest.mark.parametrize("field", ["agent_id", "action_type", "target"])
def test_mismatched_report_is_refused(kernel: ColonyKernel, field: str) -> None:
    token = _authorized(kernel)
    with pytest.raises(AttestationError, match=f"{field} is"):
        kernel.record_outcome({**REPORT, field: "something-else"}, authorization=token)
    # the token is still good for the matching report: nothing was consumed
    assert kernel.record_outcome(REPORT, authorization=token).attested


def test_required_mode_refuses_unattested_reports(colony_home: Path, clock: FakeClock) -> None:
    kernel = ColonyKernel(KernelSettings(home=colony_home, attestation=AttestationMode.REQUIRED), clock=clock)
    with pytest.raises(AttestationError, match="required"):
        kernel.record_outcome(REPORT)
    assert kernel.record_outcome(REPORT, authorization=_authorized(kernel)).attested
    kernel.close()


def test_off_mode_issues_no_tokens_and_ignores_them(colony_home: Path, clock: FakeClock) -> None:
    kernel = ColonyKernel(KernelSettings(home=colony_home, attestation="off"), clock=clock)
    kernel.set_trust("engineer-1", 0.3)
    verdict = kernel.propose_action(good_plan())
    assert verdict.decision.value == "execute" and verdict.authorization is None
    assert kernel.record_outcome(REPORT, authorization="anything").attested is False
    kernel.close()


def test_secret_from_settings_is_used(colony_home: Path, clock: FakeClock) -> None:
    settings = KernelSettings(home=colony_home, attestation_secret="s3cret-key")
    first = ColonyKernel(settings, clock=clock)
    token = _authorized(first)
    first.close()
    second = ColonyKernel(settings, clock=clock)  # a restart keeps honouring the same key
    assert second.record_outcome(REPORT, authorization=token).attested
    second.close()


def test_genuine_signature_for_an_unissued_verdict_is_refused(kernel: ColonyKernel, clock: FakeClock) -> None:
    claims = kernel.attestor.issue("no-such-proposal", "engineer-1", "patch_file", "pkg.parser", clock.now)
    with pytest.raises(AttestationError, match="no issued verdict"):
        kernel.record_outcome(REPORT, authorization=kernel.attestor.sign(claims))


def test_a_held_verdict_carries_no_authorization_to_consume(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.6)
    verdict = kernel.propose_action(good_plan(evidence="{}"))
    assert verdict.decision.value == "hold" and verdict.authorization is None


def test_an_issued_authorization_is_signed_again_until_it_is_used(kernel: ColonyKernel) -> None:
    token = _authorized(kernel)
    verdict_id = token_claims(token)["pid"]
    assert kernel.authorization_for(verdict_id, good_plan()) == token  # the same token, from the stored proposal
    kernel.record_outcome(REPORT, authorization=token)
    with pytest.raises(AttestationError, match="already used"):
        kernel.authorization_for(verdict_id, good_plan())


def test_an_authorization_is_not_signed_again_for_another_request_or_after_expiry(
    kernel: ColonyKernel, clock: FakeClock
) -> None:
    verdict_id = token_claims(_authorized(kernel))["pid"]
    with pytest.raises(AttestationError, match="another request"):
        kernel.authorization_for(verdict_id, good_plan(target="pkg.other"))
    with pytest.raises(AttestationError, match="no verdict"):
        kernel.authorization_for("00000000-0000-7000-8000-000000000000", good_plan())
    clock.advance(3601)
    with pytest.raises(AttestationError, match="expired"):
        kernel.authorization_for(verdict_id, good_plan())


def test_a_verdict_without_a_token_has_none_to_sign_again(kernel: ColonyKernel) -> None:
    verdict = kernel.propose_action(good_plan(agent_id="newcomer"))  # SANDBOX: refused, no token
    assert verdict.proposal_id is not None and verdict.authorization is None
    assert kernel.authorization_for(verdict.proposal_id, good_plan(agent_id="newcomer")) is None


def token_claims(token: str) -> dict[str, object]:
    payload = token.split(".")[1]
    claims: dict[str, object] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return claims
