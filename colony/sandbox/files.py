"""Files in and out of a sandbox call, as the tar archives Docker's archive API speaks.

A call's inputs are placed in its own work directory (``/work/<call>``) and its
outputs are whatever the command writes under ``out/`` there. Names are checked
before anything reaches the engine: relative, no ``..``, nothing under ``out/``.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field

from colony.errors import ToolInputError

__all__ = ["OUTPUT_DIR", "CollectedFiles", "check_input_files", "collect_outputs", "pack_call_directory"]

OUTPUT_DIR = "out"
_WRITABLE_DIR = 0o777  # the sandbox user must be able to empty the directory the engine created as root


def check_input_files(files: Mapping[str, str | bytes] | None, *, limit_bytes: int) -> dict[str, bytes]:
    """The input files as bytes under normalised names, or an input error naming the bad one."""
    if files is None:
        return {}
    if not isinstance(files, Mapping):
        raise ToolInputError.for_field("files", "files must be an object of file name -> content")
    checked: dict[str, bytes] = {}
    for name, content in files.items():
        if not isinstance(content, str | bytes):
            raise ToolInputError.for_field(f"files.{name}", "file content must be text", expected="string")
        checked[_check_name(name)] = content.encode() if isinstance(content, str) else content
    total = sum(len(content) for content in checked.values())
    if total > limit_bytes:
        raise ToolInputError.for_field(
            "files", f"input files total {total} bytes; the sandbox accepts at most {limit_bytes}"
        )
    return checked


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name or "\x00" in name:
        raise ToolInputError.for_field("files", f"{name!r} is not a usable file name")
    normal = posixpath.normpath(name)
    parts = normal.split("/")
    if name.startswith("/") or ".." in parts or normal == ".":
        raise ToolInputError.for_field(
            f"files.{name}", "file names must be relative and stay inside the work directory"
        )
    if parts[0] == OUTPUT_DIR:
        raise ToolInputError.for_field(f"files.{name}", f"{OUTPUT_DIR}/ is reserved for the command's outputs")
    return normal


def _directory(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = _WRITABLE_DIR
    return info


def pack_call_directory(call_dir: str, files: Mapping[str, bytes]) -> bytes:
    """A tar of ``call_dir/`` holding ``files`` and an empty ``out/``, for ``put_archive`` at the work root."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        directories = {call_dir, f"{call_dir}/{OUTPUT_DIR}"}
        for name in files:
            parent = posixpath.dirname(name)
            while parent:
                directories.add(f"{call_dir}/{parent}")
                parent = posixpath.dirname(parent)
        for directory in sorted(directories):
            archive.addfile(_directory(directory))
        for name, content in files.items():
            info = tarfile.TarInfo(f"{call_dir}/{name}")
            info.size = len(content)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


@dataclass
class CollectedFiles:
    """The output files of one call, as text, within the output limit."""

    files: dict[str, str] = field(default_factory=dict)
    truncated: bool = False


def collect_outputs(archive: bytes, *, limit_bytes: int, complete: bool = True) -> CollectedFiles:
    """Read the regular files of a tar of ``out/``; stop at ``limit_bytes`` of content.

    Links and devices are skipped (a link could point outside the call's data);
    content is decoded as UTF-8 with undecodable bytes replaced. An archive cut
    short (``complete=False``, or malformed) yields the files read before the cut.
    """
    collected = CollectedFiles(truncated=not complete)
    kept = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r|") as reader:
            for member in reader:
                if not member.isfile():
                    continue
                if kept + member.size > limit_bytes:
                    collected.truncated = True
                    break
                stream = reader.extractfile(member)
                content = stream.read() if stream is not None else b""
                kept += len(content)
                collected.files[posixpath.normpath(member.name)] = content.decode("utf-8", errors="replace")
    except (tarfile.TarError, EOFError):
        collected.truncated = True
    return collected
