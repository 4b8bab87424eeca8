"""The kernel's schema: every table, its indexes, and the version a database carries.

A database records its version in ``colony_schema_version``; :mod:`colony.kernel.migrations`
brings an older one up to :data:`SCHEMA_VERSION` when a store opens it.
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, Index, Integer, MetaData, String, Table, Text, text

__all__ = ["AUDIT_GENESIS", "SCHEMA_VERSION", "metadata", "tables"]

SCHEMA_VERSION = 6
AUDIT_GENESIS = "0" * 64  # the prev_hash of the audit log's first entry
metadata = MetaData()

schema_version = Table("colony_schema_version", metadata, Column("version", Integer, primary_key=True))

kernel_state = Table(
    "colony_kernel_state",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("tick_count", Integer, nullable=False),
    Column("trace_count", Integer, nullable=False),
    Column("pruning_candidates", Integer, nullable=False),
)

kernel_secrets = Table(
    "colony_secrets",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(256), nullable=False),
)

agents = Table(
    "colony_agents",
    metadata,
    Column("agent_id", String(256), primary_key=True),
    Column("trust", Float, nullable=False),
    Column("role", String(32), nullable=False, index=True),
    Column("total_proposals", Integer, nullable=False),
    Column("accepted_proposals", Integer, nullable=False),
    Column("last_updated", Float, nullable=False),
    # total = accepted + rejected + held; unreported counts the rejected ones no outcome has decided yet
    Column("rejected_proposals", Integer, nullable=False, server_default="0"),
    Column("held_proposals", Integer, nullable=False, server_default="0"),
    Column("unreported_rejections", Integer, nullable=False, server_default="0"),
    # what the agent's open reservations hold now: its share of a period's budget is judged on these
    Column("held_llm_calls", Float, nullable=False, server_default="0"),
    Column("held_runtime_seconds", Float, nullable=False, server_default="0"),
    sqlite_with_rowid=False,  # one B-tree keyed by agent_id instead of a table plus its key index
)

pheromones = Table(
    "colony_pheromones",
    metadata,
    Column("location", String(1024), primary_key=True),
    Column("signal_type", String(32), primary_key=True),
    Column("strength", Float, nullable=False),  # at written_tick
    Column("written_tick", Integer, nullable=False),
    Column("expires_tick", Integer, nullable=False, index=True),
    Column("rank_key", Float, nullable=False),  # ln(strength) - written_tick * ln(keep): orders by strength now
    Column("decay_rate", Float, nullable=False),
    Column("source", String(32), nullable=False),
    Column("evidence", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("deposits", Integer, nullable=False),
    Index("ix_colony_pheromones_rank", "decay_rate", "rank_key"),
    Index("ix_colony_pheromones_type", "signal_type"),
)

budget_periods = Table(
    "colony_budget_periods",
    metadata,
    Column("period", Integer, primary_key=True),
    Column("llm_calls_used", Float, nullable=False),
    Column("llm_calls_reserved", Float, nullable=False),
    Column("llm_calls_max", Float, nullable=False),
    Column("runtime_seconds_used", Float, nullable=False),
    Column("runtime_seconds_reserved", Float, nullable=False),
    Column("runtime_seconds_max", Float, nullable=False),
    Column("llm_calls_expired", Float, nullable=False, server_default="0"),
    Column("runtime_seconds_expired", Float, nullable=False, server_default="0"),
    # measured use settled past the limit: recorded as what ran, flagged here, never refused after the fact
    Column("llm_calls_overspent", Float, nullable=False, server_default="0"),
    Column("runtime_seconds_overspent", Float, nullable=False, server_default="0"),
)

OPEN = text("reservation = 'open'")

proposals = Table(
    "colony_proposals",
    metadata,
    Column("proposal_id", String(36), primary_key=True),
    Column("agent_id", String(256), nullable=False),
    Column("action_type", String(256), nullable=False),
    Column("target", String(1024), nullable=False),
    Column("decision", String(16), nullable=False),
    Column("gate_score", Float, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("period", Integer, nullable=True),
    Column("reserved_llm_calls", Float, nullable=False),
    Column("reserved_runtime_seconds", Float, nullable=False),
    Column("token_nonce", String(36), nullable=True),
    Column("consumed_at", Float, nullable=True),
    Column("expires_at", Float, nullable=True),  # an EXECUTE's reservation lapses with its authorization
    Column("reservation", String(16), nullable=True),  # open | settled | expired (EXECUTE only)
    # Only open reservations are indexed: the index stays as small as the verdicts in flight, and serves
    # both the earliest expiry (its first entry) and matching a report to its reservation (a short scan).
    Index("ix_colony_proposals_open", "expires_at", sqlite_where=OPEN, postgresql_where=OPEN),
    sqlite_with_rowid=False,  # time-ordered ids append to one B-tree
)

consequences = Table(
    "colony_consequences",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("consequence_id", String(36), nullable=False, unique=True),
    Column("proposal_id", String(36), nullable=True, unique=True),
    Column("agent_id", String(256), nullable=False),
    Column("action_type", String(256), nullable=False),
    Column("target", String(1024), nullable=False),
    Column("actual_outcome", Text, nullable=False),
    Column("tests_passed", Boolean, nullable=False),
    Column("human_feedback", Float, nullable=False),
    Column("trust_before", Float, nullable=False),
    Column("trust_after", Float, nullable=False),
    Column("recorded_at", Float, nullable=False),
    Column("kind", String(16), nullable=False, server_default="outcome"),  # outcome | expiry
    # runtime | person | agent: who vouched for the outcome; only the first two may raise trust
    Column("reported_by", String(16), nullable=False, server_default="agent"),
    Index("ix_colony_consequences_agent", "agent_id", "seq"),
)

ticks = Table(
    "colony_ticks",
    metadata,
    Column("tick_key", String(256), primary_key=True),  # a scheduled run's key: applied once
    Column("tick_count", Integer, nullable=False),
    Column("applied_at", Float, nullable=False, index=True),
)

PENDING = text("state = 'pending'")

approvals = Table(
    "colony_approvals",
    metadata,
    Column("approval_id", String(36), primary_key=True),
    Column("proposal_id", String(36), nullable=False, unique=True),
    Column("agent_id", String(256), nullable=False, index=True),
    Column("tool", String(256), nullable=False),
    Column("action", String(256), nullable=False),
    Column("target", String(1024), nullable=False),
    Column("arguments_digest", String(64), nullable=False),
    Column("arguments", Text, nullable=True),  # JSON, declared secrets redacted and bounded: what the reviewer sees
    Column("gate_score", Float, nullable=False),
    Column("findings", Text, nullable=False),  # JSON list
    Column("required_evidence", Text, nullable=False),  # JSON list
    Column("reason", Text, nullable=False),
    Column("estimate_llm_calls", Float, nullable=False),  # reserved when a person approves
    Column("estimate_runtime_seconds", Float, nullable=False),
    Column("requested_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("state", String(16), nullable=False),  # pending | approved | rejected | expired
    Column("reviewer", String(256), nullable=True),  # the authenticated principal who decided
    Column("reviewer_display_name", String(256), nullable=True),  # shown beside the reviewer, never instead
    Column("note", Text, nullable=True),
    Column("decided_at", Float, nullable=True),
    Column("executed_at", Float, nullable=True),
    Column("flow_run_id", String(64), nullable=True),
    # Only pending requests are indexed, by expiry: the tick's sweep reads the front of a small index.
    Index("ix_colony_approvals_pending", "expires_at", sqlite_where=PENDING, postgresql_where=PENDING),
)

audit_log = Table(
    "colony_audit_log",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=False),  # 1, 2, 3, ... with no gaps
    Column("at", Float, nullable=False, index=True),
    Column("event", String(16), nullable=False),  # propose | approve | reject | claim | expire | refused
    Column("who", String(256), nullable=False),  # the principal's agent id ("anonymous" before authentication)
    Column("on_behalf", String(256), nullable=False),  # the agent the decision is about
    Column("what", String(1024), nullable=False),
    Column("verdict", String(32), nullable=False),
    Column("detail", Text, nullable=False),  # JSON object, hashed as stored
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
    sqlite_with_rowid=False,
)

# One row: the last entry's seq and hash. Every append locks it last (after the budget row), so the
# chain stays linear under concurrent writers, and a truncated tail is seen against it.
audit_head = Table(
    "colony_audit_head",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("hash", String(64), nullable=False),
    # The hash before the last append: PostgreSQL appends an entry in one statement, whose
    # UPDATE ... RETURNING sees only the new row, so the head keeps the link it replaced.
    Column("prev_hash", String(64), nullable=False, server_default=AUDIT_GENESIS),
)


class _Tables:
    """Named access to the schema's tables."""

    schema_version = schema_version
    kernel_state = kernel_state
    secrets = kernel_secrets
    agents = agents
    pheromones = pheromones
    budget_periods = budget_periods
    proposals = proposals
    consequences = consequences
    ticks = ticks
    approvals = approvals
    audit_log = audit_log
    audit_head = audit_head


tables = _Tables()
