"""``colony sandbox``: build the sandbox role images locally, list roles, reap orphans."""

from __future__ import annotations

from typing import Annotated

import docker
import typer
from rich.table import Table

from colony.cli.failures import ColonyTyper
from colony.cli.output import cli_console
from colony.cli.settings import command_settings
from colony.sandbox.build import build_role_image, buildable_roles
from colony.sandbox.docker_errors import DockerCall, docker_errors_translated
from colony.sandbox.ownership import reap_orphans

sandbox_app = ColonyTyper(no_args_is_help=True, help="Docker sandbox images and containers.")
console = cli_console()


def _client(role: str, doing: str) -> docker.DockerClient:
    with docker_errors_translated(DockerCall(role, "", doing)):
        return docker.from_env()


@sandbox_app.command("build")
def build(
    role: Annotated[str | None, typer.Argument(help="Role to build (default: every role with a Dockerfile).")] = None,
) -> None:
    """Build role images from sandbox/images/<role>/ with the local engine (nothing is pulled)."""
    config = command_settings().sandbox
    roles = [role] if role else buildable_roles()
    client = _client(roles[0] if roles else "", "building images")
    for name in roles:
        image_id = build_role_image(client, name, config.role(name))
        console.print(f"[green]✓[/green] {name}: {config.role(name).image} ({image_id[:19]})", highlight=False)


@sandbox_app.command("roles")
def roles() -> None:
    """List the configured roles, their images, and whether each image is built here."""
    config = command_settings().sandbox
    client = _client("", "listing images")
    table = Table("role", "image", "built", "pids", "max memory GB", "max vCPU")
    for name, role in sorted(config.roles.items()):
        with docker_errors_translated(DockerCall(name, role.image, "listing images")):
            built = bool(client.images.list(name=role.image))
        table.add_row(
            name,
            role.image,
            "yes" if built else "no",
            str(role.pids_limit),
            f"{role.max_memory_gb:g}",
            f"{role.max_vcpus:g}",
        )
    console.print(table)


@sandbox_app.command("reap")
def reap() -> None:
    """Remove this host's sandbox containers whose owning process is gone."""
    client = _client("", "reaping orphans")
    with docker_errors_translated(DockerCall("", "", "reaping orphans")):
        removed = reap_orphans(client)
    console.print(f"removed {len(removed)} orphaned sandbox container(s)")
