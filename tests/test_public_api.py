"""The public surface is small and deliberate: changing it is a visible decision."""

import colony
import colony.capability
import colony.errors


def test_top_level_exports_are_pinned():
    assert sorted(colony.__all__) == [
        "AgentCapability",
        "ColonyError",
        "LocalToolCapability",
        "ToolCapability",
        "ToolInputError",
        "ToolSpec",
        "action_executor",
    ]
    for name in colony.__all__:
        assert getattr(colony, name) is not None


def test_every_error_descends_from_colony_error():
    for name in colony.errors.__all__:
        value = getattr(colony.errors, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, colony.errors.ColonyError), name


def test_error_tree_in_docstring_names_every_error():
    tree = colony.errors.__doc__ or ""
    for name in colony.errors.__all__:
        value = getattr(colony.errors, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert name in tree, f"{name} is missing from the tree drawn in colony/errors.py"


def test_agent_exports_are_pinned():
    import colony.agents

    assert sorted(colony.agents.__all__) == [
        "Agent",
        "AgentOutput",
        "AgentSpec",
        "Approval",
        "ColonyToolset",
        "HeldRun",
        "MODEL_ENV",
        "ToolOverride",
        "assemble",
        "colony_toolset",
        "decisions",
        "load_agent_spec",
        "model_agent",
        "model_failure",
        "resolve_model",
        "run",
        "steer",
    ]
