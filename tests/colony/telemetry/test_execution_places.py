"""Where a call ran: the gauges of sandbox containers and upstream sessions, and the execute span's attributes.

Real parts: a sandboxed tool's containers on the Docker engine, and the hostile MCP server
over stdio, killed mid-call. The counts are this process's (the tallies), read through the
same exposition a /metrics scrape writes and parsed with prometheus_client's parser.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from colony.errors import UpstreamUnavailableError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import LOCAL_OPERATOR, CallRequest, Catalog, KernelProvider, Principal, Runtime
from colony.telemetry.metrics import exposition
from tests.colony.sandbox.conftest import TightShell
from tests.security.conftest import CASE
from tests.services.otlp import FakeOtlpReceiver, flush
from tests.services.upstream import Upstream, hostile_stdio

AGENT = Principal.of("engineer-1", ["*"])


def gauge(name: str, **labels: str) -> float:
    """One sample of the scrape (0 when it is not there)."""
    for family in text_string_to_metric_families(exposition().decode()):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


@pytest.fixture
def shell(busybox_image: str) -> Iterator[TightShell]:
    """A sandboxed shell of the test's own, its containers removed afterwards."""
    tool = TightShell()
    yield tool
    asyncio.run(tool.shutdown())


async def test_sandbox_containers_show_busy_while_lent_and_idle_when_back(shell: TightShell) -> None:
    busy, idle = gauge("colony_sandbox_containers", state="busy"), gauge("colony_sandbox_containers", state="idle")
    call = asyncio.create_task(shell._exec_in_sandbox(["sh", "-c", "sleep 2"], timeout_seconds=30))
    for _ in range(300):
        if gauge("colony_sandbox_containers", state="busy") == busy + 1:
            break
        await asyncio.sleep(0.05)
    assert gauge("colony_sandbox_containers", state="busy") == busy + 1
    assert (await call)["exit_code"] == 0
    assert gauge("colony_sandbox_containers", state="busy") == busy
    assert gauge("colony_sandbox_containers", state="idle") == idle + 1  # warm, for the next call
    await shell.shutdown()
    assert (gauge("colony_sandbox_containers", state="busy"), gauge("colony_sandbox_containers", state="idle")) == (
        busy,
        idle,
    )


@pytest.fixture
async def runtime(upstream: Upstream, tmp_path: Path) -> AsyncIterator[Runtime]:
    upstream.connect({"gauged": hostile_stdio(env={"HOSTILE_STATE": str(tmp_path / "state")}, timeout=10)})
    made = Runtime(kernels=KernelProvider(ColonyKernel.from_env()))
    yield made
    await made.aclose()


async def test_an_upstream_session_shows_connected_and_a_restart_counts(runtime: Runtime) -> None:
    assert gauge("colony_upstream_sessions_connected", server="gauged") == 0  # not started before its first call
    starts = gauge("colony_upstream_starts_total", server="gauged")
    await runtime.call(CallRequest("gauged__started", {}), AGENT)
    assert gauge("colony_upstream_sessions_connected", server="gauged") == 1
    assert gauge("colony_upstream_starts_total", server="gauged") == starts + 1
    with pytest.raises(UpstreamUnavailableError):
        await runtime.call(CallRequest("gauged__die", {}), AGENT)
    for _ in range(200):  # the session winds down on the loop
        if gauge("colony_upstream_sessions_connected", server="gauged") == 0:
            break
        await asyncio.sleep(0.05)
    assert gauge("colony_upstream_sessions_connected", server="gauged") == 0  # down
    await runtime.call(CallRequest("gauged__started", {}), AGENT)
    assert gauge("colony_upstream_sessions_connected", server="gauged") == 1
    assert gauge("colony_upstream_starts_total", server="gauged") == starts + 2  # the restart
    await runtime.aclose()
    assert gauge("colony_upstream_sessions_connected", server="gauged") == 0  # stopped with the runtime


REGISTRY = Path(__file__).resolve().parents[3] / ".colony" / "tool-registry.json"


async def test_the_execute_span_names_the_container_and_the_server_it_ran_on(
    traced_here: FakeOtlpReceiver, runtime: Runtime, busybox_image: str, tmp_path: Path
) -> None:
    kernel = ColonyKernel(KernelSettings(home=tmp_path / "home"))
    kernel.set_trust("builder", 0.9)
    sandboxed = Runtime(Catalog(REGISTRY), kernels=KernelProvider(kernel))
    try:
        request = CallRequest("shell_exec", {"script": "hostname"}, agent_id="builder", **CASE)  # type: ignore[arg-type]
        ran = (await sandboxed.call(request, LOCAL_OPERATOR)).raise_for_status()
    finally:
        await sandboxed.aclose()
    await runtime.call(CallRequest("gauged__started", {}), AGENT)
    flush()
    spans = traced_here.wait_for(lambda spans: len([s for s in spans if s.name == "colony.execute"]) >= 2)
    executed = [s.attributes for s in spans if s.name == "colony.execute"]
    [container] = [a for a in executed if "colony.sandbox.container_id" in a]
    assert str(container["colony.sandbox.container_id"]).startswith(ran.result["stdout"].strip())  # its hostname
    assert container["colony.sandbox.role"]
    [server] = [a for a in executed if "colony.upstream.server" in a]
    assert (server["colony.upstream.server"], server["colony.upstream.tool"]) == ("gauged", "started")
