"""An HPC tool's hooks, in both the forms they are written: ours and seed 000's.

``_build_input_artifacts`` turns a call's arguments into the job's input files:

- ``(self, call_args, workdir) -> Iterable[InputArtifact]``: the tool writes each
  file under ``workdir`` and describes it (key, path, content type). Large
  inputs never sit in memory.
- ``(self, call_args) -> Iterable[tuple[InputArtifactDescriptor, bytes, str]]``
  (seed 000's sample): the tool returns each file's descriptor, its bytes and
  its MIME type; the bytes are written to the scratch directory for it, and the
  descriptor's ``size_bytes`` must equal their length.

``_parse_output_artifacts(self, artifacts)`` receives the downloaded outputs as
output key -> local ``Path``. ``_hpc_domain_tags()`` adds tags exactly as
``_domain_tags()`` does. A hook in any other shape is refused when the class
is created, naming these forms: no hook is ever silently ignored.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from colony.errors import ToolExecutionError
from colony.hpc.cycle import InputArtifact
from colony.hpc.models import ArtifactDescriptor

__all__ = ["BUILD_FORMS", "InputArtifactDescriptor", "build_arity", "check_hooks", "materialize_inputs"]

#: Seed 000's name for an input's declaration: key, size and (optionally) content type.
InputArtifactDescriptor = ArtifactDescriptor

BUILD_FORMS = (
    "`def _build_input_artifacts(self, call_args, workdir) -> Iterable[InputArtifact]` (write files under workdir) "
    "or `def _build_input_artifacts(self, call_args) -> Iterable[tuple[InputArtifactDescriptor, bytes, str]]`"
)
_PARSE_FORM = "`def _parse_output_artifacts(self, artifacts)` (artifacts: output key -> local Path)"
_TAGS_FORM = "`def _hpc_domain_tags(self) -> frozenset[str]`"


def _positional(function: Any) -> tuple[int, bool]:
    """(positional parameters after ``self``, whether it takes ``*args``)."""
    parameters = list(inspect.signature(function).parameters.values())[1:]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    count = sum(parameter.kind in kinds for parameter in parameters)
    return count, any(parameter.kind is inspect.Parameter.VAR_POSITIONAL for parameter in parameters)


def _refuse(cls: type, hook: str, problem: str, form: str) -> TypeError:
    return TypeError(f"{cls.__qualname__}.{hook} {problem}; write it as {form}")


def build_arity(cls: type) -> int:
    """How ``cls._build_input_artifacts`` is called: 2 (ours) or 1 (seed 000's).

    Raises:
        TypeError: neither form, or a coroutine function.
    """
    hook = cls._build_input_artifacts  # type: ignore[attr-defined]
    if inspect.iscoroutinefunction(hook) or inspect.isasyncgenfunction(hook):
        raise _refuse(cls, "_build_input_artifacts", "is async (it must be a plain def)", BUILD_FORMS)
    count, variadic = _positional(hook)
    if variadic or count == 2:
        return 2
    if count == 1:
        return 1
    raise _refuse(cls, "_build_input_artifacts", f"takes {count} positional argument(s)", BUILD_FORMS)


def check_hooks(cls: type) -> None:
    """Refuse, at class creation, a hook this base would not call as written."""
    build_arity(cls)
    parse = cls._parse_output_artifacts  # type: ignore[attr-defined]
    count, variadic = _positional(parse)
    if inspect.iscoroutinefunction(parse):
        raise _refuse(cls, "_parse_output_artifacts", "is async (it must be a plain def)", _PARSE_FORM)
    if not variadic and count != 1:
        raise _refuse(cls, "_parse_output_artifacts", f"takes {count} positional argument(s)", _PARSE_FORM)
    tags = cls._hpc_domain_tags  # type: ignore[attr-defined]
    count, _ = _positional(tags)
    if inspect.iscoroutinefunction(tags) or count:
        raise _refuse(cls, "_hpc_domain_tags", "must take no arguments and be a plain def", _TAGS_FORM)


def materialize_inputs(tool: str, returned: Iterable[Any], arity: int, workdir: Path) -> list[InputArtifact]:
    """The job's inputs from what ``_build_input_artifacts`` returned, writing seed-form bytes under ``workdir``.

    Raises:
        ToolExecutionError: the hook returned something neither form allows (the message names the item).
    """
    if isinstance(returned, str | bytes) or not isinstance(returned, Iterable):
        raise _bad_return(tool, f"returned {type(returned).__name__}, not an iterable of inputs")
    if arity == 2:
        artifacts = list(returned)
        for index, item in enumerate(artifacts):
            if not isinstance(item, InputArtifact):
                raise _bad_return(tool, f"item {index} is a {type(item).__name__}, not an InputArtifact")
        return artifacts
    return [_write(tool, index, item, workdir) for index, item in enumerate(returned)]


def _write(tool: str, index: int, item: Any, workdir: Path) -> InputArtifact:
    if not (isinstance(item, tuple) and len(item) == 3):
        raise _bad_return(tool, f"item {index} is not a (InputArtifactDescriptor, bytes, mime) tuple")
    descriptor, data, mime = item
    if not isinstance(descriptor, ArtifactDescriptor):
        raise _bad_return(tool, f"item {index}: {type(descriptor).__name__} is not an InputArtifactDescriptor")
    if not isinstance(data, bytes | bytearray | memoryview):
        raise _bad_return(tool, f"item {index} ({descriptor.key}): the content is a {type(data).__name__}, not bytes")
    if not isinstance(mime, str) or not mime:
        raise _bad_return(tool, f"item {index} ({descriptor.key}): the MIME type must be a non-empty string")
    if "content_type" in descriptor.model_fields_set and descriptor.content_type != mime:
        raise _bad_return(
            tool, f"{descriptor.key}: the descriptor says {descriptor.content_type!r} but the tuple says {mime!r}"
        )
    content = bytes(data)
    if descriptor.size_bytes != len(content):
        raise _bad_return(
            tool, f"{descriptor.key}: size_bytes is {descriptor.size_bytes} but the content is {len(content)} bytes"
        )
    path = workdir / descriptor.key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return InputArtifact(key=descriptor.key, path=path, content_type=mime)


def _bad_return(tool: str, problem: str) -> ToolExecutionError:
    return ToolExecutionError(f"{tool}: _build_input_artifacts {problem}; it must return {BUILD_FORMS}")
