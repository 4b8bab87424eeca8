"""The tool catalog: ``.colony/tool-registry.json``.

Discovery reads JSON only and imports nothing; a tool's class is imported when
an agent mounts it (``resolve_capability``) or when an entry is registered
(``upsert_tool``, which refuses an entry whose ``capability`` is not in the
class's ``spec.capabilities``). Entries with an empty ``capability_fqn`` are
catalog-only stubs: listed, never offered to a planner.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from colony.errors import (
    CapabilityResolutionError,
    RegistryFileError,
    ToolEntrySpecMismatch,
    UnknownToolError,
)

if TYPE_CHECKING:
    from colony.capability import ToolCapability

__all__ = [
    "REGISTRY_RELATIVE_PATH",
    "DiscoveredExtensions",
    "ToolEntry",
    "check_entry",
    "default_repo_root",
    "discover_tools",
    "get_entry",
    "load_registry",
    "planner_visible",
    "registry_path",
    "resolve_capability",
    "save_registry",
    "upsert_tool",
]

REGISTRY_RELATIVE_PATH = Path(".colony") / "tool-registry.json"
MAX_EXTRA_DEPTH = 32


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


class ToolEntry(BaseModel):
    """One tool in the catalog."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="The tool's name (its spec's name).")
    purpose: str = Field(default="", description="One line on what the tool is for.")
    location: str = Field(default="", description="Where the implementation lives (a path).")
    capability: str = Field(default="", description="Search key: the spec's first capability key.")
    capability_fqn: str = Field(default="", description="Import path of the ToolCapability class; empty for a stub.")
    extra: dict[str, Any] = Field(
        default_factory=dict, description=f"Anything else (JSON, nested at most {MAX_EXTRA_DEPTH} levels)."
    )

    @field_validator("extra")
    @classmethod
    def _shallow(cls, extra: dict[str, Any]) -> dict[str, Any]:
        if _deeper_than(extra, MAX_EXTRA_DEPTH):
            raise ValueError(f"nested deeper than {MAX_EXTRA_DEPTH} levels")
        return extra

    @property
    def is_stub(self) -> bool:
        """A catalog-only entry with no implementation to mount."""
        return not self.capability_fqn


class _RegistryFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=1, description="Registry file format version.")
    tools: list[ToolEntry] = Field(default_factory=list, description="The entries.")


class _RegistryShell(BaseModel):
    """The file's outer shape, to diagnose entries one at a time."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=1, description="Registry file format version.")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="The entries, unchecked.")


_REGISTRY = TypeAdapter(_RegistryFile)


@dataclass(frozen=True)
class DiscoveredExtensions:
    """What discovery found in a repository."""

    tools: dict[str, ToolEntry] = field(default_factory=dict)


def default_repo_root() -> Path:
    """``COLONY_REPO_ROOT`` if set, else the checkout Colony is installed from."""
    configured = os.environ.get("COLONY_REPO_ROOT")
    return Path(configured) if configured else Path(__file__).resolve().parent.parent


def registry_path(repo_root: Path | None = None) -> Path:
    """Where the repository's catalog file is."""
    return (repo_root or default_repo_root()) / REGISTRY_RELATIVE_PATH


def load_registry(path: Path | None = None) -> dict[str, ToolEntry]:
    """Every entry of the registry file, by name; a clear error names the file and entry."""
    path = path or registry_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RegistryFileError(f"{path}: no tool registry here") from None
    try:
        document = _REGISTRY.validate_json(raw)
    except ValidationError:
        _diagnose(path, raw)
    entries: dict[str, ToolEntry] = {}
    for index, entry in enumerate(document.tools):
        if entry.name in entries:
            raise RegistryFileError(f"{path}: entry {index} ({entry.name!r}): the name is listed twice")
        entries[entry.name] = entry
    return entries


def _diagnose(path: Path, raw: bytes) -> NoReturn:
    """Explain, entry by entry, why a registry file failed to validate."""
    try:
        pydantic_core.from_json(raw)  # bounded nesting: never a RecursionError
    except ValueError as error:
        if "recursion limit" in str(error):
            _too_deep(path, raw, str(error))
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise RegistryFileError(
            f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    try:
        shell = _RegistryShell.model_validate(data)
    except ValidationError as error:
        raise RegistryFileError(f"{path}: not a tool registry: {_first_problem(error)}") from None
    for index, item in enumerate(shell.tools):
        label = f"entry {index}" + (f" ({item['name']!r})" if isinstance(item.get("name"), str) else "")
        try:
            ToolEntry.model_validate(item)
        except ValidationError as error:
            raise RegistryFileError(f"{path}: {label}: {_first_problem(error)}") from None
    raise RegistryFileError(f"{path}: not a tool registry")


def _too_deep(path: Path, raw: bytes, problem: str) -> NoReturn:
    """Name the entry whose nesting the JSON parser refused: the file read up to that point says which."""
    where = re.search(r"line (\d+) column (\d+)", problem)
    label = ""
    if where is not None:
        line, column = int(where[1]), int(where[2])
        offset = sum(len(text) + 1 for text in raw.split(b"\n")[: line - 1]) + column - 1
        try:
            partial = pydantic_core.from_json(raw[: max(offset - 1, 0)], allow_partial=True)
        except ValueError:
            partial = None
        tools = partial.get("tools") if isinstance(partial, dict) else None
        if isinstance(tools, list) and tools and isinstance(tools[-1], dict):
            name = tools[-1].get("name")
            label = f"entry {len(tools) - 1}" + (f" ({name!r})" if isinstance(name, str) else "") + ": "
    raise RegistryFileError(
        f"{path}: {label}nested too deeply ({problem}); an entry's extra may nest {MAX_EXTRA_DEPTH} levels"
    )


def discover_tools(repo_root: Path | None = None) -> DiscoveredExtensions:
    """The repository's catalog, read without importing any tool."""
    return DiscoveredExtensions(tools=load_registry(registry_path(repo_root)))


def planner_visible(entries: dict[str, ToolEntry]) -> dict[str, ToolEntry]:
    """The entries a planner may be offered: stubs left out."""
    return {name: entry for name, entry in entries.items() if not entry.is_stub}


def resolve_capability(entry: ToolEntry | str) -> type[ToolCapability]:
    """Import the class an entry (or an FQN) names; a clear error if it is not a tool.

    What importing the module raises (a missing module, a syntax error, an exception at
    import) becomes a CapabilityResolutionError naming the entry: one broken entry fails alone.
    """
    from colony.capability import ToolCapability

    fqn = entry if isinstance(entry, str) else entry.capability_fqn
    label = f"{entry.name!r} ({fqn})" if isinstance(entry, ToolEntry) else repr(fqn)
    if not fqn:
        raise CapabilityResolutionError(
            f"{entry.name if isinstance(entry, ToolEntry) else fqn!r} is a catalog-only stub"
        )
    module_name, _, attribute = fqn.rpartition(".")
    if not module_name:
        raise CapabilityResolutionError(f"{label} is not a dotted import path (package.module.Class)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise CapabilityResolutionError(f"{label}: cannot import {module_name!r}: {error}") from None
    except Exception as error:  # noqa: BLE001 - a module that raises at import is one broken entry, said so
        raise CapabilityResolutionError(
            f"{label}: importing {module_name!r} raised {type(error).__name__}: {error}"
        ) from None
    cls = getattr(module, attribute, None)
    if cls is None:
        raise CapabilityResolutionError(
            f"{label}: module {module_name!r} has no {attribute!r}; it does not name a ToolCapability subclass"
        )
    if not (isinstance(cls, type) and issubclass(cls, ToolCapability)):
        raise CapabilityResolutionError(f"{label} does not name a ToolCapability subclass")
    return cls


def get_entry(name: str, entries: dict[str, ToolEntry]) -> ToolEntry:
    """The entry called ``name``, or UnknownToolError listing what exists."""
    try:
        return entries[name]
    except KeyError:
        known = ", ".join(sorted(planner_visible(entries))) or "none"
        raise UnknownToolError(f"unknown tool {name!r} (available: {known})") from None


def check_entry(entry: ToolEntry) -> type[ToolCapability] | None:
    """The entry's class, after checking the entry agrees with its spec."""
    if entry.is_stub:
        return None
    cls = resolve_capability(entry)
    if entry.capability not in cls.spec.capabilities:
        raise ToolEntrySpecMismatch(
            f"{entry.name!r}: capability {entry.capability!r} is not in "
            f"{cls.__qualname__}.spec.capabilities {list(cls.spec.capabilities)}"
        )
    if entry.name != cls.spec.name:
        raise ToolEntrySpecMismatch(f"{entry.name!r}: the class's spec is named {cls.spec.name!r}")
    return cls


def upsert_tool(entry: ToolEntry, path: Path | None = None) -> None:
    """Add or replace ``entry`` after checking it against its class's spec."""
    path = path or registry_path()
    check_entry(entry)
    entries = load_registry(path) if path.exists() else {}
    entries[entry.name] = entry
    save_registry(entries, path)


def save_registry(entries: dict[str, ToolEntry], path: Path | None = None) -> None:
    """Write the registry atomically: a temporary file, then a rename."""
    path = path or registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "version": 1,
        "tools": [entries[name].model_dump(mode="json") for name in sorted(entries)],
    }
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tool-registry.", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=2)
            stream.write("\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _first_problem(error: ValidationError) -> str:
    detail = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in detail["loc"]) or "<root>"
    return f"{where}: {detail['msg']}"
