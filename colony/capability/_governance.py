"""What an action's class makes of it: whether it changes the world, passes the gate, may be cached or retried.

Decided once, when the class is created, from what the action declares and the class's
ToolSpec, and stored on the class's own (frozen) ActionDefinition: the runtime, the
task factory, the surfaces and the agents read these flags and never recompute them,
so patching a spec or a flag afterwards changes nothing, and a subclass (deciding its
own copies) never changes its parent's answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from colony.spec import Determinism, ExecutionLocality

if TYPE_CHECKING:
    from colony.capability._actions import ActionDefinition
    from colony.spec import ToolSpec

__all__ = ["PRECONDITIONS_ACTION", "decide", "lowered"]

#: The live preconditions report every tool answers: a read of its own state, never governed or cached.
PRECONDITIONS_ACTION = "check_preconditions"


def decide(
    definition: ActionDefinition, class_side_effecting: bool, spec: ToolSpec | None, *, governable: bool
) -> ActionDefinition:
    """The definition with its flags decided for one class.

    Args:
        definition: The action as declared (its ``declared`` options).
        class_side_effecting: The class's flag, for an action that declares none.
        spec: The class's ToolSpec; None for a plain capability or a tool base without one.
        governable: Whether calls of the class pass the gate at all (a tool's do, a plain capability's not).

    An action is governed when it changes the world, or spends money or shared capacity (an
    HPC job, a paid call, budgeted by the gate even when it writes nothing the caller owns).
    It is cached when deterministic and free of side effects, and retried when free of side
    effects or declared idempotent.
    """
    declared = definition.declared.side_effecting
    side_effecting = class_side_effecting if declared is None else declared
    report = definition.name == PRECONDITIONS_ACTION
    costly = spec is not None and (spec.execution_locality is ExecutionLocality.HPC or spec.cost_model.usd_per_call > 0)
    deterministic = spec is not None and spec.determinism is Determinism.DETERMINISTIC
    return replace(
        definition,
        side_effecting=side_effecting,
        governed=governable and not report and (side_effecting or costly),
        cacheable=deterministic and not side_effecting and not report,
        retriable=not side_effecting or definition.declared.idempotent is True,
    )


def lowered(inherited: ActionDefinition | None, decided: ActionDefinition) -> bool:
    """Whether a subclass's decision would make an action its base governs ungoverned (refused)."""
    return inherited is not None and inherited.governed and not decided.governed
