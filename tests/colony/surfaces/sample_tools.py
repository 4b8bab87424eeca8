"""A real side-effecting tool for the gate tests: it appends a note to a file in COLONY_HOME."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolSpec, action_executor


class Appended(TypedDict):
    """Where the note went and how many the file now holds."""

    path: str
    notes: int


def notes_file() -> Path:
    """The file the tool writes: ``$COLONY_HOME/notes.txt``."""
    return Path(os.environ["COLONY_HOME"]) / "notes.txt"


class AppendNote(LocalToolCapability):
    """Append one line to the notes file (a side effect the gate must approve)."""

    spec = ToolSpec(
        name="append_note",
        description="Append one line of text to the colony's notes file.",
        capabilities=("append_note",),
        side_effecting=True,
        policy_tags=("writes_files", "no_network"),
    )

    @action_executor
    def append_note(self, *, note: Annotated[str, Field(min_length=1, description="The line to append.")]) -> Appended:
        """Append ``note`` as one line to the notes file.

        Args:
            note: The line to append; must not be empty.

        Returns:
            {"path": the file, "notes": lines it now holds}.
        """
        path = notes_file()
        with path.open("a", encoding="utf-8") as stream:
            stream.write(note.replace("\n", " ") + "\n")
        return Appended(path=str(path), notes=len(path.read_text(encoding="utf-8").splitlines()))


class AppendNoteReworded(AppendNote):
    """The same tool with a reworded description and an unchanged version: a silent change."""

    spec = AppendNote.spec.model_copy(update={"description": "Append text to the notes file, then share it."})


class AppendNoteBumped(AppendNote):
    """The same rewording, released properly as a new minor version."""

    spec = AppendNoteReworded.spec.model_copy(update={"version": "1.1.0"})


def sample_repo(root: Path) -> Path:
    """A repository root whose catalog holds ``append_note`` and ``unit_convert`` (for COLONY_REPO_ROOT)."""
    entries = [
        {"name": "append_note", "capability": "append_note", "capability_fqn": f"{__name__}.AppendNote"},
        {"name": "unit_convert", "capability": "convert_units", "capability_fqn": "tools.unit_convert.UnitConvert"},
    ]
    (root / ".colony").mkdir(parents=True, exist_ok=True)
    (root / ".colony" / "tool-registry.json").write_text(json.dumps({"version": 1, "tools": entries}))
    return root


class Sleeper(LocalToolCapability):
    """Sleep, then fail or answer: for the host's timeout and error handling."""

    spec = ToolSpec(name="sleeper", description="Sleep for a while.", capabilities=("sleep",))

    @action_executor
    def sleep(self, *, seconds: float, explode: bool = False) -> dict[str, float]:
        """Sleep ``seconds``, then raise a bare RuntimeError if ``explode``.

        Args:
            seconds: How long to sleep.
            explode: Raise an exception that is not a Colony error.

        Returns:
            {"slept": seconds}.
        """
        time.sleep(seconds)
        if explode:
            raise RuntimeError("boom")
        return {"slept": seconds}


class SlowWriter(LocalToolCapability):
    """Sleep, then write a file: a side effect that can outlive its deadline."""

    spec = ToolSpec(
        name="slow_writer", description="Sleep, then write a file.", capabilities=("write_later",), side_effecting=True
    )

    @action_executor
    def write_later(self, *, seconds: float, path: str) -> dict[str, str]:
        """Sleep ``seconds``, then write ``path``.

        Args:
            seconds: How long to sleep first.
            path: The file to write.

        Returns:
            {"path": path}.
        """
        time.sleep(seconds)
        Path(path).write_text("written")
        return {"path": path}


class AsyncSleeper(LocalToolCapability):
    """The same, as a coroutine."""

    spec = ToolSpec(name="async_sleeper", description="Sleep for a while, cooperatively.", capabilities=("sleep",))

    @action_executor
    async def sleep(self, *, seconds: float) -> dict[str, float]:
        """Sleep ``seconds`` without blocking the event loop.

        Args:
            seconds: How long to sleep.

        Returns:
            {"slept": seconds}.
        """
        await asyncio.sleep(seconds)
        return {"slept": seconds}


class Spinner(LocalToolCapability):
    """Burn CPU in pure Python: a CPU-bound tool, run in a worker process."""

    spec = ToolSpec(name="spinner", description="Burn CPU for a while.", capabilities=("spin",))
    cpu_bound = True

    @action_executor
    def spin(self, *, seconds: float, pid_file: str = "", explode: bool = False) -> dict[str, int]:
        """Spin for ``seconds``, after writing this process's id to ``pid_file`` when given.

        Args:
            seconds: How long to keep the CPU busy.
            pid_file: Where to write the id of the process doing the work.
            explode: Raise an exception that is not a Colony error.

        Returns:
            {"pid": the id of the process that did the work}.
        """
        if pid_file:
            Path(pid_file).write_text(str(os.getpid()))
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            pass
        if explode:
            raise RuntimeError("boom")
        return {"pid": os.getpid()}


class AppendNoteRenamed(LocalToolCapability):
    """The tool with its input renamed (``note`` -> ``line``): calls written for 1.0.0 now fail."""

    spec = AppendNote.spec.model_copy(update={"version": "1.1.0"})

    @action_executor
    def append_note(self, *, line: Annotated[str, Field(min_length=1, description="The line to append.")]) -> Appended:
        """Append ``line`` as one line to the notes file.

        Args:
            line: The line to append; must not be empty.

        Returns:
            {"path": the file, "notes": lines it now holds}.
        """
        return AppendNote().append_note(note=line)


class AppendNoteRenamedMajor(AppendNoteRenamed):
    """The same breaking change, released as a new MAJOR version."""

    spec = AppendNote.spec.model_copy(update={"version": "2.0.0"})
