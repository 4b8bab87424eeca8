"""A locally built image for Docker-backed Batch jobs (nothing is pulled).

``FROM scratch`` plus the static busybox; a job that needs Python gets this
machine's interpreter and the checkout bind-mounted read-only (see
``python_job_mounts``), so the container runs the real job module.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.services import unavailable
from tests.services.hpc import JOB_IMAGE

REPO_ROOT = Path(__file__).resolve().parents[2]
_DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && ln -s usr/lib /lib && ln -s usr/lib64 /lib64 \
&& mkdir -p /tmp /root && chmod 1777 /tmp"]
"""


def _static_busybox() -> Path | None:
    found = shutil.which("busybox")
    if found is None:
        return None
    described = subprocess.run(["file", "-L", found], capture_output=True, text=True, check=False).stdout
    return Path(found) if "statically linked" in described else None


@pytest.fixture(scope="session")
def job_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The job image's tag, built once per session."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as error:  # noqa: BLE001 - any failure means no usable engine
        unavailable(f"no Docker engine: {error}")
    busybox = _static_busybox()
    if busybox is None:
        unavailable("a statically linked busybox is not installed (Debian: busybox-static)")
    context = tmp_path_factory.mktemp("job-image")
    shutil.copy(busybox, context / "busybox")
    (context / "Dockerfile").write_text(_DOCKERFILE)
    client.images.build(path=str(context), tag=JOB_IMAGE, rm=True)
    client.close()
    yield JOB_IMAGE


def python_job_container(module: str) -> dict[str, Any]:
    """containerProperties running ``python -m module`` with this machine's Python and checkout mounted."""
    mounts = {"usr": Path("/usr"), "python": Path(sys.base_prefix), "repo": REPO_ROOT}
    return {
        "command": [sys.executable, "-m", module],
        "volumes": [{"name": name, "host": {"sourcePath": str(path)}} for name, path in mounts.items()],
        "mountPoints": [
            {"sourceVolume": name, "containerPath": str(path), "readOnly": True} for name, path in mounts.items()
        ],
        "environment": [
            {"name": "PYTHONPATH", "value": str(REPO_ROOT)},
            {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
            {"name": "AWS_ACCESS_KEY_ID", "value": "testing"},
            {"name": "AWS_SECRET_ACCESS_KEY", "value": "testing"},
            {"name": "AWS_DEFAULT_REGION", "value": "us-east-1"},
        ],
    }
