"""ColonyConfig: every Colony setting as one Prefect Block, the whole ``ColonySettings`` model.

The block's one field is the model itself, so a setting added to the kernel, the gateway,
the sandbox, HPC or the MCP servers is carried without touching this file. Prefect keeps each ``SecretStr``
of the model encrypted and shows it obfuscated; the paths on disk (``MACHINE_PATHS``) are
left at their defaults when saved and read from each machine's environment when loaded.
"""

from __future__ import annotations

from types import UnionType
from typing import Any, ClassVar, Union, get_args, get_origin

from prefect.blocks.core import Block, schema_extra
from pydantic import BaseModel, ConfigDict, Field, HttpUrl

from colony.settings import ColonySettings

__all__ = ["ColonyConfig"]


def _schema(schema: dict[str, Any], model: type[Block]) -> None:
    """Prefect's block schema, with each secret declared where Prefect's server can find it.

    The server obfuscates a secret by its dotted path through nested objects; a secret
    inside a list (a peer's token) has no such path, so the whole list is declared secret.
    """
    schema_extra(schema, model)
    schema["secret_fields"] = list(dict.fromkeys(_reachable(path, model) for path in schema["secret_fields"]))


def _reachable(path: str, model: type[BaseModel]) -> str:
    """``path`` cut after its first step into a list or a mapping."""
    kept: list[str] = []
    annotation: Any = model
    for name in path.split("."):
        fields = getattr(annotation, "model_fields", None)
        if fields is None:
            break
        kept.append(name)
        annotation = _model_in(fields[name].annotation)
    return ".".join(kept)


def _model_in(annotation: Any) -> Any:
    """The model an annotation holds directly (``Model`` or ``Model | None``), else the annotation."""
    candidates = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return annotation


class ColonyConfig(Block):
    """Colony's settings for every machine of a deployment: kernel, gateway, sandbox roles, HPC, MCP servers.

    `colony blocks save` writes this block from the `COLONY_*` environment; every `colony`
    command and flow that reaches the Prefect API reads it (the block named `colony`, or
    `COLONY_SETTINGS_BLOCK`), and falls back to the environment when there is none.

    Example:
        Load the saved settings and build the kernel from them:
        ```python
        from blocks import ColonyConfig
        from colony.kernel import ColonyKernel

        config = ColonyConfig.load("BLOCK_NAME")
        kernel = ColonyKernel(config.colony_settings().kernel)
        ```
    """

    _block_type_name: ClassVar[str] = "Colony Config"
    _block_type_slug: ClassVar[str] = "colony-config"
    _description: ClassVar[str] = (
        "Every Colony setting in one place: the kernel's database, attestation and budgets, the gateway, "
        "the sandbox roles, the HPC service and the MCP servers with their pinned tools. Paths on disk stay "
        "with each machine."
    )
    _documentation_url = HttpUrl("https://github.com/colony/colony#running-at-scale")
    model_config = ConfigDict(json_schema_extra=_schema)

    settings: ColonySettings = Field(
        description="The kernel, gateway, sandbox, HPC and MCP servers settings; paths on disk are read on each "
        "machine."
    )

    def colony_settings(self) -> ColonySettings:
        """The settings this block holds, with this machine's paths on disk."""
        return self.settings.with_machine_paths()

    @classmethod
    def from_settings(cls, settings: ColonySettings) -> ColonyConfig:
        """A block holding ``settings`` (e.g. the environment's) but none of its paths on disk, ready to save."""
        return cls(settings=settings.without_machine_paths())
