"""Upstream MCP servers: what Colony adds to a call of a third-party server's tool.

Side by side in one run, in alternating rounds so the machine's other load falls on both:

- a read-only call of server-everything's ``get-sum`` through ``Runtime.call`` (its
  pipeline, the schema check, the shared session) against the same call by the official
  MCP Python client on a session of its own (target: at most 1.3x);
- the governance cost of a side-effecting upstream call: the hostile server's ``record``
  (it appends a line to a file) through ``Runtime.call`` (the gate, the run, the record),
  minus the same call run with an authorization and nothing else, on the same session
  (target: at most 1.5 ms);
- how long a stdio server that crashed mid-call takes to be serving again (the next
  call restarts it after the first backoff of 0.2 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp import Client, StdioServerParameters

from colony.errors import UpstreamUnavailableError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import CallRequest, Catalog, KernelProvider, Principal, Runtime
from colony.runtime.authorization import Authorization
from colony.upstream import McpServers, PinStore, Review, UpstreamSource, pins_path, save_servers, servers_path
from colony.upstream.config import ServerConfig, StdioServer
from colony.upstream.connections import UpstreamServer

REPO = Path(__file__).resolve().parents[1]
EVERYTHING = REPO / "tests" / "servers" / "node" / "node_modules" / ".bin" / "mcp-server-everything"
CALLS = 200
ROUNDS = 5
AGENT = Principal.of("bench-agent", ["*"])
CASE = {
    "rationale": "Append the benchmark's line to the notes file for the record",
    "rollback_plan": "Delete the appended line from the notes file",
    "evidence": {"tests": ["tests/security/test_upstream_attacks.py"]},
}
BUDGETS = {"COLONY_BUDGET_LLM_CALLS": "1000000000", "COLONY_BUDGET_RUNTIME_SECONDS": "1000000000"}


async def _pin(home: Path, servers: dict[str, ServerConfig]) -> None:
    save_servers(McpServers(servers=servers), servers_path(home))
    for name, config in servers.items():
        server = UpstreamServer(name, config, on_listed=lambda n, _t: Review(server=n))
        try:
            PinStore(pins_path(home)).pin(name, await server.list_tools())
        finally:
            await server.aclose()


Timed = Callable[[], Awaitable[object]]


async def _mean_ms(call: Timed, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.perf_counter() - start) / calls * 1000


async def _side_by_side(one: Timed, other: Timed, calls: int) -> tuple[list[float], list[float]]:
    """Mean ms of ``calls`` calls of each, in rounds that take turns going first (ABBA).

    Whatever else the machine does (an earlier phase's writes settling included) falls on both alike.
    """
    times: tuple[list[float], list[float]] = ([], [])
    for turn in range(2 * ROUNDS):
        order = (0, 1) if turn % 2 == 0 else (1, 0)
        for side in order:
            times[side].append(await _mean_ms((one, other)[side], calls))
    return times


async def _run(home: Path) -> None:
    state = home / "hostile-state"
    hostile = StdioServer(
        command=sys.executable,
        args=("-m", "tests.servers.hostile_mcp"),
        cwd=str(REPO),
        env={"HOSTILE_STATE": str(state)},
    )
    await _pin(home, {"everything": StdioServer(command=str(EVERYTHING)), "hostile": hostile})
    os.environ.update(BUDGETS)  # the bench's calls are not what the budget is for
    kernel = ColonyKernel(KernelSettings(home=home))
    kernel.set_trust(AGENT.agent_id, 0.9)
    runtime = Runtime(Catalog(entries={}, upstream=UpstreamSource(home)), kernels=KernelProvider(kernel))

    async def through_colony() -> None:
        (await runtime.call(CallRequest("everything__get_sum", {"a": 1, "b": 2}), AGENT)).raise_for_status()

    async def record() -> None:
        request = CallRequest("hostile__record", {"note": "bench"}, **CASE)  # type: ignore[arg-type]
        (await runtime.call(request, AGENT)).raise_for_status()

    async def lookup() -> None:
        (await runtime.call(CallRequest("hostile__lookup", {"key": "k"}), AGENT)).raise_for_status()

    record_tool = runtime.catalog.resolve("hostile__record")

    async def record_ungoverned() -> None:
        authorization = Authorization._issue(
            proposal_id="p", agent_id=AGENT.agent_id, tool="hostile__record", action="record"
        )
        await runtime.executor.run(record_tool, "record", {"note": "bench"}, authorization)

    async with Client(StdioServerParameters(command=str(EVERYTHING)), cache=None, mode="legacy") as direct:

        async def through_client() -> None:
            await direct.call_tool("get-sum", {"a": 1, "b": 2})

        for warm in (through_colony, through_client, record, record_ungoverned):
            await _mean_ms(warm, 20)
        colony, client = await _side_by_side(through_colony, through_client, CALLS // 2)
        governed, pure = await _side_by_side(record, record_ungoverned, CALLS // 4)
    ratio = statistics.median(c / d for c, d in zip(colony, client, strict=True))
    colony_ms, client_ms = statistics.median(colony), statistics.median(client)
    print(f"read-only get-sum: Colony {colony_ms:.3f} ms, official client {client_ms:.3f} ms")
    print(f"  ratio {ratio:.2f}x (target <= 1.3x)")
    cost = statistics.median(g - p for g, p in zip(governed, pure, strict=True))
    print(
        f"side-effecting record {statistics.median(governed):.3f} ms governed, "
        f"{statistics.median(pure):.3f} ms run with an authorization and nothing else"
    )
    print(f"  governance cost {cost:.3f} ms per call (target <= 1.5 ms)")

    recoveries = []
    for _ in range(5):
        with contextlib.suppress(UpstreamUnavailableError):
            await runtime.call(CallRequest("hostile__die", {}), AGENT)
        start = time.perf_counter()
        await lookup()
        recoveries.append(time.perf_counter() - start)
    print(f"a crashed stdio server serves again after {statistics.median(recoveries) * 1000:.0f} ms (median of 5)")
    await runtime.aclose()
    kernel.close()


def main() -> None:
    """Run the upstream benchmark in a temporary Colony home."""
    if not EVERYTHING.exists():
        print("skipped: run `npm ci` in tests/servers/node (scripts/services.sh does)")
        return
    with tempfile.TemporaryDirectory() as home:
        asyncio.run(_run(Path(home)))


if __name__ == "__main__":
    main()
