"""Groups come from the credential (a token grant or the JWT's ``groups`` claim), never from the call."""

from __future__ import annotations

from colony.surfaces.auth import TokenGrant, principal_from_claims


def test_a_jwt_groups_claim_and_a_token_grant_name_the_principals_groups() -> None:
    assert principal_from_claims({"sub": "dpo", "groups": ["privacy", "ops"]}).groups == {"privacy", "ops"}
    assert principal_from_claims({"sub": "dpo", "groups": "privacy ops"}).groups == {"privacy", "ops"}
    assert principal_from_claims({"sub": "clerk"}).groups == frozenset()
    grant = TokenGrant.model_validate({"agent": "dpo", "capabilities": ["tool:*"], "groups": ["privacy"]})
    assert grant.principal().groups == {"privacy"}
