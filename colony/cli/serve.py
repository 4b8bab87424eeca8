"""``colony mcp`` and ``colony gateway``: serve the tools to MCP clients and HTTP callers."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from colony.cli.settings import serving_settings, settings_for_workers, settings_from_parent, settings_runtime

if TYPE_CHECKING:
    from fastapi import FastAPI

    from colony.runtime import Runtime

__all__ = ["gateway", "gateway_worker_app", "mcp"]


def mcp(
    agent: Annotated[
        str | None,
        typer.Option(help="The agent this session acts for (you are the local operator; default: yourself)."),
    ] = None,
) -> None:
    """Serve the colony_* kernel tools and every catalog tool over MCP on stdin/stdout."""
    from colony.surfaces.mcp.changes import ToolListNotifier
    from colony.surfaces.mcp.server import build_mcp_server, run_stdio

    settings = serving_settings()  # the kernel and tools the flows use, when a Prefect server keeps the block
    runtime = settings_runtime(settings, isolate_cpu_bound=True)
    notifier = ToolListNotifier()
    server = build_mcp_server(runtime, acting_for=agent, notifier=notifier)

    async def serve() -> None:
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_exit_on_sigterm, runtime)
                await run_stdio(server, runtime, notifier)
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await runtime.aclose()  # no sandbox container outlives the server

    asyncio.run(serve())


async def _exit_on_sigterm(runtime: Runtime) -> None:
    """On SIGTERM, shut the tools down (containers included), then exit.

    The stdio transport reads stdin in a worker thread that no cancellation can
    interrupt, so the process exits directly once the tools are down.
    """
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            with anyio.CancelScope(shield=True):
                await runtime.aclose()
            os._exit(128 + signal.SIGTERM)


def gateway(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default 127.0.0.1; others need tokens).")] = None,
    port: Annotated[int | None, typer.Option(help="Port to bind (default 8787).")] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes sharing the port (and the kernel's store).")
    ] = 1,
) -> None:
    """Serve the HTTP gateway: /v1/catalog, /v1/tool_call, /mcp, /health and the OpenAPI docs at /docs."""
    import uvicorn

    from colony.surfaces.gateway import create_app
    from colony.surfaces.gateway.protocol import server_options

    loaded = serving_settings()
    settings = loaded.gateway.with_options(host=host, port=port)
    loaded = loaded.model_copy(update={"gateway": settings})
    app = create_app(settings, kernel_settings=loaded.kernel, upstream=loaded.upstream_source(), policies=loaded.policy)
    if workers == 1:
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", **server_options(settings))
        return
    settings_for_workers(loaded)  # each worker builds its app from these, not from a second load
    shared_metrics()
    uvicorn.run(
        "colony.cli.serve:gateway_worker_app",
        factory=True,
        workers=workers,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        **server_options(settings, workers=True),
    )


def shared_metrics() -> None:
    """Give the workers one directory for their Prometheus values, so any worker's /metrics counts them all.

    ``PROMETHEUS_MULTIPROC_DIR`` as set is used as it is; otherwise a fresh directory, removed at exit.
    Set before the workers start: ``prometheus_client`` picks where values live as it is imported.
    """
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    import atexit
    import shutil
    import tempfile

    directory = tempfile.mkdtemp(prefix="colony-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    atexit.register(shutil.rmtree, directory, ignore_errors=True)


def gateway_worker_app() -> FastAPI:
    """The app of one ``colony gateway --workers N`` process, on the settings its parent loaded."""
    from colony.surfaces.gateway import create_app
    from colony.surfaces.gateway.protocol import share_worker_connections

    settings = settings_from_parent()
    share_worker_connections(settings.gateway)
    return create_app(
        settings.gateway,
        kernel_settings=settings.kernel,
        upstream=settings.upstream_source(),
        policies=settings.policy,
    )
