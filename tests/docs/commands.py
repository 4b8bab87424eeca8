"""The command blocks a documentation page marks for testing, and how to run them as a reader would.

A page marks a fenced block with an HTML comment on the line before it (invisible on the site):
``<!-- test: NAME -->`` before a ```` ```bash ```` block makes its commands part of scenario NAME, run
in page order; ``<!-- test: NAME file=PATH -->`` before any block writes its text to PATH in the
scenario's directory first. In a bash block, a comment (on the lines before a command, or after it)
states what the reader should see: ``exits N`` is the exit status (else 0), and each double-quoted
text after ``prints`` or ``exits N:`` must appear in the output; a curl command's HTTP status is
below 400, or the one the comment states as ``answers NNN``. ``ID`` stands for the approval id the
last held call printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

MARKED_BLOCK = re.compile(
    r"<!-- test: (?P<name>[\w-]+)(?: file=(?P<file>\S+))? -->\n```(?P<lang>\w*)\n(?P<body>.*?)```", re.S
)
TRAILING_COMMENT = re.compile(r"\s{2,}#\s(?P<comment>.*)$")
EXIT = re.compile(r"(?i)\bexits? (\d+)\b")
CLAIMS_START = re.compile(r"(?i)\bprints\b|\bexits? \d+:")
QUOTED = re.compile(r'"([^"]+)"')
ANSWERS = re.compile(r"\banswers (\d{3})\b")


@dataclass
class Command:
    """One command of a block, with what its comment says the reader sees."""

    line: str
    comment: str = ""

    @property
    def exit_code(self) -> int:
        found = EXIT.search(self.comment)
        return int(found.group(1)) if found else 0

    @property
    def printed(self) -> list[str]:
        start = CLAIMS_START.search(self.comment)
        return QUOTED.findall(self.comment[start.start() :]) if start else []

    @property
    def http_status(self) -> int | None:
        found = ANSWERS.search(self.comment)
        return int(found.group(1)) if found else None


@dataclass
class Scenario:
    """The files to write and the commands to run, in page order."""

    files: dict[str, str] = field(default_factory=dict)
    commands: list[Command] = field(default_factory=list)


def scenarios(page: Path) -> dict[str, Scenario]:
    """Every scenario the page marks, by name."""
    found: dict[str, Scenario] = {}
    for block in MARKED_BLOCK.finditer(page.read_text(encoding="utf-8")):
        scenario = found.setdefault(block["name"], Scenario())
        if block["file"]:
            scenario.files[block["file"]] = block["body"]
        else:
            scenario.commands += commands(block["body"])
    return found


def commands(body: str) -> list[Command]:
    """The commands of a bash block: continuation lines joined, comments attached to their command."""
    result: list[Command] = []
    comment: list[str] = []
    lines = iter(body.splitlines())
    for raw in lines:
        line = raw.rstrip()
        if not line:
            comment = []
            continue
        if line.startswith("#"):
            comment.append(line.lstrip("# "))
            continue
        while line.endswith("\\"):
            line = line[:-1] + " " + next(lines).strip()
        trailing = TRAILING_COMMENT.search(line)
        if trailing:
            comment.append(trailing["comment"])
            line = line[: trailing.start()]
        result.append(Command(line=line.strip(), comment=" ".join(comment)))
        comment = []
    return result
