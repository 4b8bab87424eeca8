"""POST /v1/tool_call in the OpenAPI document: the HotPath answers it outside FastAPI's routing, so it is added here."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from colony.surfaces.gateway.models import ToolCallRequest, ToolCallResponse

__all__ = ["ERROR_MEANINGS", "document_tool_call"]

ERROR_MEANINGS = {
    400: "Bad tool arguments, naming each field at fault.",
    401: "Missing or unknown bearer token.",
    403: "The principal lacks a capability token the tool requires (error.missing), or names an agent it is not.",
    404: "No such tool on the chosen node(s).",
    503: "The tool's catalog entry failed to load (error.tool, error.reason), or a service it needs is down.",
    408: "The request body did not arrive in time.",
    409: "The gate refused a side-effecting call (error.verdict), or an approval was already decided or used.",
    413: "Request body or tool arguments over the cap.",
    415: "The request body is not declared as application/json.",
    421: "The Host header names another server (DNS rebinding is refused).",
    422: "The request body does not fit ToolCallRequest.",
    429: "The caller is over its rate or concurrency limit for the tool, or its client address over its share "
    "of connections (Retry-After says when to retry).",
    504: "The tool or a peer did not answer in time.",
}


def document_tool_call(app: FastAPI, summary: str) -> None:
    """Publish POST /v1/tool_call in ``app``'s OpenAPI document, with its models and answers."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in (ToolCallRequest, ToolCallResponse):
                definition = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(definition.pop("$defs", {}))
                components[model.__name__] = definition
            answer = {"application/json": {"schema": {"$ref": "#/components/schemas/ToolCallResponse"}}}
            responses = {
                "200": {"description": "The tool's result.", "content": answer},
                "202": {
                    "description": "Held for a person: approval names the request, its url and how to resolve it.",
                    "content": answer,
                },
            }
            for status, meaning in ERROR_MEANINGS.items():
                responses[str(status)] = {"description": meaning, "content": answer}
            request = {"application/json": {"schema": {"$ref": "#/components/schemas/ToolCallRequest"}}}
            schema["paths"]["/v1/tool_call"] = {
                "post": {
                    "tags": ["tools"],
                    "summary": "Tool Call",
                    "description": summary,
                    "operationId": "tool_call_v1_tool_call_post",
                    "requestBody": {"required": True, "content": request},
                    "responses": responses,
                }
            }
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]
