"""The model an agent names: COLONY_MODEL overrides it, its key is a secret kind, a bad name is a clear error."""

from __future__ import annotations

from typing import Any

import pytest

from colony.agents import resolve_model
from colony.errors import AgentSpecError, MissingSecretError


def test_colony_model_overrides_the_spec(make_agent: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = make_agent(model="openai:gpt-4o-mini")
    assert agent.spec.model_name() == "openai:gpt-4o-mini"
    monkeypatch.setenv("COLONY_MODEL", "test")
    assert resolve_model(agent).system == "test"


def test_no_model_anywhere_is_an_error_naming_both_places(make_agent: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLONY_MODEL", raising=False)
    with pytest.raises(AgentSpecError, match="names no model: set 'model: provider:model' in its spec or COLONY_MODEL"):
        resolve_model(make_agent())


def test_the_api_key_is_a_secret_kind_and_the_endpoint_any_openai_compatible_server(
    make_agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLONY_MODEL", raising=False)
    agent = make_agent(
        model="openai:local-model", model_api_key="local_llm_key", model_base_url="http://127.0.0.1:9/v1"
    )
    with pytest.raises(MissingSecretError, match=r"'local_llm_key'.*COLONY_SECRET_LOCAL_LLM_KEY"):
        resolve_model(agent)
    monkeypatch.setenv("COLONY_SECRET_LOCAL_LLM_KEY", "sk-local")
    model = resolve_model(agent)
    assert model.model_name == "local-model"
    assert model.base_url == "http://127.0.0.1:9/v1/"
    assert model.client.api_key == "sk-local"  # type: ignore[attr-defined]


def test_an_unknown_provider_is_an_agent_spec_error(make_agent: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLONY_MODEL", raising=False)
    with pytest.raises(AgentSpecError, match="model 'nosuch:thing'"):
        resolve_model(make_agent(model="nosuch:thing"))
