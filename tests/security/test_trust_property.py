"""Property: no sequence of kernel calls by principals without the operator role or kernel:approve raises
their own trust or role (hypothesis state machine through the access layer every surface uses).

Two such agents propose, report (their own verdicts, each other's, forged, replayed, unattested, with any
fields), tick, falsify plans and let time pass in any order; after every step each one's trust is at most
what it was before.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from colony.errors import ColonyError
from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.roles import INITIAL_TRUST, ROLE_THRESHOLDS, role_for
from colony.runtime import KernelProvider, Principal
from colony.surfaces.kernel_tools import call_kernel_tool
from tests.colony.kernel.conftest import FakeClock

AGENTS = {
    name: Principal.of(name, ["kernel:read", "kernel:propose", "kernel:record", "kernel:tick"])
    for name in ("mallory", "bob")
}
NAMES = st.sampled_from(sorted(AGENTS))
ACTIONS = st.sampled_from(["read_docs", "query_status", "list_files", "shell_exec", "patch_file", "drop_table"])
TARGETS = st.sampled_from(["docs/a", "docs/b", "host:build-1", "pkg.parser"])
FEEDBACK = st.one_of(st.sampled_from([-1.0, 0.0, 0.5, 1.0]), st.floats(min_value=-1.0, max_value=1.0))
TTL = 600.0


class SelfPromotion(RuleBasedStateMachine):
    """Unprivileged agents doing anything the kernel tools let them do."""

    @initialize()
    def start(self) -> None:
        self.clock = FakeClock(10_000.0)
        self.kernel = ColonyKernel(
            KernelSettings(database_url="sqlite://", attestation_ttl_seconds=TTL), clock=self.clock
        )
        self.kernels = KernelProvider(self.kernel)
        self.verdicts: list[tuple[dict[str, Any], str]] = []  # (proposal, authorization) of EXECUTE verdicts
        self.trust = dict.fromkeys(AGENTS, INITIAL_TRUST)
        self.floor = dict.fromkeys(AGENTS, ROLE_THRESHOLDS[role_for(INITIAL_TRUST)])  # the role's threshold

    def teardown(self) -> None:
        self.kernel.close()

    def call(self, caller: str, name: str, arguments: dict[str, Any]) -> Any:
        try:
            return call_kernel_tool(self.kernels, name, arguments, AGENTS[caller])
        except ColonyError as error:
            return {"error": str(error)}

    @rule(caller=NAMES, action=ACTIONS, place=TARGETS, tests=st.booleans(), as_other=st.booleans())
    def propose(self, caller: str, action: str, place: str, tests: bool, as_other: bool) -> None:
        agent = "bob" if caller == "mallory" and as_other else caller
        proposal = {
            "agent_id": agent,
            "action_type": action,
            "target": place,
            "rationale": "Read the page to answer the question about the build",
            "rollback_plan": "Nothing to undo: reading changes nothing",
            "evidence": '{"tests": ["tests/test_docs.py"]}' if tests else "{}",
        }
        verdict = self.call(caller, "colony_propose_action", proposal)
        if verdict.get("authorization"):
            self.verdicts.append((proposal, verdict["authorization"]))

    @precondition(lambda self: bool(self.verdicts))
    @rule(
        caller=NAMES,
        index=st.integers(min_value=0),
        passed=st.booleans(),
        feedback=FEEDBACK,
        keep=st.booleans(),
        as_caller=st.booleans(),
    )
    def report_a_verdict(
        self, caller: str, index: int, passed: bool, feedback: float, keep: bool, as_caller: bool
    ) -> None:
        """Report an EXECUTE's outcome: one's own, another's, again (a replay), or under one's own name."""
        proposal, authorization = self.verdicts[index % len(self.verdicts)]
        if not keep:
            self.verdicts.remove((proposal, authorization))
        report = {key: proposal[key] for key in ("agent_id", "action_type", "target")}
        if as_caller:
            report["agent_id"] = caller
        report |= {"actual_outcome": "done", "tests_passed": passed, "human_feedback": feedback}
        self.call(caller, "colony_record_outcome", report | {"authorization": authorization})

    @rule(
        caller=NAMES,
        agent=NAMES,
        action=ACTIONS,
        place=TARGETS,
        passed=st.booleans(),
        feedback=FEEDBACK,
        authorization=st.one_of(st.none(), st.just(""), st.text(max_size=40), st.just("v1.forged.token")),
        llm_calls=st.one_of(st.none(), st.integers(min_value=0, max_value=5)),
    )
    def report_anything(
        self,
        caller: str,
        agent: str,
        action: str,
        place: str,
        passed: bool,
        feedback: float,
        authorization: str | None,
        llm_calls: int | None,
    ) -> None:
        """A report with any fields: unattested, forged, for anyone."""
        report: dict[str, Any] = {
            "agent_id": agent,
            "action_type": action,
            "target": place,
            "actual_outcome": "done",
            "tests_passed": passed,
            "human_feedback": feedback,
        }
        if authorization is not None:
            report["authorization"] = authorization
        if llm_calls is not None:
            report["llm_calls"] = llm_calls
        self.call(caller, "colony_record_outcome", report)

    @rule(caller=NAMES)
    def tick(self, caller: str) -> None:
        self.call(caller, "colony_tick", {})

    @rule(caller=NAMES, plan=st.sampled_from(['{"action_type": "read_docs"}', "not json", '{"rollback_plan": ""}']))
    def falsify(self, caller: str, plan: str) -> None:
        self.call(caller, "colony_falsify_plan", {"plan_json": plan})

    @rule(seconds=st.sampled_from([1.0, TTL, 86_400.0]))
    def time_passes(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @invariant()
    def nobody_rises(self) -> None:
        if not hasattr(self, "kernel"):
            return
        for agent, before in self.trust.items():
            profile = self.kernel.find_profile(agent)
            trust = INITIAL_TRUST if profile is None else profile.trust_score
            floor = ROLE_THRESHOLDS[profile.role] if profile else self.floor[agent]
            assert trust <= before, f"{agent}'s trust rose from {before} to {trust}"
            assert floor <= self.floor[agent], f"{agent}'s role rose to {profile and profile.role}"
            self.trust[agent], self.floor[agent] = trust, floor


SelfPromotion.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_no_unprivileged_sequence_raises_its_own_trust = SelfPromotion.TestCase
