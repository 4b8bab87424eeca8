"""The Python samples of the seed documents, found in their text as it is.

The seeds are web pages saved as text: code is not fenced. A sample is a longest run of
blank-line-separated blocks that parses as Python and holds a statement (an import, an
assignment, a call, a definition, ...); a block that parses to nothing but bare names and
data (a heading like "Examples", a JSON example, "Deterministic: Yes") ends a run.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The seed documents: COLONY_SEEDS_DIR, else the copies kept with the tests (tests/seeds).
SEEDS = Path(os.environ.get("COLONY_SEEDS_DIR") or ROOT / "tests" / "seeds")


@dataclass(frozen=True)
class Sample:
    """One sample: the seed document's number, its first line (1-based) and its text."""

    seed: str
    line: int
    text: str

    @property
    def id(self) -> str:
        return f"{self.seed}:{self.line}"


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _is_statement(node: ast.stmt) -> bool:
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call)
    if isinstance(node, ast.AnnAssign):
        return node.value is not None
    return True


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line indexes of each run of non-blank lines."""
    blocks, start = [], None
    for index, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = index
        elif not line.strip() and start is not None:
            blocks.append((start, index))
            start = None
    return blocks


def samples_in(text: str, seed: str) -> list[Sample]:
    """Every Python sample in one document's text, in order."""
    lines = text.splitlines()
    blocks = _blocks(lines)

    def code(first: int, last: int) -> ast.Module | None:
        tree = _parse("\n".join(lines[blocks[first][0] : blocks[last][1]]))
        return tree if tree is not None and any(map(_is_statement, tree.body)) else None

    def ends_a_run(index: int) -> bool:
        tree = _parse("\n".join(lines[slice(*blocks[index])]))
        return tree is not None and bool(tree.body) and not any(map(_is_statement, tree.body))

    found, first = [], 0
    while first < len(blocks):
        last = None
        for candidate in range(first, len(blocks)):
            if ends_a_run(candidate):
                break
            if code(first, candidate) is not None:
                last = candidate
        if last is None:
            first += 1
            continue
        text_of = "\n".join(lines[blocks[first][0] : blocks[last][1]])
        found.append(Sample(seed, blocks[first][0] + 1, text_of))
        first = last + 1
    return found


def seed_samples() -> list[Sample]:
    """The samples of every seed document."""
    return [sample for path in sorted(SEEDS.glob("*.txt")) for sample in samples_in(path.read_text(), path.name[:3])]


def seed_text(seed: str) -> str:
    """The text of seed document ``seed`` ("000", "004", ...)."""
    (path,) = SEEDS.glob(f"{seed}_*.txt")
    return path.read_text()
