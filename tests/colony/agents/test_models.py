"""The model an agent names: COLONY_MODEL overrides it, its key is a secret kind, a bad name is a clear error."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from colony.agents import resolve_model, run
from colony.errors import AgentModelError, AgentSpecError, MissingSecretError
from tests.services import free_port
from tests.services.model_server import REPLY, FakeChatModelServer


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


def test_a_provider_whose_package_is_missing_is_an_agent_spec_error_naming_the_extra(
    make_agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert importlib.util.find_spec("groq") is None, "this test needs a provider whose package is not installed"
    monkeypatch.delenv("COLONY_MODEL", raising=False)
    needs = r"model 'groq:llama-3.3-70b' needs its provider's package .*pydantic-ai-slim"
    with pytest.raises(AgentSpecError, match=needs):
        resolve_model(make_agent(model="groq:llama-3.3-70b"))


def test_a_base_url_turns_openai_into_chat_completions_but_keeps_an_explicit_api(
    make_agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLONY_MODEL", raising=False)
    endpoint = {"model_base_url": "http://127.0.0.1:9/v1"}
    assert isinstance(resolve_model(make_agent(model="openai:local-model", **endpoint)), OpenAIChatModel)
    responses = resolve_model(make_agent(model="openai-responses:local-model", **endpoint))
    assert isinstance(responses, OpenAIResponsesModel)
    assert responses.base_url == "http://127.0.0.1:9/v1/"


def test_an_overriding_model_needs_only_its_own_credentials(make_agent: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLONY_SECRET_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COLONY_MODEL", "test")
    agent = make_agent(
        model="openai:gpt-4o-mini", model_api_key="openai_api_key", model_base_url="http://127.0.0.1:9/v1"
    )
    assert resolve_model(agent).system == "test"


def _local(make_agent: Any, monkeypatch: pytest.MonkeyPatch, base_url: str) -> Any:
    monkeypatch.delenv("COLONY_MODEL", raising=False)
    monkeypatch.setenv("COLONY_SECRET_LOCAL_LLM_KEY", "sk-local")
    return make_agent(model="openai:local-model", model_api_key="local_llm_key", model_base_url=base_url)


async def test_a_base_url_speaks_chat_completions_to_a_server_that_serves_only_those(
    make_agent: Any, monkeypatch: pytest.MonkeyPatch, fake_chat_model: FakeChatModelServer
) -> None:
    agent = _local(make_agent, monkeypatch, f"{fake_chat_model.url}/v1")
    result = await run(agent, "say hello")
    assert result.output == REPLY
    assert fake_chat_model.requests == ["POST /v1/chat/completions"]


async def test_a_model_server_that_answers_garbage_is_one_line_naming_model_and_url(
    make_agent: Any, monkeypatch: pytest.MonkeyPatch, fake_chat_model: FakeChatModelServer
) -> None:
    fake_chat_model.garbage = True
    agent = _local(make_agent, monkeypatch, f"{fake_chat_model.url}/v1")
    with pytest.raises(AgentModelError) as raised:
        await run(agent, "say hello")
    message = str(raised.value)
    assert f"model 'local-model' at {fake_chat_model.url}/v1/ failed: " in message and "\n" not in message


async def test_a_model_server_that_is_down_is_one_line_naming_model_and_url(
    make_agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    agent = _local(make_agent, monkeypatch, url)
    with pytest.raises(AgentModelError, match=rf"model 'local-model' at {url}/ failed: ") as raised:
        await run(agent, "say hello")
    assert "\n" not in str(raised.value)
