"""Policy files: ``*.cedar`` in one directory, each policy named and placed (file and line).

A policy's id is its ``@id`` annotation, else ``FILE:LINE`` of its first line, so a decision,
an error and an audit record all point at the text an operator wrote.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import cedarpy
from cedarpy import pst

from colony.errors import PolicyError

__all__ = ["PolicySource", "Stamp", "policy_set", "read_policies", "stamp"]

Stamp = tuple[tuple[str, int, int], ...]
"""What a directory's policy files look like on disk: name, size and mtime of each."""


def policy_set(policies: Mapping[str, pst.Template]) -> cedarpy.PolicySet:
    """Parsed policies, by id, as one Cedar policy set."""
    return cedarpy.PolicySet.from_pst(pst.PolicySet(templates={}, static_policies=policies, template_links=()))


@dataclass(frozen=True)
class PolicySource:
    """One parsed policy, where it was written and what its annotations ask."""

    id: str
    file: str
    line: int
    policy: pst.Template

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def forbids(self) -> bool:
        return self.policy.effect == "forbid"

    @property
    def reason(self) -> str:
        return self.policy.annotations.get("reason", "")

    @property
    def hold(self) -> str | None:
        """The ``@hold`` annotation (why a person must approve), None when the policy asks none."""
        return self.policy.annotations.get("hold")


def stamp(directory: Path) -> Stamp:
    """The directory's ``*.cedar`` files as they are now (an empty stamp when it does not exist)."""
    try:
        files = sorted(directory.glob("*.cedar"))
    except OSError:
        return ()
    found = []
    for path in files:
        try:
            info = path.stat()
        except OSError:
            continue
        found.append((path.name, info.st_size, info.st_mtime_ns))
    return tuple(found)


def read_policies(directory: Path) -> list[PolicySource]:
    """Every policy of every ``*.cedar`` file in ``directory``, in file then text order.

    Raises:
        PolicyError: A file cannot be read or parsed, or two policies share an id (naming file and line).
    """
    sources: list[PolicySource] = []
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.cedar")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise PolicyError(f"{path}: cannot be read: {error}", file=str(path)) from None
        for source in _parse(path, text):
            if source.id in seen:
                raise PolicyError(
                    f"{source.where}: policy id {source.id!r} is already used at {seen[source.id]}",
                    file=source.file,
                    line=source.line,
                )
            seen[source.id] = source.where
            sources.append(source)
    return sources


def _parse(path: Path, text: str) -> list[PolicySource]:
    starts = statement_lines(text)
    try:
        parsed = cedarpy.policies_to_pst(text)
    except ValueError as error:
        line = _failing_line(text, starts)
        raise PolicyError(f"{path}:{line}: does not parse as Cedar: {error}", file=str(path), line=line) from None
    if parsed.templates:
        raise PolicyError(f"{path}: templates (?principal, ?resource) are not supported here", file=str(path))
    sources = []
    for index, policy in enumerate(parsed.static_policies.values()):
        line = starts[index] if index < len(starts) else 1
        policy_id = policy.annotations.get("id") or f"{path.name}:{line}"
        sources.append(PolicySource(policy_id, str(path), line, dataclasses.replace(policy, id=policy_id)))
    return sources


def statement_lines(text: str) -> list[int]:
    """The line each policy starts on: the first token after the previous ``;``, skipping comments and strings."""
    lines: list[int] = []
    line, index, expecting = 1, 0, True
    while index < len(text):
        char = text[index]
        if char == "\n":
            line += 1
        elif text.startswith("//", index):
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
            continue
        elif not char.isspace():
            if expecting:
                lines.append(line)
                expecting = False
            if char == '"':
                index += 1
                while index < len(text) and text[index] != '"':
                    if text[index] == "\\":
                        index += 1
                    elif text[index] == "\n":
                        line += 1
                    index += 1
            elif char == ";":
                expecting = True
        index += 1
    return lines


def _failing_line(text: str, starts: list[int]) -> int:
    """The start line of the first policy that does not parse on its own (the file's first line otherwise)."""
    lines = text.splitlines(keepends=True)
    bounds = [*starts, len(lines) + 1]
    for begin, end in itertools.pairwise(bounds):
        try:
            cedarpy.policies_to_pst("".join(lines[begin - 1 : end - 1]))
        except ValueError:
            return begin
    return starts[0] if starts else 1
