"""``colony hpc``: run the HPC REST service."""

from __future__ import annotations

from typing import Annotated

import typer

from colony.cli.failures import ColonyTyper, fail

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
    """Serve the HPC REST API (OpenAPI at /docs), configured by the settings block if any, else COLONY_HPC_*."""
    import uvicorn

    from blocks import load_settings
    from colony.hpc.service import create_app

    try:
        app = create_app(load_settings(block).hpc)
    except ValueError as error:
        raise fail(str(error)) from None
    uvicorn.run(app, host=host, port=port, log_level="info")
