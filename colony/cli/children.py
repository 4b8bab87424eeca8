"""The servers ``colony up`` starts, as child processes that never outlive it.

Each child runs in its own session, so Ctrl-C in the terminal reaches ``colony up`` alone,
which then stops its children in order. On Linux each child also asks the kernel for SIGTERM
when its parent dies (``PR_SET_PDEATHSIG``), so even a SIGKILLed ``colony up`` leaves no
server behind; the kernel sends it when the thread that started the child ends, and
``colony up`` starts them from its main thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import typer

from colony.cli.output import cli_console

__all__ = ["child_process"]

console = cli_console()
STARTUP_SECONDS = 120
STOP_SECONDS = 20
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that ties the child's life to this process (Linux; elsewhere none)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved before fork: the child only calls it
    parent = os.getpid()

    def tie() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)

    return tie


@contextlib.contextmanager
def child_process(
    name: str, command: list[str], env: dict[str, str], health_url: str
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command``, wait until ``health_url`` answers 200, and stop it on exit."""
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, env=env, start_new_session=True, preexec_fn=_die_with_parent()
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _healthy(health_url):
            if process.poll() is not None:
                console.print(f"[red]error:[/red] the {name} exited with code {process.returncode}")
                raise typer.Exit(code=process.returncode or 1)
            if time.monotonic() > deadline:
                console.print(f"[red]error:[/red] the {name} did not answer on {health_url}")
                raise typer.Exit(code=1)
            time.sleep(0.5)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False
