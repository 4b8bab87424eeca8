"""``colony hpc``: run the HPC REST service."""

from __future__ import annotations

from typing import Annotated

import typer

from colony.cli.failures import ColonyTyper, fail

#: The largest request body the HPC service reads: an upload's completion (10,000 parts with their ETags)
#: is under 1 MiB.
MAX_BODY_BYTES = 4 * 1024 * 1024
#: How long a request body may take to arrive.
BODY_TIMEOUT_SECONDS = 15.0

hpc_app = ColonyTyper(no_args_is_help=True, help="The HPC service: tool jobs on AWS Batch, artifacts in S3.")


@hpc_app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind; loopback unless you mean to expose it.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8765,
    block: Annotated[
        str | None,
        typer.Option(help="Read the settings from this ColonyConfig block (default: the settings block, if any)."),
    ] = None,
) -> None:
    """Serve the HPC REST API (OpenAPI at /docs), configured by the settings block if any, else COLONY_HPC_*.

    It is served with the gateway's connection limits (their defaults): request headers within 5 s and
    16 KiB, at most 1,000 connections, each client address its share of them; and a body is read whole,
    at most 4 MiB within 15 s, before any route (or the bearer token) looks at it.
    """
    import uvicorn

    from blocks import load_settings
    from colony.hpc.service import create_app
    from colony.surfaces.gateway.body import BodyGuardMiddleware
    from colony.surfaces.gateway.protocol import server_options
    from colony.surfaces.gateway.settings import GatewaySettings

    try:
        app = create_app(load_settings(block).hpc)
    except ValueError as error:
        raise fail(str(error)) from None
    guarded = BodyGuardMiddleware(app, max_bytes=MAX_BODY_BYTES, timeout_seconds=BODY_TIMEOUT_SECONDS, jsonrpc_paths=())
    uvicorn.run(guarded, host=host, port=port, log_level="info", **server_options(GatewaySettings()))
