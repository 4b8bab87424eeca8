"""Operators' policies decide calls in Runtime.call: the guide's rules, nested arguments, tags, holds, the baseline."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from colony.errors import PolicyDeniedError, PolicyError
from colony.kernel import ColonyKernel
from colony.policy import Effect
from colony.runtime import CallRequest, CallStatus, Principal, Runtime
from tests.colony.policy.policy_tools import releases

MakeRuntime = Callable[..., Runtime]
POLICIES_GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "policies.md"
CASE = {
    "rationale": "Record the release so the operators can follow what went out",
    "rollback_plan": "Remove the line from releases.jsonl again",
    "evidence": {"tests": ["tests/test_release.py::test_record"]},
}
NIGHT = time.mktime((2026, 1, 5, 23, 30, 0, 0, 0, 0)) - time.timezone  # 23:30 UTC, a Monday
DAY = NIGHT - 12 * 3600  # 11:30 UTC


def guide_policies() -> str:
    """The ```cedar block of the policies guide: the rules operators are shown."""
    section = POLICIES_GUIDE.read_text(encoding="utf-8")
    match = re.search(r"```cedar\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_readmes_rules_are_the_guides_that_are_tried_here() -> None:
    readme = (POLICIES_GUIDE.parents[2] / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```cedar\n(.*?)```", readme, re.S)
    assert match is not None and match.group(1) == guide_policies()


def release(env: str = "dev", path: str = "/srv/dev/app", **more: Any) -> dict[str, Any]:
    return {"release": {"name": "app", "target": {"env": env, "path": path, **more}}}


async def decide(
    runtime: Runtime, tool: str, arguments: dict[str, Any], who: Principal, now: float | None = None, **request: Any
) -> Effect:
    resolved = runtime.catalog.resolve(tool)
    call = CallRequest(tool, arguments, **request)
    decision = await runtime.policies.decide(resolved, resolved.action(None), arguments, who, call, now=now)
    return decision.effect


async def test_no_policy_files_leave_every_call_as_it_was(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime()
    outcome = await runtime.call(
        CallRequest("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}), Principal.of("a", ["*"])
    )
    assert outcome.status is CallStatus.EXECUTED and outcome.result["value"] == 1000
    index = runtime.policies.store.current()
    assert list(index.sources) == ["baseline"]
    assert index.fixed("unit_convert.convert_units") is not None  # decided without evaluating anything


async def test_the_shipped_baseline_permits_everything(make_runtime: MakeRuntime, policies: Path) -> None:
    from colony.policy import SHIPPED_POLICIES

    (policies / "baseline.cedar").write_text((SHIPPED_POLICIES / "baseline.cedar").read_text())
    runtime = make_runtime()
    assert await decide(runtime, "pii_redact", {"text": "x"}, Principal.of("anyone")) is Effect.PERMIT


async def test_the_readme_rules_decide_as_written(
    make_runtime: MakeRuntime, policies: Path, kernel: ColonyKernel
) -> None:
    (policies / "rules.cedar").write_text(guide_policies())
    (policies / "baseline.cedar").write_text("permit(principal, action, resource);\n")
    runtime = make_runtime()
    clerk, other = Principal.of("report-clerk", ["*"]), Principal.of("engineer-1", ["*"])
    small, big = {"script": "date"}, {"script": "echo " + "x" * 2100}
    assert await decide(runtime, "shell_exec", small, clerk, now=DAY) is Effect.PERMIT
    assert await decide(runtime, "shell_exec", big, clerk, now=DAY) is Effect.FORBID
    assert await decide(runtime, "shell_exec", small, clerk, now=NIGHT) is Effect.FORBID
    assert await decide(runtime, "shell_exec", big, other, now=NIGHT) is Effect.PERMIT

    assert await decide(runtime, "pii_redact", {"text": "a@b.c"}, other) is Effect.FORBID
    privacy = Principal.of("engineer-1", ["*"], groups=["privacy"])
    assert await decide(runtime, "pii_redact", {"text": "a@b.c"}, privacy) is Effect.PERMIT

    assert await decide(runtime, "deployer", release(), other, target="/srv/prod/app") is Effect.HOLD
    assert await decide(runtime, "deployer", release(), other, target="/srv/dev/app") is Effect.PERMIT
    assert (
        await decide(
            runtime, "unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}, other, target="/srv/prod/x"
        )
        is Effect.PERMIT
    )  # not side-effecting

    raised = {"budget_estimate": {"runtime_seconds": 500.0}}
    assert await decide(runtime, "deployer", release(), other, **raised) is Effect.FORBID
    kernel.set_trust("guard-1", 0.9)
    assert kernel.agent_profile("guard-1").role.value == "guard_ant"
    assert await decide(runtime, "deployer", release(), Principal.of("guard-1"), **raised) is Effect.PERMIT


async def test_a_forbidden_call_is_refused_naming_the_policy_and_its_reason(
    make_runtime: MakeRuntime, policies: Path
) -> None:
    (policies / "rules.cedar").write_text(guide_policies())
    (policies / "baseline.cedar").write_text("permit(principal, action, resource);\n")
    runtime = make_runtime()
    with pytest.raises(PolicyDeniedError) as refused:
        await runtime.call(CallRequest("pii_redact", {"text": "mail a@b.c"}), Principal.of("engineer-1", ["*"]))
    assert refused.value.policies == ["pii-privacy-group-only"]
    assert refused.value.reasons == ["only the privacy group calls tools tagged pii"]
    assert "forbidden for engineer-1 by policy pii-privacy-group-only" in str(refused.value)


async def test_conditions_read_nested_arguments(make_runtime: MakeRuntime, policies: Path) -> None:
    (policies / "deploy.cedar").write_text(
        """
@id("no-prod-without-hosts")
@reason("a prod release names its hosts")
forbid(principal, action == Action::"deployer.deploy", resource)
when { context.input.release.target.env == "prod" && context.size.release.target.hosts == 0 };

@id("few-replicas")
forbid(principal, action == Action::"deployer.deploy", resource)
when { context.input.release.replicas > 3 && !context.input.dry_run };

permit(principal, action, resource);
"""
    )
    runtime = make_runtime()
    who = Principal.of("engineer-1", ["*"])
    assert await decide(runtime, "deployer", release("prod"), who) is Effect.FORBID
    assert await decide(runtime, "deployer", release("prod", hosts=["web-1"]), who) is Effect.PERMIT
    many = {"release": {"name": "app", "replicas": 5, "target": {"env": "dev", "path": "/tmp/x"}}}
    assert await decide(runtime, "deployer", many, who) is Effect.FORBID
    assert await decide(runtime, "deployer", {**many, "dry_run": True}, who) is Effect.PERMIT


async def test_tag_rules_apply_to_every_tool_carrying_the_tag(make_runtime: MakeRuntime, policies: Path) -> None:
    (policies / "tags.cedar").write_text(
        """
@reason("file writes are for operators")
forbid(principal, action, resource) when { resource.policy_tags.contains("writes_files") && !principal.operator };
permit(principal, action, resource);
"""
    )
    runtime = make_runtime()
    agent = Principal.of("engineer-1", ["*"])
    assert await decide(runtime, "deployer", release(), agent) is Effect.FORBID
    assert await decide(runtime, "append_note", {"note": "x"}, agent) is Effect.FORBID
    assert (
        await decide(runtime, "unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}, agent) is Effect.PERMIT
    )
    assert (
        await decide(runtime, "append_note", {"note": "x"}, Principal.of("ops", ["*"], operator=True)) is Effect.PERMIT
    )


async def test_a_policy_naming_a_field_no_tool_has_is_rejected_naming_file_and_line(
    make_runtime: MakeRuntime, policies: Path
) -> None:
    (policies / "ok.cedar").write_text("permit(principal, action, resource);\n")
    (policies / "typo.cedar").write_text(
        '// a typo: the argument is "script"\n\nforbid(principal, action == Action::"shell_exec.run_shell", resource)\n'
        '  when { context.input.scrpt == "rm" };\n'
    )
    runtime = make_runtime()
    with pytest.raises(PolicyError) as broken:
        runtime.policies.store.current()
    assert broken.value.file.endswith("typo.cedar") and broken.value.line == 3
    assert "typo.cedar:3" in str(broken.value) and "scrpt" in str(broken.value)
    with pytest.raises(PolicyError):  # no good set was ever loaded: every call is refused (fail closed)
        await runtime.call(
            CallRequest("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}), Principal.of("a", ["*"])
        )


async def test_a_policy_that_does_not_parse_names_its_line(make_runtime: MakeRuntime, policies: Path) -> None:
    (policies / "bad.cedar").write_text(
        "permit(principal, action, resource);\n\nforbid(principal, action, resource)\n when { context. };\n"
    )
    with pytest.raises(PolicyError, match=r"bad\.cedar:3"):
        make_runtime().policies.store.current()


async def test_hold_by_policy_reaches_a_person_who_approves_it(
    make_runtime: MakeRuntime, policies: Path, kernel: ColonyKernel
) -> None:
    (policies / "rules.cedar").write_text(guide_policies())
    (policies / "baseline.cedar").write_text("permit(principal, action, resource);\n")
    runtime = make_runtime()
    who = Principal.of("trusted-ant", ["*"])
    call = CallRequest("deployer", release("prod", "/srv/prod/app"), target="/srv/prod/app", **CASE)  # type: ignore[arg-type]
    held = await runtime.call(call, who)
    assert held.status is CallStatus.HELD and held.approval is not None
    assert "prod-writes-need-a-person" in held.approval["reason"]
    assert "writes under /srv/prod always need a person" in held.approval["reason"]
    assert releases() == []
    approval_id = held.approval["approval_id"]
    pending = kernel.get_approval(approval_id)
    assert "prod-writes-need-a-person" in pending.reason  # what the reviewer reads

    kernel.approve(approval_id, "ops@example.org", "planned release")
    done = await runtime.call(
        CallRequest("deployer", release("prod", "/srv/prod/app"), target="/srv/prod/app", approval_id=approval_id), who
    )
    assert done.status is CallStatus.EXECUTED and len(releases()) == 1

    [entry] = [e for e in kernel.audit_entries() if e.event == "propose"]
    assert entry.detail["policy"] == {
        "decision": "hold",
        "policies": ["prod-writes-need-a-person"],
        "reasons": ["writes under /srv/prod always need a person"],
    }


async def test_a_permitted_governed_call_records_the_deciding_policies(
    make_runtime: MakeRuntime, policies: Path, kernel: ColonyKernel
) -> None:
    (policies / "rules.cedar").write_text(
        '@id("dev-ok")\npermit(principal, action, resource) when { context.target like "/srv/dev/*" };\n'
    )
    runtime = make_runtime()
    call = CallRequest("deployer", release(), target="/srv/dev/app", **CASE)  # type: ignore[arg-type]
    outcome = await runtime.call(call, Principal.of("trusted-ant", ["*"]))
    assert outcome.status is CallStatus.EXECUTED
    [entry] = [e for e in kernel.audit_entries() if e.event == "propose"]
    assert entry.detail["policy"] == {"decision": "permit", "policies": ["dev-ok"], "reasons": []}
    with pytest.raises(PolicyDeniedError, match="no policy permits it"):  # Cedar denies by default
        await runtime.call(
            CallRequest("deployer", release(), target="/elsewhere", **CASE),  # type: ignore[arg-type]
            Principal.of("trusted-ant", ["*"]),
        )


async def test_a_rule_about_a_tool_not_served_here_waits_and_a_wrong_action_is_an_error(
    make_runtime: MakeRuntime, policies: Path
) -> None:
    (policies / "shared.cedar").write_text(
        '@id("elsewhere")\nforbid(principal, action == Action::"fdtd_sweep.run_sweep", resource);\n'
        "permit(principal, action, resource);\n"
    )
    runtime = make_runtime()
    index = runtime.policies.store.current()
    assert [source.id for source in index.dormant] == ["elsewhere"] and "elsewhere" not in index.sources
    (policies / "typo.cedar").write_text('forbid(principal, action == Action::"deployer.deplyo", resource);\n')
    time.sleep(0.1)
    assert runtime.policies.store.current() is index  # the broken edit is not loaded
    assert runtime.policies.store.error is not None and "typo.cedar:1" in str(runtime.policies.store.error)
