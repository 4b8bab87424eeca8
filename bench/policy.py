"""Policies: what the operators' Cedar policies cost a call.

Targets: a policy decision costs at most 50 us per call with 1,000 policies; a
side-effecting call with policies on costs at most 1.5 ms of governance (policies, gate
and record, beside the same execution without them); a pure ``/v1/tool_call`` with
policies on keeps at least 0.9x the throughput with them off.

The decision is measured at the engine (the step Runtime.call runs: the call shown to
Cedar, then the indexed, cached evaluation) over a synthetic catalog of 100 tools, with
10 and with 1,000 policies spread over them (each naming an agent, an action and
conditions on the input and the time, 1% applying to every action), for repeated
requests (the cache answers) and for requests that differ every call (Cedar evaluates).
Then in-process, call by call, the side-effecting ``append_note`` ungoverned, governed
with policies off, and governed with policies on (wall time, and the process's CPU time);
and two gateways, policies off and on, taking turns under 16 clients calling ``unit_convert``
(requests/s, and the server's CPU per request: its inverse ratio is the capacity kept,
steadier than requests/s when other work shares the machine).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import uvloop

from bench.governance import AGENT, BUDGETS, CASE, sample_catalog, trusted_kernel
from bench.surfaces import TOOL_CALL, concurrent, cpu_seconds, free_port, request_bytes, sequential, start_gateway
from colony.policy import ActionFacts, CedarCall, PolicySettings, ToolFacts, Who, call_context, compile_policies
from colony.runtime import LOCAL_OPERATOR, CallRequest, Catalog, KernelProvider, Runtime
from colony.runtime.authorization import Authorization

TOOLS = 100
SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "size": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
CALLS = 400
ROUNDS = 3
ON_APPEND_NOTE = """
@id("no-secret-notes")
@reason("notes never carry secrets")
forbid(principal, action == Action::"append_note.append_note", resource) when { context.input.note like "*password*" };
@id("quiet-hours")
forbid(principal == Agent::"report-clerk", action, resource) when { context.time.hour >= 22 || context.time.hour < 6 };
@id("units-not-at-scale")
forbid(principal, action == Action::"unit_convert.convert_units", resource)
when { context.input.value.greaterThan(decimal("1000000000.0")) };
permit(principal, action, resource);
"""


def synthetic_tools() -> list[ToolFacts]:
    return [
        ToolFacts(
            name=f"tool{number}",
            version="1.0.0",
            domain="bench",
            locality="local",
            policy_tags=("bench", f"tag{number % 10}"),
            actions={"run": ActionFacts(SCHEMA, side_effecting=number % 2 == 0, governed=number % 2 == 0)},
            primary="run",
        )
        for number in range(TOOLS)
    ]


def policies_text(count: int) -> str:
    lines = ["permit(principal, action, resource);"]
    for number in range(count - 1):
        if number % 100 == 99:  # 1% apply to every action
            lines.append(
                f'forbid(principal, action, resource) when {{ resource.policy_tags.contains("tag{number % 10}") '
                f'&& context.input.path like "/secret{number}/*" }};'
            )
        else:
            lines.append(
                f'forbid(principal == Agent::"agent-{number}", action == Action::"tool{number % TOOLS}.run", resource) '
                f"when {{ context.input.size > {number} && context.time.hour == {number % 24} }};"
            )
    return "\n".join(lines) + "\n"


def cpu_per_call(function: Callable[[], object], *, calls: int, repeats: int = 3) -> float:
    """Best-of-``repeats`` CPU seconds of one call (steadier than wall time on a shared machine)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            function()
        best = min(best, (time.process_time() - start) / calls)
    return best


def decision_cost(count: int, home: Path) -> dict[str, float]:
    """CPU microseconds per decision: the cache answering, and Cedar evaluating (a new request every call)."""
    directory = home / f"policies-{count}"
    directory.mkdir()
    (directory / "bench.cedar").write_text(policies_text(count))
    tools = synthetic_tools()
    index = compile_policies(directory, tools)
    facts = tools[7]
    who = Who(agent_id="agent-7", groups=frozenset({"ops"}))
    estimate = {"llm_calls": 0.0, "runtime_seconds": 1.0}
    counter = iter(range(10**9))

    def call(size: int) -> CedarCall:
        context = call_context(
            facts,
            "run",
            {"path": "/srv/x", "size": size, "tags": ["a"]},
            target=None,
            acted_by=None,
            estimate=estimate,
            above_default=False,
            reads=index.reads("tool7.run"),
        )
        return CedarCall.build(who, facts.name, "run", facts.resource("run"), context)

    cached = cpu_per_call(lambda: index.decide(call(5)), calls=5000)
    fresh = cpu_per_call(lambda: index.decide(call(next(counter) + 10**6)), calls=2000)
    return {
        "cached": cached * 1e6,
        "evaluated": fresh * 1e6,
        "applicable": float(len(index.applicable("tool7.run"))),
        "evaluated policies": float(len(index.evaluated(call(5)))),
    }


async def governance(home: Path) -> dict[str, list[float]]:
    """Per-call latencies of append_note: ungoverned, governed with policies off, governed with policies on."""
    os.environ["COLONY_HOME"] = str(home)
    (home / "policies-on").mkdir()
    (home / "policies-on" / "rules.cedar").write_text(ON_APPEND_NOTE)
    catalog = sample_catalog(home / "repo")
    kernels = KernelProvider(trusted_kernel(home))
    off = Runtime(Catalog(catalog), kernels=kernels, policies=PolicySettings(directory=home / "policies-off"))
    on = Runtime(Catalog(catalog), kernels=kernels, policies=PolicySettings(directory=home / "policies-on"))
    tool = off.catalog.resolve("append_note")
    request = CallRequest("append_note", {"note": "bench"}, agent_id=AGENT, **CASE)
    samples: dict[str, list[float]] = {
        name: [] for name in ("ungoverned", "policies off", "policies on", "policies off cpu", "policies on cpu")
    }
    for turn in range(CALLS + 50):
        authorization = Authorization._issue(proposal_id="p", agent_id=AGENT, tool="append_note", action="append_note")
        start = time.perf_counter()
        await off.executor.run(tool, "append_note", {"note": "bench"}, authorization)
        ungoverned = time.perf_counter() - start
        timings = {"ungoverned": ungoverned}
        for name, runtime in (("policies off", off), ("policies on", on)):
            start, cpu = time.perf_counter(), time.process_time()
            outcome = await runtime.call(request, LOCAL_OPERATOR)
            timings[name] = time.perf_counter() - start
            timings[f"{name} cpu"] = time.process_time() - cpu  # every thread of the process
            assert outcome.status.value == "executed", outcome.verdict
        if turn >= 50:
            for name, value in timings.items():
                samples[name].append(value)
    await off.aclose()
    await on.pool.shutdown()
    return samples


def throughput(home: Path, policies: Path | None) -> tuple[float, float]:
    """Requests/s of 16 clients calling unit_convert, and the gateway's CPU ms per request."""
    port = free_port()
    env = {"COLONY_POLICIES": str(policies)} if policies is not None else {}
    gateway = start_gateway(port, str(home), 1, env={**BUDGETS, **env})
    try:
        request = request_bytes("/v1/tool_call", TOOL_CALL, port)
        uvloop.run(sequential(port, request, 300))
        before = cpu_seconds(gateway.pid)
        rate, latencies = uvloop.run(concurrent(port, request))
        return rate, (cpu_seconds(gateway.pid) - before) * 1000 / max(1, len(latencies))
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        home = Path(root)
        for count in (10, 1000):
            cost = decision_cost(count, home)
            print(
                f"decision, {count:>5} policies ({cost['applicable']:.0f} name its action, "
                f"{cost['evaluated policies']:.0f} can match its caller and tool): "
                f"{cost['cached']:.1f} us CPU repeated (cache), {cost['evaluated']:.1f} us CPU a new request (Cedar) "
                "(target <= 50 us at 1,000)"
            )
        (home / "gov").mkdir()
        samples = anyio.run(governance, home / "gov")
        median = {name: statistics.median(values) * 1000 for name, values in samples.items()}
        print(
            f"append_note in-process, median: ungoverned {median['ungoverned']:.3f} ms, governed with policies off "
            f"{median['policies off']:.3f} ms, on {median['policies on']:.3f} ms"
        )
        print(
            f"governance cost with policies on: {median['policies on'] - median['ungoverned']:.3f} ms "
            f"(target <= 1.5 ms); the policies' share: {median['policies on'] - median['policies off']:.3f} ms"
        )
        cpu_off, cpu_on = (statistics.mean(samples[f"policies {name} cpu"]) * 1000 for name in ("off", "on"))
        print(
            f"governed append_note, process CPU per call: policies off {cpu_off:.3f} ms, on {cpu_on:.3f} ms "
            f"(the policies' share: {cpu_on - cpu_off:.3f} ms; steadier than wall time on a shared machine)"
        )
        rules = home / "http-policies"
        rules.mkdir()
        (rules / "rules.cedar").write_text(ON_APPEND_NOTE)
        ratios: list[float] = []
        capacity: list[float] = []
        for turn in range(ROUNDS):
            (home / f"off{turn}").mkdir()
            (home / f"on{turn}").mkdir()
            off_rate, off_cpu = throughput(home / f"off{turn}", None)
            on_rate, on_cpu = throughput(home / f"on{turn}", rules)
            ratios.append(on_rate / off_rate)
            capacity.append(off_cpu / on_cpu)
            print(
                f"POST /v1/tool_call unit_convert, 16 clients, round {turn + 1}: policies off {off_rate:,.0f} req/s "
                f"({off_cpu:.3f} ms CPU/req), on {on_rate:,.0f} req/s ({on_cpu:.3f} ms CPU/req)"
            )
        print(
            f"throughput with policies on / off: {statistics.median(ratios):.2f}x req/s, "
            f"{statistics.median(capacity):.2f}x by server CPU per request (target >= 0.9x; rounds: "
            f"{', '.join(f'{r:.2f}/{c:.2f}' for r, c in zip(ratios, capacity, strict=True))})"
        )
