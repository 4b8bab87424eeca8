"""The public surface of colony.sandbox is pinned, so a change to it is deliberate."""

import colony.sandbox


def test_exported_names() -> None:
    assert sorted(colony.sandbox.__all__) == [
        "ContainerPlan",
        "ImageRole",
        "SandboxConfig",
        "SandboxOverrides",
        "SandboxResult",
        "SandboxSession",
        "SandboxToolCapability",
    ]
    for name in colony.sandbox.__all__:
        assert getattr(colony.sandbox, name).__module__.startswith("colony.sandbox.")
