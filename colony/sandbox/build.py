"""Building a role's image from ``sandbox/images/<role>/`` with the Docker SDK; never pulling.

A role directory holds a ``Dockerfile`` and, optionally, ``host-files.txt``:
lines of ``SOURCE DESTINATION`` naming files of this machine to copy into the
build context (Debian's static ``/bin/busybox``, say), so an image can be made
with no registry reachable.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

from colony.catalog import default_repo_root
from colony.errors import SandboxError
from colony.sandbox.config import ImageRole
from colony.sandbox.docker_errors import DockerCall, docker_errors_translated

__all__ = ["HOST_FILES", "build_context", "build_role_image", "buildable_roles", "images_dir"]

HOST_FILES = "host-files.txt"


def images_dir() -> Path:
    """Where the role Dockerfiles live: ``sandbox/images`` in the repository."""
    return default_repo_root() / "sandbox" / "images"


def buildable_roles(directory: Path | None = None) -> list[str]:
    """The roles that ship a Dockerfile."""
    root = directory or images_dir()
    return sorted(path.parent.name for path in root.glob("*/Dockerfile"))


def build_context(role_name: str, directory: Path | None = None) -> bytes:
    """The role's build context as a tar: its directory plus the host files it asks for."""
    role_dir = (directory or images_dir()) / role_name
    if not (role_dir / "Dockerfile").is_file():
        raise SandboxError(f"sandbox role {role_name!r} has no Dockerfile at {role_dir / 'Dockerfile'}")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(role_dir.iterdir()):
            if path.is_file() and path.name != HOST_FILES:
                archive.add(path, arcname=path.name)
        for source, destination in _host_files(role_dir):
            if not source.is_file():
                raise SandboxError(
                    f"sandbox role {role_name!r} needs {source} from this machine to build "
                    f"(listed in {role_dir / HOST_FILES}); on Debian it comes with busybox-static"
                    if source.name == "busybox"
                    else f"sandbox role {role_name!r} needs {source} from this machine to build"
                )
            archive.add(source, arcname=destination)
    return buffer.getvalue()


def _host_files(role_dir: Path) -> list[tuple[Path, str]]:
    listing = role_dir / HOST_FILES
    if not listing.is_file():
        return []
    pairs = []
    for number, line in enumerate(listing.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2:
            raise SandboxError(f"{listing}:{number}: expected 'SOURCE DESTINATION', got {line!r}")
        pairs.append((Path(parts[0]), parts[1]))
    return pairs


def build_role_image(client: Any, role_name: str, role: ImageRole, directory: Path | None = None) -> str:
    """Build and tag the role's image; its id. Layers are cached, so an unchanged role builds fast."""
    context = build_context(role_name, directory)
    call = DockerCall(role_name, role.image, "building the image")
    with docker_errors_translated(call):
        image, _ = client.images.build(
            fileobj=io.BytesIO(context),
            custom_context=True,
            tag=role.image,
            rm=True,
            forcerm=True,
            pull=False,
            labels={"org.colony.sandbox.role": role_name},
        )
    return str(image.id)
