"""Run one seed document's Python samples as a reader would: in order, in one session.

``python -m tests.seed_session SAMPLES REPORT`` runs inside a private network namespace
(tests/test_seed_samples.py starts it with ``unshare``), where the addresses the samples
name are free to take: a Colony gateway on 127.0.0.1:8787 (the "Via MCP" sample) and a
second one as the remote node http://192.168.1.100:8000 (the "Remote Execution" sample),
reached through a TCP relay because an open gateway binds loopback only.

The samples share one namespace in document order (later samples use the ``client`` and
``tools`` earlier ones made). The harness adds only what SAMPLES gives for a sample: a
prelude run before it (names a fragment uses without importing), and afterwards it calls
every ``test_*`` function the sample defines. Each sample's stdout, the values it assigns
and its error go to REPORT.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.services.gateway import start_gateway_process

MCP_PORT = 8787
REMOTE_HOST, REMOTE_PORT = "192.168.1.100", 8000


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", REMOTE_PORT)
    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer), return_exceptions=True)


def start_relay() -> None:
    """Forward REMOTE_HOST:REMOTE_PORT to the gateway on loopback, from a daemon thread."""
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(asyncio.start_server(_relay, REMOTE_HOST, REMOTE_PORT))
    threading.Thread(target=loop.run_until_complete, args=(server.serve_forever(),), daemon=True).start()


@contextlib.contextmanager
def gateways(root: Path) -> Iterator[None]:
    """The two gateways the samples call, each with its own COLONY_HOME."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        processes.append(start_gateway_process({"COLONY_HOME": str(root / "gateway")}, MCP_PORT))
        remote = {"COLONY_HOME": str(root / "remote"), "COLONY_GATEWAY_ALLOWED_HOSTS": f"{REMOTE_HOST}:{REMOTE_PORT}"}
        processes.append(start_gateway_process(remote, REMOTE_PORT))
        start_relay()
        yield
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


def _assigned(text: str) -> list[str]:
    """The names a sample's top-level statements assign."""
    return [
        target.id
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    ]


def _plain(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def run(sample: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    """Exec one sample (after its prelude), then its ``test_*`` functions.

    Returns its stdout, the values of the names it assigns, and the error, if any.
    """
    out = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(sample.get("prelude", ""), "<harness>", "exec", dont_inherit=True), namespace)
            before = set(namespace)
            exec(compile(sample["text"], sample["id"], "exec", dont_inherit=True), namespace)
            for name in sorted(set(namespace) - before):
                if name.startswith("test_") and callable(namespace[name]):
                    namespace[name]()
    except Exception as caught:  # noqa: BLE001 - every failure is reported; the test judges it
        error = {"type": type(caught).__name__, "message": str(caught), "traceback": traceback.format_exc()[-3000:]}
    values = {name: _plain(namespace[name]) for name in _assigned(sample["text"]) if name in namespace}
    return {"stdout": out.getvalue(), "values": values, "error": error}


def main(samples_path: str, report_path: str) -> None:
    samples = json.loads(Path(samples_path).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["COLONY_HOME"] = str(root / "session")
        with gateways(root):
            namespace: dict[str, Any] = {"__name__": "__main__"}
            report = {sample["id"]: run(sample, namespace) for sample in samples}
    Path(report_path).write_text(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:])
