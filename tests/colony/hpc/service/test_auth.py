"""Tokens to principals, and the one ownership rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from colony.errors import HPCRequestError
from colony.hpc import HPCSettings
from colony.hpc.service.auth import HPCPrincipal, TokenTable, may_access, owner_key, parse_token_table, resolve_owner

ALICE = HPCPrincipal(agent="alice", capabilities=("tool:echo",))
OPS = HPCPrincipal(agent="ops", operator=True)


def test_a_principal_reaches_its_own_jobs_and_an_operator_everyone_s() -> None:
    assert may_access(ALICE, "alice") and not may_access(ALICE, "bob") and not may_access(ALICE, "alice ")
    assert may_access(OPS, "alice") and may_access(OPS, "ops")
    assert resolve_owner(ALICE, None) == "alice" == resolve_owner(ALICE, "alice")
    assert resolve_owner(OPS, "alice") == "alice"
    with pytest.raises(HPCRequestError, match="only an operator") as caught:
        resolve_owner(ALICE, "bob")
    assert caught.value.status_code == 403


@pytest.mark.parametrize(
    ("held", "asked", "allowed"),
    [
        (("tool:echo",), "tool:echo", True),
        (("tool:echo",), "tool:echo2", False),
        (("tool:*",), "tool:anything", True),
        (("kernel:*",), "tool:echo", False),
        (("*",), "tool:echo", True),
        ((), "tool:echo", False),
    ],
)
def test_capability_tokens(held: tuple[str, ...], asked: str, allowed: bool) -> None:
    assert HPCPrincipal(agent="a", capabilities=held).allows(asked) is allowed


def test_owner_keys_are_safe_path_segments_that_never_collide() -> None:
    assert owner_key("engineer-1") == "engineer-1"
    odd = owner_key("../../etc")
    assert odd.startswith("_") and "/" not in odd and odd != owner_key("../../etc2")
    assert owner_key("x" * 65).startswith("_")


def test_the_table_and_the_single_token_are_both_principals() -> None:
    table = {"t-alice": {"agent": "alice", "capabilities": ["tool:echo"]}, "t-ops": {"agent": "ops", "operator": True}}
    settings = HPCSettings(token=SecretStr("single"), token_owner="runner", tokens=SecretStr(json.dumps(table)))
    tokens = TokenTable.from_settings(settings)
    assert tokens.authenticate("t-alice") == ALICE
    assert tokens.authenticate("t-ops").operator is True
    assert tokens.authenticate("single") == HPCPrincipal(agent="runner", capabilities=("*",))
    for wrong in (None, "", "t-alic", "t-alice2"):
        with pytest.raises(HPCRequestError, match="missing or wrong bearer token") as caught:
            tokens.authenticate(wrong)
        assert caught.value.status_code == 401


def test_the_table_can_come_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"t": {"agent": "alice"}}))
    assert TokenTable.from_settings(HPCSettings(tokens_file=path)).authenticate("t").agent == "alice"
    with pytest.raises(HPCRequestError, match="cannot read the HPC token table"):
        TokenTable.from_settings(HPCSettings(tokens_file=tmp_path / "missing.json"))


def test_no_token_at_all_is_refused() -> None:
    with pytest.raises(HPCRequestError, match="set COLONY_HPC_TOKEN or COLONY_HPC_TOKENS"):
        TokenTable.from_settings(HPCSettings())


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("not json", "not valid JSON"),
        ('["s3cret"]', "must be a JSON object"),
        ('{"s3cret": ["tool:echo"]}', "entry 1 of the token table is malformed"),
        ('{"s3cret": {"agent": ""}}', "agent: String should have at least 1 character"),
        ('{"s3cret": {"agent": "a", "admin": true}}', "admin: Extra inputs are not permitted"),
        ('{"s3cret": {"agent": "a", "operator": "yes please"}}', "operator: Input should be a valid boolean"),
    ],
)
def test_a_malformed_table_names_the_source_and_entry_never_the_token(text: str, named: str) -> None:
    with pytest.raises(HPCRequestError, match="COLONY_HPC_TOKENS") as caught:
        parse_token_table(text, "COLONY_HPC_TOKENS")
    assert named in str(caught.value) and "s3cret" not in str(caught.value)


def test_an_empty_token_in_the_table_is_refused() -> None:
    with pytest.raises(HPCRequestError, match="a configured HPC token is empty"):
        TokenTable({" ": ALICE})
