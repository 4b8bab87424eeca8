"""Runtime.call's steps: caps, resolve by name only, permit, identity, validate, timeout, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from colony.errors import (
    CallTimeoutError,
    CapabilityDeniedError,
    IdentityError,
    MissingSecretError,
    PayloadTooLargeError,
    ToolExecutionError,
    ToolInputError,
    UnknownActionError,
    UnknownToolError,
)
from colony.runtime import LOCAL_OPERATOR, CallRequest, CallStatus, Principal, Runtime
from colony.runtime.runtime import check_arguments
from tests.colony.runtime.conftest import ENTRIES, write_registry

MakeRuntime = Callable[..., Runtime]


@pytest.mark.parametrize("name", ["sleeper", "async_sleeper"])
async def test_a_slow_tool_times_out(make_runtime: MakeRuntime, name: str) -> None:
    runtime = make_runtime(timeout_seconds=0.3)
    outcome = await runtime.call(CallRequest(name, {"seconds": 0.01}), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.EXECUTED and outcome.result == {"slept": 0.01}
    with pytest.raises(CallTimeoutError, match=rf"{name} did not finish within 0\.3 s"):
        await runtime.call(CallRequest(name, {"seconds": 2}), LOCAL_OPERATOR)


async def test_a_tools_own_bug_is_an_execution_error(make_runtime: MakeRuntime) -> None:
    with pytest.raises(ToolExecutionError, match="sleeper failed: RuntimeError: boom"):
        await make_runtime().call(CallRequest("sleeper", {"seconds": 0, "explode": True}), LOCAL_OPERATOR)


async def test_arguments_must_be_a_small_json_object(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(max_argument_bytes=64)
    with pytest.raises(ToolInputError, match="must be a JSON object, got list"):
        await runtime.call(CallRequest("sleeper", [0.1]), LOCAL_OPERATOR)
    with pytest.raises(PayloadTooLargeError, match="the cap is 64 bytes"):
        await runtime.call(CallRequest("sleeper", {"seconds": 0, "padding": "x" * 100}), LOCAL_OPERATOR)
    assert check_arguments({"a": 1}, 64) == {"a": 1}


def test_arguments_that_cannot_be_json_are_the_callers_mistake() -> None:
    cycle: dict[str, object] = {}
    cycle["self"] = cycle
    deep: dict[str, object] = {}
    inner = deep
    for _ in range(10_000):
        inner["a"] = inner = {}
    for arguments in (cycle, deep):
        with pytest.raises(ToolInputError, match="cannot be encoded as JSON") as raised:
            check_arguments(arguments, 1 << 20)
        assert [error.field for error in raised.value.errors] == ["tool_args"]


async def test_bad_arguments_name_each_field(make_runtime: MakeRuntime) -> None:
    with pytest.raises(ToolInputError) as raised:
        await make_runtime().call(CallRequest("unit_convert", {"value": "ten"}), LOCAL_OPERATOR)
    assert {"value", "from_unit", "to_unit"} <= {error.field for error in raised.value.errors}


async def test_only_catalog_names_resolve_and_no_path_is_imported(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(["unit_convert"])
    sys.modules.pop("this", None)
    for name in ("this.Anything", "tools.shell_exec.ShellExec", "tests.doubles.LedgerToolDouble"):
        with pytest.raises(UnknownToolError, match="available: unit_convert"):
            await runtime.call(CallRequest(name, {}), LOCAL_OPERATOR)
    assert "this" not in sys.modules
    with pytest.raises(UnknownActionError, match="has no action 'teleport'"):
        await runtime.call(CallRequest("unit_convert", {}, action="teleport"), LOCAL_OPERATOR)


async def test_a_principal_calls_only_the_tools_its_tokens_grant(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime()
    limited = Principal.of("engineer-1", ["tool:unit_convert"])
    request = CallRequest("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"})
    assert (await runtime.call(request, limited)).result["value"] == 1000
    with pytest.raises(CapabilityDeniedError, match="tool:sleeper") as denied:
        await runtime.call(CallRequest("sleeper", {"seconds": 0}), limited)
    assert denied.value.missing == ["tool:sleeper"]
    assert [tool.name for tool in runtime.visible_tools(limited)] == ["unit_convert"]
    assert len(runtime.visible_tools(Principal.of("any", ["tool:*"]))) == len(ENTRIES)


async def test_only_an_operator_acts_for_another_agent(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime()
    request = CallRequest("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}, agent_id="engineer-2")
    with pytest.raises(IdentityError, match="cannot act as agent 'engineer-2'"):
        await runtime.call(request, Principal.of("engineer-1", ["*"]))
    outcome = await runtime.call(request, LOCAL_OPERATOR)
    assert outcome.acting.agent_id == "engineer-2" and outcome.acting.acted_by == "local-operator"


async def test_a_declared_secret_is_resolved_before_the_tool_runs(
    make_runtime: MakeRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_registry(tmp_path / "secret", [])
    entry = {"name": "secret_double", "capability": "whoami", "capability_fqn": "tests.doubles.SecretToolDouble"}
    path.write_text(json.dumps({"version": 1, "tools": [entry]}))
    from colony.runtime import Catalog

    runtime = Runtime(Catalog(path), kernels=make_runtime().kernels)
    monkeypatch.delenv("COLONY_SECRET_DOUBLE_TOKEN", raising=False)
    with pytest.raises(MissingSecretError, match="COLONY_SECRET_DOUBLE_TOKEN"):
        await runtime.call(CallRequest("secret_double", {}), LOCAL_OPERATOR)
    monkeypatch.setenv("COLONY_SECRET_DOUBLE_TOKEN", "sk-test")
    assert (await runtime.call(CallRequest("secret_double", {}), LOCAL_OPERATOR)).status is CallStatus.EXECUTED
