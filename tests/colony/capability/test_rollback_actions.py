"""``rollback_actions``: a capability names, per action, the action that undoes it."""

from __future__ import annotations

import pytest

from colony import LocalToolCapability, ToolSpec, action_executor


def test_a_rollback_naming_a_missing_action_fails_at_class_creation() -> None:
    with pytest.raises(TypeError, match=r"rollback_actions names \['undo_write'\]"):

        class Writer(LocalToolCapability):
            spec = ToolSpec(name="writer", capabilities=("write",), side_effecting=True)
            rollback_actions = {"write": "undo_write"}

            @action_executor
            def write(self, *, text: str) -> str:
                """Write.

                Args:
                    text: What.

                Returns:
                    The text.
                """
                return text


def test_a_declared_rollback_is_kept_on_the_class() -> None:
    class Writer(LocalToolCapability):
        spec = ToolSpec(name="writer", capabilities=("write",), side_effecting=True)
        rollback_actions = {"write": "erase"}

        @action_executor
        def write(self, *, text: str) -> str:
            """Write.

            Args:
                text: What.

            Returns:
                The text.
            """
            return text

        @action_executor
        def erase(self, *, text: str) -> str:
            """Erase.

            Args:
                text: What.

            Returns:
                The text.
            """
            return text

    assert Writer.rollback_actions == {"write": "erase"}
    assert LocalToolCapability.rollback_actions == {}
