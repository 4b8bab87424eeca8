"""The steps of every call: limits and refusal counting in Runtime.call, the same for any handler."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from colony.errors import CapabilityDeniedError, RateLimitedError
from colony.runtime import Acting, CallOutcome, CallRequest, CallStatus, Principal, Runtime
from colony.runtime.rate_limits import RateLimitSettings
from colony.runtime.steps import Call, Handler, chain
from colony.surfaces.mcp.server import build_mcp_server

MakeRuntime = Callable[..., Runtime]
ONE_A_DAY = RateLimitSettings.model_validate({"default": {"rate": 1 / 86400, "burst": 1}})
ALPHA = Principal.of("alpha", ["*"])
CONVERT = {"value": 1, "from_unit": "km", "to_unit": "m"}


def refused(runtime: Runtime) -> list[tuple[str, str, str]]:
    """The refusals the runtime counted, as its audit log holds them: (who, what, verdict)."""
    runtime.refusals.flush(final=True)
    entries = runtime.kernels.get().audit_entries()
    return [(entry.who, entry.what, entry.verdict) for entry in entries if entry.event == "refused"]


async def test_a_runtime_with_limits_refuses_the_call_over_them_and_counts_it(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(["unit_convert"], rate_limits=ONE_A_DAY)
    assert (await runtime.call(CallRequest("unit_convert", CONVERT), ALPHA)).status is CallStatus.EXECUTED
    with pytest.raises(RateLimitedError, match="over its rate limit for unit_convert") as over:
        await runtime.call(CallRequest("unit_convert", CONVERT), ALPHA)
    assert over.value.retry_after_seconds > 80_000
    assert refused(runtime) == [("alpha", "call unit_convert", "rate_limited")]
    beta = Principal.of("beta", ["*"])  # each principal its own bucket
    assert (await runtime.call(CallRequest("unit_convert", CONVERT), beta)).status is CallStatus.EXECUTED


async def test_a_runtime_without_limits_runs_every_call(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(["unit_convert"])
    for _ in range(5):
        assert (await runtime.call(CallRequest("unit_convert", CONVERT), ALPHA)).status is CallStatus.EXECUTED
    assert runtime.limiter is None and refused(runtime) == []


async def test_another_handler_meets_the_same_steps(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(["unit_convert"], rate_limits=ONE_A_DAY)
    ran: list[str] = []

    async def operation(call: Call) -> CallOutcome:
        ran.append(call.request.tool)
        if call.request.arguments.get("deny"):
            raise CapabilityDeniedError("needs kernel:read", missing=["kernel:read"])
        return CallOutcome(CallStatus.EXECUTED, call.request.tool, "1", "op", Acting(call.principal.agent_id))

    await runtime.dispatch(Call(CallRequest("colony_status", {}), ALPHA, verb="mcp"), operation)
    with pytest.raises(RateLimitedError):
        await runtime.dispatch(Call(CallRequest("colony_status", {}), ALPHA, verb="mcp"), operation)
    denied = Principal.of("gamma", [])
    with pytest.raises(CapabilityDeniedError):
        await runtime.dispatch(Call(CallRequest("colony_status", {"deny": True}), denied, verb="mcp"), operation)
    assert ran == ["colony_status", "colony_status"]
    assert refused(runtime) == [
        ("alpha", "call colony_status", "rate_limited"),
        ("gamma", "mcp colony_status", "forbidden"),
    ]


async def test_steps_run_outermost_first_and_see_the_outcome() -> None:
    seen: list[str] = []

    def step(name: str) -> Callable[[Call, Handler], object]:
        async def run(call: Call, proceed: Handler) -> CallOutcome:
            seen.append(f"{name} in")
            outcome = await proceed(call)
            seen.append(f"{name} out: {outcome.status.value}")
            return outcome

        return run

    async def handler(call: Call) -> CallOutcome:
        seen.append("handler")
        return CallOutcome(CallStatus.EXECUTED, call.request.tool, "1", "op", Acting("alpha"))

    run = chain([step("first"), step("second")], handler)  # type: ignore[list-item]
    await run(Call(CallRequest("t"), ALPHA))
    assert seen == ["first in", "second in", "handler", "second out: executed", "first out: executed"]


async def test_mcp_answers_a_kernel_tool_over_the_limits_with_the_rate_limit_error(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(["unit_convert"], rate_limits=ONE_A_DAY)
    async with Client(build_mcp_server(runtime)) as client:
        assert (await client.call_tool("colony_status", {})).is_error is False
        with pytest.raises(MCPError) as over:
            await client.call_tool("colony_status", {})
        assert over.value.error.code == -32029
        assert (await client.call_tool("unit_convert", CONVERT)).is_error is False  # another tool: its own bucket
    assert refused(runtime) == [("local-operator", "call colony_status", "rate_limited")]
