"""The policies in force: loaded and validated against the catalog's schema, reloaded when files change.

A reload that fails (a file does not parse, a policy names a field no tool has) keeps the
last good set in force and keeps the error for ``colony policy validate`` and the logs; a
call is never decided by a half-read set. Before any set was good, every call is refused
with the error (fail closed), naming the file and line.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import cedarpy

from colony.errors import PolicyError
from colony.policy.engine import PolicyIndex, scoped_tools
from colony.policy.schema import ToolFacts, catalog_schema
from colony.policy.source import PolicySource, Stamp, policy_set, read_policies, stamp

__all__ = ["BASELINE", "PolicyStore", "compile_policies"]

logger = logging.getLogger(__name__)

BASELINE = '@id("baseline")\npermit(principal, action, resource);\n'
"""What a directory without policy files means: every call goes on to the gate, as without policies."""


def compile_policies(directory: Path, tools: Iterable[ToolFacts], generation: int = 0) -> PolicyIndex:
    """The policies of ``directory`` validated against the schema of ``tools``.

    Raises:
        PolicyError: A file does not parse, or a policy does not fit the schema (naming file and line).
    """
    sources = read_policies(directory) if directory.is_dir() else []
    if not sources:  # the baseline fits every catalog: nothing to validate
        return PolicyIndex([_baseline()], generation)
    tools = list(tools)
    active, dormant = split_dormant(sources, tools)
    validate(active, tools)
    return PolicyIndex(active, generation, dormant=dormant)


def split_dormant(sources: list[PolicySource], tools: list[ToolFacts]) -> tuple[list[PolicySource], list[PolicySource]]:
    """The policies that can apply here, and those that only name tools this catalog does not serve.

    A policy set is shared by machines whose catalogs differ (or a tool's entry fails to load):
    a rule about a tool that is not here cannot match any call, so it waits, dormant, instead of
    failing the whole set. A tool that is here but has no such action is still an error.
    """
    served = {tool.name for tool in tools}
    active, dormant = [], []
    for source in sources:
        named = scoped_tools(source)
        if named and all(name not in served for name in named):
            dormant.append(source)
        else:
            active.append(source)
    return active, dormant


def validate(sources: list[PolicySource], tools: Iterable[ToolFacts]) -> None:
    """Raise PolicyError for the first policy the catalog's schema rejects, naming its file and line."""
    for source in sources:
        if source.hold is not None and source.forbids:
            raise PolicyError(
                f"{source.where}: @hold belongs on a permit (a matching forbid refuses the call outright)",
                file=source.file,
                line=source.line,
            )
    schema = json.dumps(catalog_schema(tools))
    annotated = {
        source.id: dataclasses.replace(source.policy, annotations={**source.policy.annotations, "id": source.id})
        for source in sources
    }
    text = str(policy_set(annotated))
    result = cedarpy.validate_policies(text, schema)
    if result.validation_passed:
        return
    by_id = {source.id: source for source in sources}
    ids = result.id_annotations_by_policy_id
    problems: list[tuple[PolicySource | None, str]] = []
    for error in result.errors:
        found = by_id.get(ids.get(error.policy_id, ""))
        where, named = (found.where, found.id) if found else ("policies", error.policy_id)
        problems.append((found, f"{where}: {error.error.replace(f'`{error.policy_id}`', f'`{named}`')}"))
    first = problems[0][0]
    raise PolicyError(
        "; ".join(text for _, text in problems),
        file=first.file if first else "",
        line=first.line if first else 0,
    )


def _baseline() -> PolicySource:
    policy = cedarpy.policies_to_pst(BASELINE).static_policies["policy0"]
    return PolicySource("baseline", "<baseline>", 1, dataclasses.replace(policy, id="baseline"))


SETTLE_NS = 50_000_000
"""How long a changed file must stay unchanged before it is read: a half-written file is never the policy set."""


class PolicyStore:
    """The policy set in force for one catalog, reloaded at most every ``check_seconds`` when files changed.

    ``generation`` gives the catalog's generation (the schema is rebuilt when it moves), ``tools``
    its tools' facts (read only when there are policy files to validate).
    """

    def __init__(
        self,
        directory: Path,
        generation: Callable[[], int],
        tools: Callable[[], list[ToolFacts]],
        *,
        check_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = directory
        self.generation = generation
        self.tools = tools
        self.check_seconds = check_seconds
        self.clock = clock
        self.error: PolicyError | None = None  # the last reload that failed, while it is not fixed
        self._index: PolicyIndex | None = None
        self._stamp: tuple[Stamp, int] | None = None
        self._checked = -float("inf")
        self._generation = 0
        self._lock = threading.Lock()

    def serving(self, tool: str) -> PolicyIndex:
        """The set in force for a call of ``tool``, with every policy naming it in force.

        A policy naming a tool the catalog did not serve waits, dormant. When the tool is served
        again, the set is reloaded at once; while that reload fails (the last good set stays in
        force, with the policy still dormant), a call of that tool is refused with the reload's
        error rather than decided without its policies.
        """
        index = self.current()
        if tool in index.dormant_tools:
            index = self.current(now_or_never=True)
            if tool in index.dormant_tools:
                raise PolicyError(
                    f"the policies naming {tool} are not in force (they waited while it was not served): "
                    f"{self.error or 'the catalog changed; they are reloaded on the next look'}",
                    file=self.error.file if self.error else "",
                    line=self.error.line if self.error else 0,
                )
        return index

    def fresh(self) -> PolicyIndex | None:
        """The set in force when no look at the files is due, else None (a call's fast path: one clock read)."""
        index = self._index
        return index if index is not None and self.clock() - self._checked < self.check_seconds else None

    def current(self, *, now_or_never: bool = False) -> PolicyIndex:
        """The set in force (reloaded first when it is time to look, or ``now_or_never``, and a file changed)."""
        now = self.clock()
        if now_or_never or now - self._checked >= self.check_seconds or self._index is None:
            with self._lock:
                if now_or_never or now - self._checked >= self.check_seconds or self._index is None:
                    self._checked = now
                    self._reload()
        if self._index is None:
            assert self.error is not None
            raise self.error
        return self._index

    def _reload(self) -> None:
        seen = (stamp(self.directory), self.generation())
        if seen == self._stamp:
            return
        youngest = max((modified for _, _, modified in seen[0]), default=0)
        if self._index is not None and time.time_ns() - youngest < SETTLE_NS:
            return  # a file is being written (an editor truncates, then writes): read it once it settled
        self._stamp = seen
        self._generation += 1
        try:
            self._index = compile_policies(self.directory, self.tools(), self._generation)
        except PolicyError as error:
            self.error = error
            logger.error("policies in %s not loaded (the last good set stays in force): %s", self.directory, error)
            return
        self.error = None
        logger.info("policies loaded from %s: %d", self.directory, len(self._index.sources))
