"""The settings reference: every field of ``ColonySettings``, its ``COLONY_*`` variable, default and description."""

from __future__ import annotations

import json
from typing import Any

import mkdocs_gen_files
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from colony.sandbox.config import ENV_VARIABLE as SANDBOX_VARIABLE
from colony.settings import MACHINE_PATHS, ColonySettings
from colony.surfaces.gateway.settings import LIST_VARIABLES, SCALAR_VARIABLES, STRUCTURED_VARIABLES

GATEWAY_VARIABLES = {**SCALAR_VARIABLES, **LIST_VARIABLES, **STRUCTURED_VARIABLES}
MACHINE_VARIABLES = {path.variable for path in MACHINE_PATHS}


def variable(model: type[BaseModel], name: str, info: FieldInfo, prefix: str = "") -> str:
    """The environment variable that sets field ``name`` of ``model`` (nested fields joined by ``__``)."""
    if isinstance(info.validation_alias, str):
        return info.validation_alias
    if prefix:
        return f"{prefix}{name}".upper()
    if issubclass(model, BaseSettings):
        return f"{model.model_config.get('env_prefix', '')}{name}".upper()
    return GATEWAY_VARIABLES.get(name, "") if model is type(default_settings().gateway) else ""


def default(info: FieldInfo) -> str:
    """The field's default as JSON (secrets shown as unset or set, never their value)."""
    value: Any = info.get_default(call_default_factory=True)
    if isinstance(value, SecretStr):
        return "set" if value.get_secret_value() else '`""`'
    if isinstance(value, BaseModel):
        return "see below"
    return f"`{json.dumps(value, default=str)}`"


def rows(model: type[BaseModel], part: str, prefix: str = "") -> list[str]:
    """One table row per field of ``model``; a nested settings model's fields follow, under ``__``."""
    lines: list[str] = []
    nested: list[tuple[str, type[BaseModel], str]] = []
    for name, info in model.model_fields.items():
        env = variable(model, name, info, prefix)
        if part == "sandbox" and name == "roles":
            env = SANDBOX_VARIABLE
        described = " ".join((info.description or "").split()).replace("<", "&lt;").replace("|", "\\|")
        if env in MACHINE_VARIABLES:
            described += " *Per machine: never kept in the settings block.*"
        shown = f"`{env}`" if env else "(block only)"
        lines.append(f"| `{part}.{name}` | {shown} | {default(info)} | {described} |")
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and issubclass(model, BaseSettings):
            nested.append((f"{part}.{name}", annotation, f"{env}__"))
    for path, inner, inner_prefix in nested:
        lines += rows(inner, path, inner_prefix)
    return lines


def default_settings() -> ColonySettings:
    """The settings with every default (nothing read from the environment)."""
    return ColonySettings.model_validate(
        {"kernel": {}, "gateway": {}, "sandbox": {}, "hpc": {}, "policy": {}},
    )


lines = [
    "# Settings",
    "",
    "Generated at build time from `colony.settings.ColonySettings`: every field, the `COLONY_*` variable that "
    "sets it, its default and its description. A process reads these from a `ColonyConfig` block when "
    "`PREFECT_API_URL` names a server that has one (`COLONY_SETTINGS_BLOCK`, default `colony`), else from the "
    "environment; see [Prefect and running at scale](../guides/prefect.md).",
    "",
]
for part, info in ColonySettings.model_fields.items():
    model = info.annotation
    assert isinstance(model, type) and issubclass(model, BaseModel)
    lines += [f"## `{part}`", "", " ".join((info.description or "").split()), ""]
    lines += ["| setting | variable | default | what |", "|---|---|---|---|", *rows(model, part), ""]
with mkdocs_gen_files.open("reference/settings.md", "w") as page:
    page.write("\n".join(lines))
