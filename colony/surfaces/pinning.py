"""Tool-definition pinning: a description cannot silently change under an agent that approved it.

``colony tools pin`` records, in each catalog entry's ``extra["definition_pin"]``,
the tool's version and the hash of the definition the surfaces serve.
``colony tools check`` then reports a tool whose served definition changed
while its version did not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from colony.catalog import ToolEntry, planner_visible, resolve_capability
from colony.surfaces.definitions import served_definition

__all__ = ["PIN_KEY", "PinState", "PinStatus", "check_pins", "pin_entries"]

PIN_KEY = "definition_pin"


class PinState(StrEnum):
    """How a tool's served definition compares with its pin."""

    PINNED = "pinned"
    UNPINNED = "unpinned"
    REPIN_NEEDED = "repin_needed"
    CHANGED_WITHOUT_BUMP = "changed_without_bump"


@dataclass(frozen=True)
class PinStatus:
    """One tool's pin check."""

    name: str
    state: PinState
    message: str


def _current(entry: ToolEntry) -> dict[str, str]:
    cls = resolve_capability(entry)
    return {"version": cls.spec.version, "sha256": served_definition(cls).sha256}


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
        elif pin.get("sha256") == now["sha256"]:
            statuses.append(PinStatus(name, PinState.PINNED, f"{name}: v{now['version']} matches its pin"))
        elif pin.get("version") == now["version"]:
            statuses.append(
                PinStatus(
                    name,
                    PinState.CHANGED_WITHOUT_BUMP,
                    f"{name}: its served definition (name, description or schemas) changed but its version is "
                    f"still {now['version']}; bump spec.version, then run `colony tools pin` "
                    f"(pinned {str(pin.get('sha256'))[:12]}, now {now['sha256'][:12]})",
                )
            )
        else:
            statuses.append(
                PinStatus(
                    name,
                    PinState.REPIN_NEEDED,
                    f"{name}: v{pin.get('version')} -> v{now['version']} with a new definition; "
                    "run `colony tools pin` to record it",
                )
            )
    return statuses
