"""Cedar policies read an upstream tool's arguments as its server's schema types them."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony.errors import PolicyDeniedError, ToolInputError
from colony.kernel import ColonyKernel
from colony.policy import PolicySettings
from colony.runtime import CallRequest, KernelProvider, Principal, Runtime
from tests.services.upstream import Upstream, hostile_stdio

ENGINEER = Principal.of("engineer-1", ["*"])
RULES = """
@id("no-secret-lookups")
@reason("secrets are looked up in the vault")
forbid(principal, action, resource) when { context.input has key && context.input.key == "secret" };

permit(principal, action, resource);
"""


async def test_a_policy_reading_the_input_decides_an_upstream_call(upstream: Upstream, tmp_path: Path) -> None:
    # A policy that reads context.input made every upstream call fail with pydantic's own error:
    # the arguments were typed by the action's (parameterless) Python signature, not the server's schema.
    upstream.connect({"hostile": hostile_stdio(env={"HOSTILE_STATE": str(tmp_path / "state")}, timeout=5)})
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "lookups.cedar").write_text(RULES)
    runtime = Runtime(kernels=KernelProvider(ColonyKernel.from_env()), policies=PolicySettings(directory=policies))
    try:
        allowed = await runtime.call(CallRequest("hostile__lookup", {"key": "k"}), ENGINEER)
        assert allowed.result == {"result": "value of k"}
        with pytest.raises(PolicyDeniedError, match="no-secret-lookups"):
            await runtime.call(CallRequest("hostile__lookup", {"key": "secret"}), ENGINEER)
        with pytest.raises(ToolInputError, match="invalid arguments for lookup: key: 5 is not of type 'string'"):
            await runtime.call(CallRequest("hostile__lookup", {"key": 5}), ENGINEER)
    finally:
        await runtime.aclose()
