"""A side-effecting sample tool with a declared secret argument, for the approval surface tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from colony import LocalToolCapability, ToolSpec, action_executor
from colony.kernel import KernelSettings

SECRET = "sk-live-do-not-show-0123456789"
WRITE_ONLY: dict[str, object] = {"writeOnly": True}  # JSON Schema's mark of a value sent but never shown


class SignedNote(LocalToolCapability):
    """Append a note signed with an API key (the key is a declared secret)."""

    spec = ToolSpec(
        name="signed_note",
        description="Append one signed line of text to the colony's notes file.",
        capabilities=("signed_note",),
        side_effecting=True,
        policy_tags=("writes_files", "no_network"),
    )

    @action_executor
    def signed_note(
        self,
        *,
        note: Annotated[str, Field(min_length=1, description="The line to append.")],
        api_key: Annotated[
            str, Field(min_length=1, description="The signing key.", json_schema_extra={"writeOnly": True})
        ],
    ) -> dict[str, str]:
        """Append ``note`` to the notes file under COLONY_HOME.

        Args:
            note: The line to append.
            api_key: The key that signs it (never shown to a reviewer).

        Returns:
            {"path": the notes file}.
        """
        path = Path(KernelSettings.from_env().checked_home()) / "notes.txt"
        with path.open("a", encoding="utf-8") as stream:
            stream.write(note[:200].replace("\n", " ") + "\n")
        return {"path": str(path)}
