"""Tool-definition pinning: a description cannot silently change under an agent that approved it.

``colony tools pin`` records, in each catalog entry's ``extra["definition_pin"]``,
the tool's version and the hash of the definition the surfaces serve.
``colony tools check`` then reports a tool whose served definition changed
while its version did not grow (semantic-version precedence: a lower version
is a downgrade, always an error), and one whose change breaks callers (see
``colony.surfaces.contract``) without a MAJOR bump, as seed 004's versioning asks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from colony.catalog import ToolEntry, planner_visible, resolve_capability
from colony.surfaces.contract import breaking_changes, contract_of
from colony.surfaces.definitions import served_definition

__all__ = ["PIN_KEY", "PinState", "PinStatus", "check_pins", "pin_entries", "semver_key"]

PIN_KEY = "definition_pin"
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


class PinState(StrEnum):
    """How a tool's served definition compares with its pin."""

    PINNED = "pinned"
    UNPINNED = "unpinned"
    REPIN_NEEDED = "repin_needed"
    CHANGED_WITHOUT_BUMP = "changed_without_bump"
    BREAKING_WITHOUT_MAJOR = "breaking_without_major"
    DOWNGRADED = "downgraded"
    BAD_PIN = "bad_pin"

    @property
    def is_error(self) -> bool:
        """Whether ``colony tools check`` fails on this state."""
        return self in (
            PinState.CHANGED_WITHOUT_BUMP,
            PinState.BREAKING_WITHOUT_MAJOR,
            PinState.DOWNGRADED,
            PinState.BAD_PIN,
        )


@dataclass(frozen=True)
class PinStatus:
    """One tool's pin check."""

    name: str
    state: PinState
    message: str


def semver_key(version: str) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
    """A sort key giving semantic-version precedence (semver.org, item 11); build metadata is ignored.

    Raises:
        ValueError: ``version`` is not MAJOR.MINOR.PATCH[-pre][+build].
    """
    match = _SEMVER.match(version)
    if match is None:
        raise ValueError(f"{version!r} is not a semantic version (MAJOR.MINOR.PATCH)")
    major, minor, patch, pre = match.groups()
    identifiers = tuple((0, int(part)) if part.isdigit() else (1, part) for part in (pre or "").split(".") if part)
    # A release sorts after every pre-release of the same MAJOR.MINOR.PATCH; numeric identifiers before others.
    return int(major), int(minor), int(patch), 0 if pre else 1, identifiers


def _current(entry: ToolEntry) -> dict[str, Any]:
    cls = resolve_capability(entry)
    definition = served_definition(cls)
    return {"version": cls.spec.version, "sha256": definition.sha256, "contract": contract_of(definition)}


def pin_entries(entries: Mapping[str, ToolEntry]) -> dict[str, ToolEntry]:
    """Every entry, the implemented ones with their current definition pinned."""
    pinned = dict(entries)
    for name, entry in planner_visible(dict(entries)).items():
        pinned[name] = entry.model_copy(update={"extra": {**entry.extra, PIN_KEY: _current(entry)}})
    return pinned


def check_pins(entries: Mapping[str, ToolEntry]) -> list[PinStatus]:
    """Each implemented entry's served definition against its pin."""
    statuses = []
    for name, entry in sorted(planner_visible(dict(entries)).items()):
        now = _current(entry)
        pin = entry.extra.get(PIN_KEY)
        if not isinstance(pin, dict):
            statuses.append(PinStatus(name, PinState.UNPINNED, f"{name}: not pinned (run `colony tools pin`)"))
        else:
            statuses.append(_compare(name, pin, now))
    return statuses


def _compare(name: str, pin: dict[str, Any], now: dict[str, Any]) -> PinStatus:
    pinned_version = str(pin.get("version"))
    try:
        current, pinned = semver_key(now["version"]), semver_key(pinned_version)
    except ValueError as error:
        return PinStatus(
            name, PinState.BAD_PIN, f"{name}: its pin's version is unusable: {error}; run `colony tools pin`"
        )
    if current < pinned:
        return PinStatus(
            name,
            PinState.DOWNGRADED,
            f"{name}: version went down from the pinned {pinned_version} to {now['version']}; a version never "
            f"goes back: release it as a version above {pinned_version}, then run `colony tools pin`",
        )
    if pin.get("sha256") == now["sha256"]:
        return PinStatus(name, PinState.PINNED, f"{name}: v{now['version']} matches its pin")
    if current == pinned:
        return PinStatus(
            name,
            PinState.CHANGED_WITHOUT_BUMP,
            f"{name}: its served definition (name, description or schemas) changed but its version is "
            f"still {now['version']}; bump spec.version, then run `colony tools pin` "
            f"(pinned {str(pin.get('sha256'))[:12]}, now {now['sha256'][:12]})",
        )
    contract = pin.get("contract")
    breaking = breaking_changes(contract, now["contract"]) if isinstance(contract, dict) else []
    if breaking and not _major_bump(current, pinned):
        return PinStatus(
            name,
            PinState.BREAKING_WITHOUT_MAJOR,
            f"{name}: {'; '.join(breaking)}: a change that breaks callers needs a MAJOR version "
            f"(pinned {pinned_version}, now {now['version']}); release it as {pinned[0] + 1}.0.0 or keep the "
            "contract, then run `colony tools pin`",
        )
    return PinStatus(
        name,
        PinState.REPIN_NEEDED,
        f"{name}: v{pinned_version} -> v{now['version']} with a new definition; run `colony tools pin` to record it",
    )


def _major_bump(current: tuple[Any, ...], pinned: tuple[Any, ...]) -> bool:
    """Whether ``current`` may break callers of ``pinned``: a new MAJOR (or, before 1.0.0, a new MINOR; semver 4)."""
    if pinned[0] == 0:
        return current[:2] > pinned[:2]
    return bool(current[0] > pinned[0])
