"""Older kernel databases open under the current schema: new columns filled in, leaked reservations expire."""

from __future__ import annotations

from sqlalchemy import create_engine, text

from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.schema import SCHEMA_VERSION
from tests.colony.kernel.conftest import FakeClock

# colony_* tables as version 1 created them (the columns the later steps add left out)
V1_TABLES = [
    "CREATE TABLE colony_schema_version (version INTEGER PRIMARY KEY)",
    "CREATE TABLE colony_kernel_state (id INTEGER PRIMARY KEY, tick_count INTEGER NOT NULL, "
    "trace_count INTEGER NOT NULL, pruning_candidates INTEGER NOT NULL)",
    "CREATE TABLE colony_secrets (name VARCHAR(64) PRIMARY KEY, value VARCHAR(256) NOT NULL)",
    "CREATE TABLE colony_agents (agent_id VARCHAR(256) PRIMARY KEY, trust FLOAT NOT NULL, role VARCHAR(32) NOT NULL,"
    " total_proposals INTEGER NOT NULL, accepted_proposals INTEGER NOT NULL, last_updated FLOAT NOT NULL)",
    "CREATE TABLE colony_pheromones (location VARCHAR(1024), signal_type VARCHAR(32), strength FLOAT NOT NULL,"
    " written_tick INTEGER NOT NULL, expires_tick INTEGER NOT NULL, rank_key FLOAT NOT NULL, decay_rate FLOAT NOT NULL,"
    " source VARCHAR(32) NOT NULL, evidence TEXT NOT NULL, updated_at FLOAT NOT NULL, deposits INTEGER NOT NULL,"
    " PRIMARY KEY (location, signal_type))",
    "CREATE TABLE colony_budget_periods (period INTEGER PRIMARY KEY, llm_calls_used FLOAT NOT NULL,"
    " llm_calls_reserved FLOAT NOT NULL, llm_calls_max FLOAT NOT NULL, runtime_seconds_used FLOAT NOT NULL,"
    " runtime_seconds_reserved FLOAT NOT NULL, runtime_seconds_max FLOAT NOT NULL)",
    "CREATE TABLE colony_proposals (proposal_id VARCHAR(36) PRIMARY KEY, agent_id VARCHAR(256) NOT NULL,"
    " action_type VARCHAR(256) NOT NULL, target VARCHAR(1024) NOT NULL, decision VARCHAR(16) NOT NULL,"
    " gate_score FLOAT NOT NULL, created_at FLOAT NOT NULL, period INTEGER, reserved_llm_calls FLOAT NOT NULL,"
    " reserved_runtime_seconds FLOAT NOT NULL, token_nonce VARCHAR(36), consumed_at FLOAT)",
    "CREATE TABLE colony_consequences (seq INTEGER PRIMARY KEY, consequence_id VARCHAR(36) NOT NULL UNIQUE,"
    " proposal_id VARCHAR(36) UNIQUE, agent_id VARCHAR(256) NOT NULL, action_type VARCHAR(256) NOT NULL,"
    " target VARCHAR(1024) NOT NULL, actual_outcome TEXT NOT NULL, tests_passed BOOLEAN NOT NULL,"
    " human_feedback FLOAT NOT NULL, trust_before FLOAT NOT NULL, trust_after FLOAT NOT NULL,"
    " recorded_at FLOAT NOT NULL)",
]
NOW = 1_751_234_500.0
PERIOD = int(NOW // 86400)
PAGER_FIX = {
    "agent_id": "engineer-1",
    "action_type": "patch_file",
    "target": "pkg.mod",
    "rationale": "Fix the off-by-one in the pager",
    "rollback_plan": "git revert",
}
V1_ROWS = [
    "INSERT INTO colony_schema_version VALUES (1)",
    "INSERT INTO colony_kernel_state VALUES (1, 5, 0, 0)",
    # the counters: three reports without proposals; and an agent with one leaked reservation
    f"INSERT INTO colony_agents VALUES ('reporter', 0.302, 'repair_ant', 0, 3, {NOW})",
    f"INSERT INTO colony_agents VALUES ('crashed', 0.3, 'repair_ant', 2, 1, {NOW})",
    f"INSERT INTO colony_budget_periods VALUES ({PERIOD}, 4, 6, 500, 0, 20, 3600)",
    f"INSERT INTO colony_proposals VALUES ('p-leaked', 'crashed', 'patch_file', 'pkg.a', 'execute', 0.7, {NOW - 7200},"
    f" {PERIOD}, 6, 20, 'n1', NULL)",
    f"INSERT INTO colony_proposals VALUES ('p-done', 'crashed', 'patch_file', 'pkg.a', 'execute', 0.7, {NOW - 7200},"
    f" {PERIOD}, 4, 10, 'n2', {NOW - 7000})",
]


def test_a_version_1_database_is_migrated(database_url: str) -> None:
    engine = create_engine(database_url)
    serial = "SERIAL" if engine.dialect.name == "postgresql" else "INTEGER"
    with engine.begin() as connection:
        for statement in V1_TABLES + V1_ROWS:
            connection.execute(text(statement.replace("seq INTEGER", f"seq {serial}")))
    engine.dispose()

    kernel = ColonyKernel(KernelSettings(database_url=database_url), clock=FakeClock(NOW))
    version = kernel.store.run(lambda c: c.execute(text("SELECT version FROM colony_schema_version")).scalar())
    assert version == SCHEMA_VERSION
    reporter = kernel.proposal_counts("reporter")
    assert (reporter.total, reporter.accepted) == (0, 0)  # accepted no longer above total
    crashed = kernel.proposal_counts("crashed")
    assert (crashed.total, crashed.accepted, crashed.rejected, crashed.held) == (2, 1, 1, 0)
    # the leaked reservation lapses with the old default TTL, and is released with its trace in the history
    usage = kernel.status().budget_usage["llm_calls"]
    assert (usage.used, usage.reserved, usage.expired) == (4, 0, 6)
    [expiry] = kernel.consequence_log("crashed")
    assert (expiry.kind.value, expiry.proposal_id) == ("expiry", "p-leaked")
    assert kernel.tick().tick_count == 6
    kernel.close()
    again = ColonyKernel(KernelSettings(database_url=database_url), clock=FakeClock(NOW))  # migrates once only
    assert again.status().budget_usage["llm_calls"].expired == 6
    again.close()


def reopened_at(kernel: ColonyKernel, version: int, *statements: str) -> ColonyKernel:
    """Undo what came after ``version`` with ``statements``, mark the database ``version``, and open it again."""

    def downgrade(connection):  # type: ignore[no-untyped-def]
        for statement in (*statements, f"UPDATE colony_schema_version SET version = {version}"):
            connection.execute(text(statement))

    kernel.store.run(downgrade)
    url = kernel.settings.database_url
    kernel.close()
    return ColonyKernel(KernelSettings(database_url=url), clock=FakeClock(NOW))


def schema_version(kernel: ColonyKernel) -> int:
    return int(kernel.store.run(lambda c: c.execute(text("SELECT version FROM colony_schema_version")).scalar()))


def test_a_version_2_database_gains_the_approvals_table(database_url: str) -> None:
    kernel = ColonyKernel(KernelSettings(database_url=database_url), clock=FakeClock(NOW))
    kernel.set_trust("engineer-1", 0.6)

    again = reopened_at(kernel, 2, "DROP TABLE colony_approvals")
    assert schema_version(again) == SCHEMA_VERSION
    assert again.list_approvals() == []
    assert again.find_profile("engineer-1") is not None  # nothing else touched
    again.close()


def test_a_version_3_database_gains_an_empty_audit_log_that_verifies(database_url: str) -> None:
    kernel = ColonyKernel(KernelSettings(database_url=database_url), clock=FakeClock(NOW))
    kernel.set_trust("engineer-1", 0.6)

    again = reopened_at(kernel, 3, "DROP TABLE colony_audit_log", "DROP TABLE colony_audit_head")
    assert schema_version(again) == SCHEMA_VERSION
    check = again.verify_audit()
    assert (check.ok, check.count, check.head_seq) == (True, 0, 0)
    again.propose_action(PAGER_FIX)
    check = again.verify_audit()
    assert (check.ok, check.count, check.head_seq) == (True, 1, 1)
    assert again.find_profile("engineer-1") is not None  # nothing else touched
    again.close()


def test_a_version_4_database_keeps_its_audit_chain_and_extends_it(database_url: str) -> None:
    kernel = ColonyKernel(KernelSettings(database_url=database_url), clock=FakeClock(NOW))
    kernel.set_trust("engineer-1", 0.6)
    kernel.propose_action(PAGER_FIX)
    kernel.propose_action(PAGER_FIX)

    again = reopened_at(kernel, 4, "ALTER TABLE colony_audit_head DROP COLUMN prev_hash")
    assert schema_version(again) == SCHEMA_VERSION
    head = again.store.run(lambda c: c.execute(text("SELECT seq, prev_hash FROM colony_audit_head")).one())
    second = next(entry for entry in again.audit_entries() if entry.seq == 2)
    assert (head.seq, head.prev_hash) == (2, second.prev_hash)  # the link the last append replaced
    again.propose_action(PAGER_FIX)
    check = again.verify_audit()
    assert (check.ok, check.count, check.head_seq) == (True, 3, 3)
    again.close()


def test_a_version_5_database_sums_what_each_agent_holds_and_keeps_its_history(database_url: str) -> None:
    kernel = ColonyKernel(KernelSettings(database_url=database_url), clock=FakeClock(NOW))
    kernel.set_trust("engineer-1", 0.6)
    read = {**PAGER_FIX, "action_type": "read_docs"}
    held = kernel.propose_action(read)
    kernel.propose_action({**read, "target": "pkg.other"})
    kernel.record_outcome(
        {
            "agent_id": "engineer-1",
            "action_type": "patch_file",
            "target": "pkg.other",
            "actual_outcome": "ok",
            "tests_passed": True,
        }
    )
    reserved = kernel.status().budget_usage["runtime_seconds"].reserved

    again = reopened_at(
        kernel,
        5,
        *(
            f"ALTER TABLE {table} DROP COLUMN {column}"
            for table, column in (
                ("colony_agents", "held_llm_calls"),
                ("colony_agents", "held_runtime_seconds"),
                ("colony_budget_periods", "llm_calls_overspent"),
                ("colony_budget_periods", "runtime_seconds_overspent"),
                ("colony_consequences", "reported_by"),
                ("colony_approvals", "arguments"),
                ("colony_approvals", "reviewer_display_name"),
            )
        ),
    )
    assert schema_version(again) == SCHEMA_VERSION
    holdings = again.store.run(
        lambda c: c.execute(
            text("SELECT held_runtime_seconds FROM colony_agents WHERE agent_id = 'engineer-1'")
        ).scalar()
    )
    assert held.decision.value == "execute" and reserved > 0
    assert holdings == reserved  # the one open reservation left
    [report] = again.store.run(lambda c: c.execute(text("SELECT reported_by FROM colony_consequences")).all())
    assert report.reported_by == "agent"  # an older outcome was the caller's word
    again.close()
