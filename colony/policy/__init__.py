"""Operators' policies as code: Cedar policies over every tool call, validated against the catalog.

Files (source.py) are parsed and validated against a schema generated from the catalog
(schema.py), indexed by action (engine.py) and kept in force with hot reload (store.py);
request.py shows a call to Cedar, decision.py says what was decided, cases.py runs an
operator's test cases. The runtime's step (``colony.runtime.policies``) asks before the gate.
"""

from colony.policy.decision import Effect, PolicyDecision
from colony.policy.engine import PolicyIndex
from colony.policy.request import CedarCall, Who, call_context, compact_json
from colony.policy.schema import ActionFacts, ToolFacts, catalog_schema
from colony.policy.settings import SHIPPED_POLICIES, PolicySettings
from colony.policy.source import PolicySource, read_policies
from colony.policy.store import BASELINE, PolicyStore, compile_policies

__all__ = [
    "BASELINE",
    "SHIPPED_POLICIES",
    "ActionFacts",
    "CedarCall",
    "Effect",
    "PolicyDecision",
    "PolicyIndex",
    "PolicySettings",
    "PolicySource",
    "PolicyStore",
    "ToolFacts",
    "Who",
    "call_context",
    "catalog_schema",
    "compact_json",
    "compile_policies",
    "read_policies",
]
