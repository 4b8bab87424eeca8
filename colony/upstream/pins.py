"""Pinned definitions: an upstream tool serves only the definition an operator has seen.

The first time a server's tools are seen (``colony mcp-servers add``), their definitions
(name, description, input and output schemas, annotations) are recorded in
``mcp-pins.json`` in the Colony home. The catalog is built from the pins, so listing
tools never starts a server. When a server is started, what it lists is compared with
the pins: a tool whose description or schema changed (a rug pull, or poisoned text) is
taken out of service until an operator reviews the diff and re-pins it; unchanged tools
keep working; a new tool appears only after a pin. Text that reads like instructions to
the model is flagged for the operator and never pinned without being named. A settings
block carries the same content (``Pins``), so every worker serves what was pinned here.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import re2

from colony.errors import McpServersFileError

__all__ = [
    "MAX_DEFINITION_BYTES",
    "PinStore",
    "PinnedTool",
    "Pins",
    "Review",
    "definition_of",
    "drift_reason",
    "fingerprint",
    "pins_path",
    "suspicious_text",
]

MAX_DEFINITION_BYTES = 64 * 1024
_DEFINITION_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
# What a tool description has no business saying to a model (tool poisoning): case-insensitive, linear (RE2).
_INJECTION = re2.compile(
    r"(?i)(ignore (all |any )?(previous|prior|above|earlier) (instructions|prompts?)"
    r"|<\s*/?\s*(important|system|instructions?)\s*>"
    r"|do not (tell|mention|inform|reveal|show)( this)? (to )?(the )?user"
    r"|system prompt|before (using|calling) (this|any other) tool"
    r"|~/\.ssh|id_rsa|\.env\b|private key|exfiltrat"
    r"|\x{200b}|\x{200c}|\x{200d}|\x{2060}|\x{202e}|\x{202d}|\x{feff})"
)


def pins_path(home: Path) -> Path:
    """Where the pins of a Colony home are kept."""
    return home / "mcp-pins.json"


def definition_of(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of an MCP tool definition that are pinned (what a model and the gate read)."""
    return {key: tool[key] for key in _DEFINITION_KEYS if tool.get(key) is not None}


def fingerprint(definition: Mapping[str, Any]) -> str:
    """SHA-256 of the definition's canonical JSON."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def drift_reason(server: str) -> str:
    """Why a tool whose definition drifted from its pin is out of service, and what brings it back."""
    return (
        f"its definition on MCP server {server!r} changed since it was pinned; an operator must review the "
        f"change and re-pin it (colony mcp-servers pin {server})"
    )


def suspicious_text(definition: Mapping[str, Any]) -> list[str]:
    """Passages of the definition that read like instructions to a model, for the operator to judge."""
    found = []
    text = json.dumps(definition, ensure_ascii=False)
    for match in _INJECTION.finditer(text):
        start, end = max(match.start() - 40, 0), min(match.end() + 40, len(text))
        found.append(f"…{text[start:end]}…".encode("unicode_escape").decode("ascii"))
    return found


Judge = Callable[[Mapping[str, Any]], list[str]]
"""What flags a definition for the operator: passages for them to judge (none: it may be pinned)."""


@dataclass(frozen=True)
class PinnedTool:
    """One tool's pinned definition."""

    definition: dict[str, Any]
    sha256: str
    pinned_at: str

    @property
    def name(self) -> str:
        """The tool's name on its server."""
        return str(self.definition["name"])


@dataclass(frozen=True)
class Review:
    """What a server lists now, compared with its pins."""

    server: str
    unchanged: tuple[str, ...] = ()
    changed: Mapping[str, str] = field(default_factory=dict)  # tool -> unified diff of the definitions
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    flagged: Mapping[str, list[str]] = field(default_factory=dict)  # tool -> suspicious passages
    oversized: tuple[str, ...] = ()

    @property
    def out_of_service(self) -> frozenset[str]:
        """Pinned tools that must not serve until re-pinned: changed, or gone from the server."""
        return frozenset(self.changed) | frozenset(self.removed)


class Pins:
    """Pinned definitions held in memory: a settings block's, the same for the life of the process."""

    def __init__(self, pins: Mapping[str, Mapping[str, PinnedTool]] | None = None) -> None:
        self._pins = {server: dict(tools) for server, tools in (pins or {}).items()}

    def stamp(self) -> tuple[int, int] | None:
        """Changes whenever ``servers`` may (never, in memory)."""
        return None

    def servers(self) -> dict[str, dict[str, PinnedTool]]:
        """Every server's pinned tools, by tool name."""
        return {server: dict(tools) for server, tools in self._pins.items()}

    def content(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Every pin as the pins file keeps it: server -> tool -> sha256, pinned_at, definition."""
        return _content(self.servers())

    def review(self, server: str, listed: Iterable[Mapping[str, Any]], *, judge: Judge = suspicious_text) -> Review:
        """Compare what ``server`` lists now with its pins; ``judge`` finds what a new definition flags."""
        pinned = self.servers().get(server, {})
        current: dict[str, dict[str, Any]] = {}
        oversized = []
        for tool in listed:
            definition = definition_of(tool)
            if len(json.dumps(definition)) > MAX_DEFINITION_BYTES:
                oversized.append(str(tool.get("name")))
                continue
            current[str(definition.get("name"))] = definition
        changed = {
            name: _diff(pinned[name].definition, definition)
            for name, definition in current.items()
            if name in pinned and fingerprint(definition) != pinned[name].sha256
        }
        return Review(
            server=server,
            unchanged=tuple(sorted(name for name in current if name in pinned and name not in changed)),
            changed=changed,
            added=tuple(sorted(name for name in current if name not in pinned)),
            removed=tuple(sorted(name for name in pinned if name not in current)),
            flagged={
                name: passages
                for name, definition in current.items()
                if (name not in pinned or name in changed) and (passages := judge(definition))
            },
            oversized=tuple(sorted(oversized)),
        )


class PinStore(Pins):
    """The pins file: read on each change of its stamp, written atomically."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None

    def stamp(self) -> tuple[int, int] | None:
        """The file's modification time and size, None when it does not exist."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def servers(self) -> dict[str, dict[str, PinnedTool]]:
        """Every server's pinned tools, by tool name."""
        with self._lock:
            stamp = self.stamp()
            if stamp != self._stamp:
                self._pins, self._stamp = self._read(), stamp
            return {server: dict(tools) for server, tools in self._pins.items()}

    def pin(
        self,
        server: str,
        listed: Iterable[Mapping[str, Any]],
        *,
        only: Iterable[str] | None = None,
        accept_flagged: Iterable[str] = (),
        judge: Judge = suspicious_text,
    ) -> Review:
        """Record what ``server`` lists (or the tools in ``only``); flagged text is pinned only when accepted.

        Tools no longer listed lose their pins; a flagged tool not in ``accept_flagged`` keeps its old
        pin (or none) and stays out of service.
        """
        listed = list(listed)
        review = self.review(server, listed, judge=judge)
        chosen = None if only is None else set(only)
        accepted = set(accept_flagged)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._lock:
            pins = self._read()
            tools = dict(pins.get(server, {}))
            for tool in listed:
                definition = definition_of(tool)
                name = str(definition.get("name"))
                if chosen is not None and name not in chosen:
                    continue
                if name in review.oversized or (name in review.flagged and name not in accepted):
                    continue
                if name in tools and tools[name].sha256 == fingerprint(definition):
                    continue
                tools[name] = PinnedTool(definition=definition, sha256=fingerprint(definition), pinned_at=now)
            if chosen is None:
                for name in review.removed:
                    tools.pop(name, None)
            pins[server] = tools
            self._write(pins)
        return review

    def forget(self, server: str) -> None:
        """Drop every pin of ``server`` (it was removed)."""
        with self._lock:
            pins = self._read()
            if pins.pop(server, None) is not None:
                self._write(pins)

    def _read(self) -> dict[str, dict[str, PinnedTool]]:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise McpServersFileError(f"{self.path}: the pinned definitions cannot be read: {error}") from None
        try:
            return {
                server: {
                    name: PinnedTool(definition=item["definition"], sha256=item["sha256"], pinned_at=item["pinned_at"])
                    for name, item in tools.items()
                    if fingerprint(item["definition"]) == item["sha256"]  # an edited pin is no pin
                }
                for server, tools in data["servers"].items()
            }
        except (KeyError, TypeError, AttributeError) as error:
            raise McpServersFileError(f"{self.path}: not a pins file ({type(error).__name__}: {error})") from None

    def _write(self, pins: Mapping[str, Mapping[str, PinnedTool]]) -> None:
        document = {"version": 1, "servers": _content(pins)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-pins.", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(document, stream, indent=2)
                stream.write("\n")
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._pins, self._stamp = {server: dict(tools) for server, tools in pins.items()}, self.stamp()


def _content(pins: Mapping[str, Mapping[str, PinnedTool]]) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        server: {
            name: {"sha256": tool.sha256, "pinned_at": tool.pinned_at, "definition": tool.definition}
            for name, tool in sorted(tools.items())
        }
        for server, tools in sorted(pins.items())
    }


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    before = json.dumps(old, indent=2, sort_keys=True).splitlines()
    after = json.dumps(new, indent=2, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(before, after, "pinned", "served now", lineterm=""))
