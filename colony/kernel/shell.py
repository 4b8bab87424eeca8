r"""Shell text read the way bash reads it: commands with their words resolved.

A regex over shell text is easy to talk past (``r''m``, ``\rm``, ``$'\x72m'``, ``x=/; rm -rf
$x``). tree-sitter-bash parses the text (in linear time, in C), and each command's words
are resolved as the shell would: quotes removed, ANSI-C escapes decoded, simple variable
assignments seen earlier in the text substituted. A word the shell builds at run time (a
command substitution, an unknown variable) resolves to ``None``: the rules say so instead
of guessing.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

__all__ = ["MAX_SCRIPT_BYTES", "Command", "Script", "parse"]

MAX_SCRIPT_BYTES = 16 * 1024  # larger text is not parsed: the rules report it as too large to judge
_PARSER = Parser(Language(tree_sitter_bash.language()))
_UNKNOWN_WORDS = frozenset({"command_substitution", "process_substitution", "arithmetic_expansion"})


@dataclass
class Command:
    """One simple command: its words (``None`` where only run time knows) and what feeds it."""

    words: list[str | None]
    stdin_scripts: list[str | None] = field(default_factory=list)  # heredoc / here-string text
    substitutions: list[Script] = field(default_factory=list)  # `<(...)` arguments, parsed


@dataclass
class Script:
    """Every command of a script, and its pipelines (stages in order)."""

    commands: list[Command] = field(default_factory=list)
    pipelines: list[list[Command]] = field(default_factory=list)


def _unescape(text: str) -> str:
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            index += 1
            char = text[index]
            if char == "\n":
                index += 1
                continue
        out.append(char)
        index += 1
    return "".join(out)


def _ansi_c(text: str) -> str | None:
    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return None


def _variable(node: Node, variables: dict[str, str]) -> str | None:
    names = [child for child in node.named_children if child.type == "variable_name"]
    if len(names) != 1 or (node.type == "expansion" and len(node.named_children) != 1):
        return None
    return variables.get(_text(names[0]))


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _resolve(node: Node, variables: dict[str, str]) -> str | None:
    """The word ``node`` as the shell would pass it, or ``None`` if only run time knows."""
    kind = node.type
    if kind in _UNKNOWN_WORDS:
        return None
    if kind in ("simple_expansion", "expansion"):
        return _variable(node, variables)
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "ansi_c_string":
        return _ansi_c(_text(node)[2:-1])
    if kind in ("string", "concatenation", "command_name"):
        parts = []
        for child in node.children if kind != "string" else node.children[1:-1]:
            part = _unescape(_text(child)) if child.type == "string_content" else _resolve(child, variables)
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    return _unescape(_text(node))


def _command(node: Node, variables: dict[str, str], depth: int) -> Command:
    words: list[str | None] = []
    substitutions: list[Script] = []
    stdin: list[str | None] = []
    for child in node.named_children:
        if child.type == "herestring_redirect":
            stdin.extend(_resolve(part, variables) for part in child.named_children)
        if child.type in ("variable_assignment", "file_redirect", "herestring_redirect"):
            continue
        words.append(_resolve(child, variables))
        if child.type == "process_substitution":
            inner = _text(child)[2:-1]
            substitutions.append(parse(inner, depth + 1, dict(variables)))
    return Command(words, stdin, substitutions)


def _assign(node: Node, variables: dict[str, str]) -> None:
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None:
        return
    resolved = "" if value is None else _resolve(value, variables)
    if resolved is None:
        variables.pop(_text(name), None)
    else:
        variables[_text(name)] = resolved


def _redirected(node: Node, variables: dict[str, str]) -> list[str | None]:
    scripts: list[str | None] = []
    for child in node.named_children:
        if child.type == "heredoc_redirect":
            bodies = [_text(part) for part in child.named_children if part.type == "heredoc_body"]
            scripts.append("".join(bodies))
        elif child.type == "herestring_redirect":
            scripts.extend(_resolve(part, variables) for part in child.named_children)
    return scripts


def parse(text: str, depth: int = 0, variables: dict[str, str] | None = None) -> Script:
    """The commands and pipelines of ``text`` (at most :data:`MAX_SCRIPT_BYTES`), in document order."""
    script = Script()
    variables = {} if variables is None else variables
    by_node: dict[int, Command] = {}
    tree = _PARSER.parse(text.encode("utf-8", "surrogatepass")[:MAX_SCRIPT_BYTES])
    stack = [tree.root_node]
    pipelines: list[Node] = []
    heredocs: list[Node] = []
    while stack:
        node = stack.pop()
        if node.type == "variable_assignment":
            _assign(node, variables)
        elif node.type == "command":
            command = _command(node, variables, depth)
            by_node[node.id] = command
            script.commands.append(command)
        elif node.type == "pipeline":
            pipelines.append(node)
        elif node.type == "redirected_statement":
            heredocs.append(node)
        if node.type != "process_substitution":
            stack.extend(reversed(node.children))
    for node in heredocs:
        body = node.child_by_field_name("body")
        if body is not None and body.id in by_node:
            by_node[body.id].stdin_scripts.extend(_redirected(node, variables))
    for node in pipelines:
        stages = [_stage(child, by_node) for child in node.named_children]
        script.pipelines.append([stage for stage in stages if stage is not None])
    return script


def _stage(node: Node, by_node: dict[int, Command]) -> Command | None:
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        node = body if body is not None else node
    return by_node.get(node.id)
