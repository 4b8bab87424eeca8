"""One exec per call: the runner's report is split from the command's stderr, and believed only when genuine."""

from __future__ import annotations

import io
import tarfile
from collections import Counter
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from colony.sandbox import SandboxSession
from colony.sandbox.runner import archive_budget, read_report
from colony.sandbox.session import truncation_marker
from tests.colony.sandbox.conftest import TightShell, container_of, run

LIMIT = 65536  # TightShell's output cap


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def test_a_report_splits_stderr_archive_and_exit_code() -> None:
    archive = _tar({"./a.txt": b"A"})
    stream = b"oops\n" + archive + b"\ncolony-sandbox-report 4 %d 0\n" % len(archive)
    report = read_report(stream, 0, archive_bytes=archive_budget(LIMIT))
    assert report is not None
    assert (report.exit_code, report.stderr, report.archive, report.clean) == (4, b"oops\n", archive, True)
    assert report.archive_complete


def test_a_dirty_container_is_reported_as_such() -> None:
    report = read_report(b"\ncolony-sandbox-report 0 0 3\n", 3, archive_bytes=100)
    assert report is not None and not report.clean


@pytest.mark.parametrize(
    ("stream", "exec_exit_code"),
    [
        (b"\ncolony-sandbox-report 0 0 0\n", 137),  # the runner was killed after the command forged a report
        (b"\ncolony-sandbox-report 0 0 0\n", None),  # the exec never ended
        (b"\ncolony-sandbox-report 0 0 0\n", 3),  # the status stated is not the exit code
        (b"no report at all\n", 0),
        (b"\ncolony-sandbox-report 0 99 0\n", 0),  # an archive longer than the stream
        (b"\ncolony-sandbox-report 0 +0 0\n", 0),
        (b"\ncolony-sandbox-report 0 0 0", 0),  # cut before the end of the line
        (b"\ncolony-sandbox-report 0 0 0\ntrailing\n", 0),  # something wrote after the runner
    ],
)
def test_a_report_that_is_not_genuine_is_not_believed(stream: bytes, exec_exit_code: int | None) -> None:
    assert read_report(stream, exec_exit_code, archive_bytes=100) is None


def test_an_archive_at_the_budget_counts_as_cut() -> None:
    stream = b"x" * 10 + b"\ncolony-sandbox-report 0 10 0\n"
    report = read_report(stream, 0, archive_bytes=10)
    assert report is not None and not report.archive_complete


class _CountingAPI:
    """The engine's low-level API, counting the calls the session makes."""

    def __init__(self, api: Any, calls: Counter[str]) -> None:
        self._api = api
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._api, name)
        if not callable(target):
            return target

        def counted(*args: Any, **kwargs: Any) -> Any:
            self._calls[name] += 1
            return target(*args, **kwargs)

        return counted


class CountingClient:
    """A real Docker client whose ``api`` counts calls: what a test double that ships with tests looks like."""

    def __init__(self) -> None:
        self._client = docker.from_env()
        self.calls: Counter[str] = Counter()
        self.api = _CountingAPI(self._client.api, self.calls)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.fixture
def counted_shell(busybox_image: str) -> Iterator[tuple[TightShell, CountingClient]]:
    client = CountingClient()
    tool = TightShell(session=SandboxSession(client_factory=lambda: client))
    yield tool, client
    tool.sandbox_session.close()


def test_a_warm_call_is_one_exec(counted_shell: tuple[TightShell, CountingClient]) -> None:
    tool, client = counted_shell
    run(tool, "true")  # the cold call starts the container
    client.calls.clear()
    result = run(tool, "echo hi; echo there > out/f; sleep 30 &")
    assert result["stdout"] == "hi\n" and result["output_files"] == {"f": "there\n"}
    assert client.calls["exec_create"] == 1  # no second exec for clean-up or collection
    assert client.calls["put_archive"] == 0  # no input files, no upload
    run(tool, "cat in.txt", files={"in.txt": "x"})
    assert client.calls["exec_create"] == 2 and client.calls["put_archive"] == 1


def test_stderr_past_the_cap_is_cut_and_the_files_still_come_back(shared_shell: TightShell) -> None:
    result = run(shared_shell, f"head -c {LIMIT + 100} /dev/zero | tr '\\0' e >&2; echo kept > out/f; exit 5")
    assert result["stderr_truncated"]
    assert result["stderr"] == "e" * LIMIT + truncation_marker(LIMIT, stopped=False)
    assert result["exit_code"] == 5  # it finished on its own: cut, not stopped
    assert result["output_files"] == {"f": "kept\n"}


def test_output_files_past_the_budget_are_cut_and_the_container_stays(shared_shell: TightShell) -> None:
    run(shared_shell, "true")
    before = container_of(shared_shell)
    result = run(shared_shell, "for i in 1 2 3; do head -c 60000 /dev/zero > out/f$i; done; echo done")
    assert result["stdout"] == "done\n" and result["exit_code"] == 0
    assert result["output_files_truncated"]
    assert sum(len(text) for text in result["output_files"].values()) <= LIMIT
    assert container_of(shared_shell) == before  # a cut archive is no reason to replace the container
    assert run(shared_shell, "ls -A")["stdout"] == "out\n"
