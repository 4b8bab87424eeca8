"""Test-double tools: capabilities with behaviour the catalog tools do not have.

Each counts its calls in ``CALLS`` (by tool and key) so tests can see what really ran.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from colony import LocalToolCapability, ToolSpec, action_executor
from colony.errors import ToolExecutionError
from colony.spec import Determinism, ResourceRequirements

CALLS: Counter[str] = Counter()


class EchoToolDouble(LocalToolCapability):
    """A deterministic tool that counts its calls."""

    spec = ToolSpec(name="echo_double", version="1.0.0", capabilities=("echo",))

    @action_executor
    def echo(self, *, text: str) -> dict[str, str]:
        """Return the text.

        Args:
            text: Anything.

        Returns:
            {"text": text}.
        """
        CALLS[f"{self.spec.name}:{self.spec.version}:{text}"] += 1
        return {"text": text}


class EchoToolDoubleV2(EchoToolDouble):
    """The same tool, one version later."""

    spec = EchoToolDouble.spec.model_copy(update={"version": "2.0.0"})


class RandomToolDouble(EchoToolDouble):
    """The same action on a non-deterministic tool."""

    spec = ToolSpec(name="random_double", capabilities=("echo",), determinism=Determinism.NONDETERMINISTIC)


class BusyError(Exception):
    """The tool's own 'try again later'."""


class FlakyToolDouble(LocalToolCapability):
    """Fails the first ``failures`` calls per key with the requested error, then answers."""

    spec = ToolSpec(
        name="flaky_double",
        capabilities=("fetch",),
        resource_requirements=ResourceRequirements(expected_wallclock_seconds=2),
    )
    retryable_errors = (BusyError,)

    @action_executor
    async def fetch(self, *, key: str, failures: int = 1, error: str = "connection") -> dict[str, int]:
        """Answer after failing ``failures`` times.

        Args:
            key: Names the counter.
            failures: How many calls fail first.
            error: connection, busy, permanent or retryable_colony.

        Returns:
            {"attempts": the number of calls so far}.
        """
        CALLS[f"flaky:{key}"] += 1
        attempts = CALLS[f"flaky:{key}"]
        if attempts <= failures:
            if error == "connection":
                raise ConnectionError("connection reset by peer")
            if error == "busy":
                raise BusyError("busy, try later")
            if error == "retryable_colony":
                raise ToolExecutionError("service restarting", retryable=True)
            raise ToolExecutionError("the input file is corrupt")
        return {"attempts": attempts}


class LedgerToolDouble(LocalToolCapability):
    """A side-effecting tool writing files, with a declared rollback and a check."""

    spec = ToolSpec(name="ledger_double", capabilities=("write_entry",), side_effecting=True)
    rollback_actions = {"write_entry": "erase_entry"}

    @action_executor
    def write_entry(self, *, path: str, text: str, fail: bool = False) -> dict[str, str]:
        """Write ``text`` to ``path``.

        Args:
            path: File to write.
            text: Content.
            fail: Raise a connection error instead (the write does not happen).

        Returns:
            {"path": path}.
        """
        CALLS[f"write:{path}"] += 1
        if fail:
            raise ConnectionError("disk went away")
        Path(path).write_text(text, encoding="utf-8")
        return {"path": path}

    @action_executor
    def erase_entry(self, *, path: str) -> dict[str, bool]:
        """Remove the file at ``path``.

        Args:
            path: File to remove.

        Returns:
            {"removed": whether it existed}.
        """
        CALLS[f"erase:{path}"] += 1
        existed = Path(path).exists()
        Path(path).unlink(missing_ok=True)
        return {"removed": existed}

    @action_executor(side_effecting=False)
    def check_entry(self, *, path: str, expected: str) -> dict[str, bool]:
        """Fail unless the file holds ``expected``.

        Args:
            path: File to read.
            expected: The content it must hold.

        Returns:
            {"ok": true}; a mismatch is a ToolExecutionError.
        """
        if Path(path).read_text(encoding="utf-8") != expected:
            raise ToolExecutionError(f"{path} does not hold the expected text")
        return {"ok": True}


class IdempotentLedgerToolDouble(LedgerToolDouble):
    """The ledger whose write is declared idempotent, so it may be retried."""

    spec = LedgerToolDouble.spec.model_copy(update={"name": "idempotent_ledger_double"})

    @action_executor(idempotent=True)
    def write_entry(self, *, path: str, text: str, fail: bool = False) -> dict[str, str]:
        """Write ``text`` to ``path`` (fails once per path when ``fail``).

        Args:
            path: File to write.
            text: Content.
            fail: Raise a connection error on the first call for this path.

        Returns:
            {"path": path}.
        """
        CALLS[f"write:{path}"] += 1
        if fail and CALLS[f"write:{path}"] == 1:
            raise ConnectionError("disk went away")
        Path(path).write_text(text, encoding="utf-8")
        return {"path": path}


class SlowLedgerToolDouble(LocalToolCapability):
    """A side-effecting write that waits for a release file, so a test can kill the process running it.

    Each write appends a line, so the file shows how often the action really ran.
    """

    spec = ToolSpec(
        name="slow_ledger_double",
        capabilities=("write_entry",),
        side_effecting=True,
        resource_requirements=ResourceRequirements(expected_wallclock_seconds=60),
    )

    @action_executor
    def write_entry(self, *, path: str, text: str, release: str) -> dict[str, str]:
        """Append ``text`` to ``path`` once the file ``release`` exists (at most ten minutes).

        Args:
            path: File to append to.
            text: The line to append.
            release: The file whose existence lets the write go ahead.

        Returns:
            {"path": path}.
        """
        deadline = time.monotonic() + 600
        while not Path(release).exists():
            if time.monotonic() > deadline:
                raise ToolExecutionError(f"{release} was never created")
            time.sleep(0.2)
        with Path(path).open("a", encoding="utf-8") as ledger:
            ledger.write(text + "\n")
        return {"path": path}


class SecretToolDouble(LocalToolCapability):
    """A tool needing a secret kind."""

    spec = ToolSpec(
        name="secret_double",
        capabilities=("whoami",),
        secrets=({"name": "double_token", "purpose": "authenticate to the double service"},),  # type: ignore[arg-type]
    )

    @action_executor
    def whoami(self) -> dict[str, int]:
        """Return how often it ran.

        Returns:
            {"calls": n}.
        """
        CALLS["secret"] += 1
        return {"calls": CALLS["secret"]}


DOUBLES = {
    "echo_double": ("echo", "EchoToolDouble"),
    "random_double": ("echo", "RandomToolDouble"),
    "flaky_double": ("fetch", "FlakyToolDouble"),
    "ledger_double": ("write_entry", "LedgerToolDouble"),
    "secret_double": ("whoami", "SecretToolDouble"),
    "slow_ledger_double": ("write_entry", "SlowLedgerToolDouble"),
}


def doubles_repo(root: Path) -> Path:
    """A repository root (for COLONY_REPO_ROOT) whose catalog is the repository's plus these doubles."""
    from colony.catalog import ToolEntry, load_registry, save_registry
    from colony.catalog import registry_path as path_of

    entries = dict(load_registry(Path(__file__).resolve().parents[1] / ".colony" / "tool-registry.json"))
    for name, (capability, cls) in DOUBLES.items():
        entries[name] = ToolEntry(name=name, capability=capability, capability_fqn=f"{__name__}.{cls}")
    save_registry(entries, path_of(root))
    return root
