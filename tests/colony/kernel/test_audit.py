"""The audit log: one hash-chained entry per decision, in the decision's transaction, on SQLite and PostgreSQL.

Tampering is done as an attacker with the database would do it: plain SQL on the tables.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import multiprocessing

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import text

from colony.errors import ApprovalError, KernelInputError
from colony.kernel import ColonyKernel, Decision, KernelSettings
from colony.kernel.audit import BATCH, AuditRecord, entry_hash
from colony.kernel.auditing import refusal_record
from tests.colony.kernel.conftest import FakeClock, good_plan
from tests.colony.kernel.workers import propose_audited

ESTIMATE = {"llm_calls": 1.0, "runtime_seconds": 1.0}
CALLS = [("call", ""), ("call", ".to_si"), ("call", "_v2"), ("route", "")]


def entries(kernel: ColonyKernel) -> list[tuple[str, str, str, str]]:
    return [(e.event, e.who, e.on_behalf, e.verdict) for e in kernel.audit_entries()]


def mixed_log(kernel: ColonyKernel) -> None:
    """Every kind of decision: EXECUTE, REFUSE, HOLD -> approve -> claim, HOLD -> reject, HOLD -> expiry."""
    kernel.set_trust("engineer-1", 0.6)
    assert kernel.propose_action(good_plan(budget_estimate=ESTIMATE)).decision is Decision.EXECUTE
    assert kernel.propose_action(good_plan(agent_id="newcomer")).decision is Decision.REFUSE
    held = [kernel.propose_action(good_plan(require_approval=True, acted_by="ops")) for _ in range(3)]
    assert all(verdict.decision is Decision.HOLD for verdict in held)
    approved, rejected, lapsed = (verdict.approval_id for verdict in held)
    assert approved and rejected and lapsed
    kernel.approve(approved, "ops", "fine", display_name="ops@example.org")
    digest = kernel.get_approval(approved).arguments_digest
    kernel.claim_approval(
        approved,
        agent_id="engineer-1",
        tool="pkg.parser",
        target="pkg.parser",
        action="patch_file",
        arguments_digest=digest,
    )
    kernel.reject(rejected, "ops", "not tonight", display_name="ops@example.org")
    kernel.clock.advance(kernel.settings.approval_ttl_seconds + 1)  # type: ignore[attr-defined]
    kernel.tick()


def test_each_decision_appends_who_for_whom_what_and_the_verdict(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    assert entries(any_kernel) == [
        ("propose", "engineer-1", "engineer-1", "execute"),
        ("propose", "newcomer", "newcomer", "refuse"),
        ("propose", "ops", "engineer-1", "hold"),  # an operator acting for the agent
        ("propose", "ops", "engineer-1", "hold"),
        ("propose", "ops", "engineer-1", "hold"),
        ("approve", "ops", "engineer-1", "approved"),
        ("claim", "engineer-1", "engineer-1", "claimed"),
        ("reject", "ops", "engineer-1", "rejected"),
        ("expire", "colony", "engineer-1", "expired"),
    ]
    log = list(any_kernel.audit_entries())
    assert log[0].what == "patch_file pkg.parser" and log[0].detail["gate_score"] > 0
    assert log[2].detail["approval_id"] == log[5].detail["approval_id"]
    assert log[7].detail | {"display_name": "ops@example.org", "note": "not tonight"} == log[7].detail
    assert [entry.seq for entry in log] == list(range(1, 10))
    assert all(entry.prev_hash == before.hash for before, entry in itertools.pairwise(log))
    check = any_kernel.verify_audit()
    assert (check.ok, check.count, check.head_seq, check.head_hash) == (True, 9, 9, log[-1].hash)
    assert any_kernel.verify_audit(log[3].hash).ok  # an earlier head kept by an operator is still in the log


def test_a_decision_that_is_undone_leaves_no_entry(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.6)
    held = kernel.propose_action(good_plan(require_approval=True, budget_estimate={"llm_calls": 500.0}))
    kernel.propose_action(good_plan(budget_estimate={"llm_calls": 500.0}))  # takes the whole period's budget
    assert held.approval_id
    with pytest.raises(ApprovalError, match="budget cannot carry"):
        kernel.approve(held.approval_id, "ops")
    assert kernel.get_approval(held.approval_id).state.value == "pending"
    assert [event for event, *_ in entries(kernel)] == ["propose", "propose"]  # the approval rolled back whole
    with pytest.raises(ApprovalError):
        kernel.approve("no-such-approval", "ops")
    assert kernel.verify_audit().count == 2


def test_a_short_budget_retried_proposal_appends_once(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.6)
    kernel.propose_action(good_plan(budget_estimate={"llm_calls": 500.0}))
    refused = kernel.propose_action(good_plan(budget_estimate={"llm_calls": 1.0}))  # short: decided twice, kept once
    assert refused.decision is not Decision.EXECUTE
    log = list(kernel.audit_entries())
    assert [entry.detail["budget_approved"] for entry in log] == [True, False]
    assert kernel.verify_audit().ok


def test_refusals_are_appended_with_a_count(any_kernel: ColonyKernel) -> None:
    kernel = any_kernel
    records = [
        AuditRecord("refused", "anonymous", "anonymous", "POST /v1/tool_call", "unauthenticated", {"count": 40}),
        AuditRecord("refused", "beta", "beta", "call unit_convert", "rate_limited", {"count": 3}),
    ]
    assert kernel.record_refusals(records) == 2
    assert [entry.detail["count"] for entry in kernel.audit_entries()] == [40, 3]
    with pytest.raises(KernelInputError, match="who"):
        kernel.record_refusals([AuditRecord("refused", "a\x00b", "x", "what", "forbidden")])
    with pytest.raises(KernelInputError, match="on_behalf"):
        kernel.record_refusals([AuditRecord("refused", "a", "", "what", "forbidden")])
    assert kernel.verify_audit().count == 2


def test_a_listing_reads_newest_first_through_pages_and_keeps_only_what_every_filter_names(
    any_kernel: ColonyKernel, clock: FakeClock
) -> None:
    kernel = any_kernel
    mixed_log(kernel)
    refused = [refusal_record("beta", None, f"{verb} unit_convert{tail}", 403, "no") for verb, tail in CALLS]
    kernel.record_refusals(refused)
    clock.advance(60)
    # Two pages and more of newer entries naming the tool only inside other values: read through, not listed.
    inside = {"context": {"tool": "unit_convert"}}
    noise = [refusal_record("gamma", None, "call other", 429, 'no "tool":"unit_convert"', **inside)] * (2 * BATCH)
    kernel.record_refusals([*noise, refusal_record("delta", None, "call unitXconvert", 403, "no", tool="unitXconvert")])
    log = list(kernel.audit_entries())
    assert [e.seq for e in kernel.audit_list()] == [e.seq for e in reversed(log)][:50]

    # Named by a refused call's what, or a decision's detail; not inside another value, as a prefix or a pattern.
    assert [e.what for e in kernel.audit_list(tool="unit_convert")] == [
        "route unit_convert",
        "call unit_convert.to_si",
        "call unit_convert",
    ]
    assert [e.seq for e in kernel.audit_list(tool="pkg.parser")] == [9, 8, 7, 6]
    held = kernel.audit_list(who="ops", event="propose", verdict="hold")
    assert [e.seq for e in held] == [5, 4, 3]
    assert [e.event for e in kernel.audit_list(on_behalf="engineer-1", limit=3)] == ["expire", "reject", "claim"]
    assert [e.seq for e in kernel.audit_list(until_at=clock.now - 60, limit=4)] == [13, 12, 11, 10]
    assert {e.who for e in kernel.audit_list(since_at=clock.now, limit=1000)} == {"gamma", "delta"}
    assert kernel.audit_list(verdict="403") == []


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ({"event": "proposed"}, "event"),
        ({"verdict": "allowed"}, "verdict"),
        ({"who": ""}, "who"),
        ({"tool": "a\x00b"}, "tool"),
        ({"since_at": 2.0, "until_at": 1.0}, "since"),
        ({"until_at": float("nan")}, "until_at"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
    ],
)
def test_a_listing_names_the_filter_that_cannot_match(
    kernel: ColonyKernel, filters: dict[str, object], field: str
) -> None:
    with pytest.raises(KernelInputError) as raised:
        kernel.audit_list(**filters)  # type: ignore[arg-type]
    assert raised.value.fields == [field]


def test_export_reads_from_a_seq_or_a_time(kernel: ColonyKernel, clock: FakeClock) -> None:
    for minute in range(5):
        kernel.record_refusals([AuditRecord("refused", f"caller-{minute}", "x", "call t", "forbidden")])
        clock.advance(60)
    assert [e.who for e in kernel.audit_entries(since_seq=4)] == ["caller-3", "caller-4"]
    assert [e.seq for e in kernel.audit_entries(since_at=clock.now - 120)] == [4, 5]
    assert list(kernel.audit_entries(since_seq=99)) == []
    with pytest.raises(KernelInputError, match="since"):
        list(kernel.audit_entries(since_seq=0))
    with pytest.raises(KernelInputError, match="head"):
        kernel.verify_audit("not-a-hash")


# -- tampering ---------------------------------------------------------------------------------------


def sql(kernel: ColonyKernel, *statements: str) -> None:
    def run(connection):  # type: ignore[no-untyped-def]
        for statement in statements:
            connection.execute(text(statement))

    kernel.store.run(run)


def test_an_edited_entry_is_named(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    sql(any_kernel, "UPDATE colony_audit_log SET verdict = 'approved' WHERE seq = 8")  # a rejection made an approval
    check = any_kernel.verify_audit()
    assert (check.ok, check.seq, check.head_seq) == (False, 8, 7)
    assert check.problem and "entry 8 was changed" in check.problem


def test_an_edited_entry_with_a_recomputed_hash_breaks_the_next_link(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    [row] = any_kernel.store.run(
        lambda c: [dict(r._mapping) for r in c.execute(text("SELECT * FROM colony_audit_log WHERE seq = 2"))]
    )
    forged = row | {"who": "someone-else"}
    digest = entry_hash(forged, forged["prev_hash"])
    sql(any_kernel, f"UPDATE colony_audit_log SET who = 'someone-else', hash = '{digest}' WHERE seq = 2")
    check = any_kernel.verify_audit()
    assert (check.ok, check.seq) == (False, 3)
    assert check.problem and "entry 3 does not follow entry 2" in check.problem


def test_a_removed_entry_in_the_middle_is_named(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    sql(any_kernel, "DELETE FROM colony_audit_log WHERE seq = 5")
    check = any_kernel.verify_audit()
    assert (check.ok, check.seq) == (False, 5)
    assert check.problem and "entry 5 is missing" in check.problem


def test_a_removed_entry_with_the_rest_renumbered_is_named(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    sql(any_kernel, "DELETE FROM colony_audit_log WHERE seq = 5")
    for seq in range(6, 10):
        sql(any_kernel, f"UPDATE colony_audit_log SET seq = {seq - 1} WHERE seq = {seq}")
    check = any_kernel.verify_audit()
    assert (check.ok, check.seq) == (False, 5)
    assert check.problem and "entry 5 does not follow entry 4" in check.problem


def test_an_inserted_entry_is_named(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    for seq in range(9, 3, -1):  # make room after entry 3, as an insert in the middle must
        sql(any_kernel, f"UPDATE colony_audit_log SET seq = {seq + 1} WHERE seq = {seq}")
    [row] = any_kernel.store.run(
        lambda c: [dict(r._mapping) for r in c.execute(text("SELECT * FROM colony_audit_log WHERE seq = 3"))]
    )
    fake = row | {"seq": 4, "verdict": "execute", "prev_hash": row["hash"]}
    fake["hash"] = entry_hash(fake, fake["prev_hash"])
    columns = ", ".join(fake)
    values = ", ".join(f":{name}" for name in fake)
    any_kernel.store.run(lambda c: c.execute(text(f"INSERT INTO colony_audit_log ({columns}) VALUES ({values})"), fake))
    check = any_kernel.verify_audit()
    assert (check.ok, check.seq) == (False, 5)
    assert check.problem and "entry 5 does not follow entry 4" in check.problem


def test_a_cut_tail_shows_against_the_head_and_against_a_kept_head(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    kept = any_kernel.verify_audit().head_hash
    sql(any_kernel, "DELETE FROM colony_audit_log WHERE seq > 6")
    check = any_kernel.verify_audit()
    assert (check.ok, check.seq) == (False, 7)
    assert check.problem and "entries 7 to 9 are missing" in check.problem
    [sixth] = [entry for entry in any_kernel.audit_entries() if entry.seq == 6]
    sql(any_kernel, f"UPDATE colony_audit_head SET seq = 6, hash = '{sixth.hash}'")  # the head rewritten too
    assert any_kernel.verify_audit().ok  # the chain alone cannot tell: that is what a kept head is for
    check = any_kernel.verify_audit(kept)
    assert not check.ok and check.problem and f"kept head {kept} is not in the log" in check.problem


def test_an_entry_appended_behind_the_kernels_back_is_named(any_kernel: ColonyKernel) -> None:
    mixed_log(any_kernel)
    sql(any_kernel, "UPDATE colony_audit_head SET seq = 8")
    check = any_kernel.verify_audit()
    assert (check.ok, check.seq) == (False, 9)
    assert check.problem and "entry 9 was inserted" in check.problem


# -- concurrency -------------------------------------------------------------------------------------

PROCESSES = 4
ROUNDS = 10


def test_concurrent_writers_build_one_linear_chain(database_url: str) -> None:
    settings = KernelSettings(database_url=database_url, attestation_secret="shared-test-key")
    kernel = ColonyKernel(settings)
    kernel.set_trust("ant-a", 0.6)
    context = multiprocessing.get_context("fork")
    with context.Pool(PROCESSES) as pool:
        written = pool.starmap(propose_audited, [(database_url, n, ROUNDS) for n in range(PROCESSES)])
    check = kernel.verify_audit()
    assert check.ok, check.problem
    assert check.count == sum(written) == PROCESSES * ROUNDS * 2  # a proposal and a refusal per round
    log = list(kernel.audit_entries())
    assert [entry.seq for entry in log] == list(range(1, check.count + 1))
    assert len({entry.prev_hash for entry in log}) == check.count  # no fork: every entry has its own predecessor
    per_worker = {n: [e for e in log if e.detail.get("worker") == n] for n in range(PROCESSES)}
    assert all(len(found) == ROUNDS for found in per_worker.values())
    kernel.close()


@given(
    row=st.fixed_dictionaries(
        {
            "seq": st.integers(min_value=1, max_value=2**53),
            "at": st.floats(min_value=0, max_value=4e9),
            "event": st.text(max_size=20),
            "who": st.text(max_size=20),
            "on_behalf": st.text(max_size=20),
            "what": st.text(max_size=40),
            "verdict": st.text(max_size=10),
            "detail": st.text(max_size=40),
        }
    ),
    prev_hash=st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
)
def test_the_entry_hash_is_the_sha256_of_the_canonical_json(row: dict[str, object], prev_hash: str) -> None:
    canonical = json.dumps(row | {"prev_hash": prev_hash}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert entry_hash(row, prev_hash) == hashlib.sha256(canonical.encode()).hexdigest()


def test_postgresql_chains_entries_as_the_verifier_does(postgres_url: str, clock: FakeClock) -> None:
    """On PostgreSQL the server hashes each entry (sha256 in SQL); the Python verifier must agree, byte for byte."""
    kernel = ColonyKernel(KernelSettings(database_url=postgres_url), clock=clock)
    kernel.record_refusals(
        [
            refusal_record('ünïcode \\ "quoted" \n agent', "målgrupp", "tool:ü \u2028 x", 403, "nope\tnope"),
            refusal_record("a", None, "tool:b", 401, "x" * 3000),
        ]
    )
    kernel.propose_action({**good_plan(), "target": "pkg.\u00e9t\u00e9"})
    check = kernel.verify_audit()
    assert (check.ok, check.count) == (True, 3), check.problem
    kernel.close()
