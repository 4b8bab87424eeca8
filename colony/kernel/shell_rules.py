"""Which parsed shell commands are dangerous, and which cannot be judged at all.

A certain danger (``rm -rf /``, ``find / -delete``, a download piped into a shell) is a
``DANGER``; text the check cannot see through (``eval`` of run-time text, decoded bytes fed
to a shell, an inline interpreter script, text too large to parse) is a ``DOUBT``: the plan
check reports it instead of letting it pass.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from itertools import pairwise
from typing import Literal

from colony.kernel.shell import MAX_SCRIPT_BYTES, Command, Script, parse

__all__ = ["RECURSIVE_ROOT_DELETE", "Verdict", "judge"]

Verdict = tuple[Literal["danger", "doubt"], str]
RECURSIVE_ROOT_DELETE = "recursive delete of /"
MAX_NESTING = 4
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "csh", "tcsh"})
INTERPRETERS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "pwsh"})
FETCHERS = frozenset({"curl", "wget", "fetch", "aria2c", "nc", "ncat", "socat"})
DECODERS = {"base64": ("-d", "--decode", "-D"), "xxd": ("-r",), "openssl": ("-d",), "gunzip": ("",), "zcat": ("",)}
WRAPPERS = frozenset({"sudo", "env", "command", "exec", "nohup", "nice", "time", "builtin", "doas", "stdbuf"})
_RECURSIVE_LONG = frozenset({"--recursive", "--no-preserve-root"})
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/zero"})


def _base(word: str | None) -> str | None:
    return None if word is None else word.rsplit("/", 1)[-1]


def _unwrap(words: list[str | None]) -> list[str | None]:
    """The command behind ``sudo``/``env``/``busybox``... wrappers (their options and ``A=b`` dropped)."""
    while words and _base(words[0]) in WRAPPERS | {"busybox", "toybox", "timeout"}:
        wrapper, words = _base(words[0]), words[1:]
        while words and words[0] is not None and (words[0].startswith("-") or "=" in words[0]):
            words = words[1:]
        if wrapper == "timeout" and words:
            words = words[1:]
    return words


def _is_root(operand: str | None) -> bool:
    if operand is None or not operand.startswith("/"):
        return False
    return posixpath.normpath(operand).lstrip("/") in ("", "*", ".*")


def _deletes_root(arguments: list[str | None]) -> bool:
    recursive, root, options = False, False, True
    for word in arguments:
        if word is None:
            continue
        if options and word == "--":
            options = False
        elif options and word.startswith("--"):
            recursive = recursive or word in _RECURSIVE_LONG or word.startswith("--recursive")
            root = root or word == "--no-preserve-root"
        elif options and word.startswith("-") and len(word) > 1:
            recursive = recursive or "r" in word or "R" in word
        else:
            root = root or _is_root(word)
    return recursive and root


def _world_writable(mode: str) -> bool:
    if mode.isdigit():
        return int(mode[-1]) & 2 == 2
    for clause in mode.split(","):
        for op in "+=":
            who, _, perms = clause.partition(op)
            if _ and "w" in perms and ("a" in who or "o" in who):
                return True
    return False


def _find_deletes_root(arguments: list[str | None]) -> bool:
    paths = []
    for word in arguments:
        if word is None or word[:1] in ("-", "(", "!"):
            break
        paths.append(word)
    deletes = "-delete" in arguments or any(
        word in ("-exec", "-execdir", "-ok") and _base(nxt) in ("rm", "shred", "unlink")
        for word, nxt in pairwise(arguments)
    )
    return deletes and any(_is_root(path) for path in paths)


def _inline_script(arguments: list[str | None]) -> tuple[bool, str | None]:
    """Whether a shell/interpreter runs ``-c``/``-e`` text, and that text."""
    for index, word in enumerate(arguments):
        short = word is not None and word.startswith("-") and word[1:2] not in ("-", "")
        if short and word is not None and ("c" in word[1:] or word == "-e"):
            following = arguments[index + 1 : index + 2]
            return True, following[0] if following else None
    return False, None


def _reads_stdin(name: str, arguments: list[str | None]) -> bool:
    operands = [word for word in arguments if word is None or not word.startswith("-")]
    return not operands or operands == ["-"] or (name in SHELLS and "-s" in arguments)


def _command(command: Command, depth: int) -> Verdict | None:
    words = _unwrap(command.words)
    if not words:
        return None
    name, arguments = _base(words[0]), words[1:]
    if name is None:
        return "doubt", "a command name built at run time"
    if name == "rm" and _deletes_root(arguments):
        return "danger", RECURSIVE_ROOT_DELETE
    if name == "find" and _find_deletes_root(arguments):
        return "danger", "delete everything under /"
    if name == "chmod" and any(word is not None and _world_writable(word) for word in arguments):
        return "danger", "world-writable permissions"
    if name == "dd" and any(
        word and word.startswith("of=/dev/") and word[3:] not in _HARMLESS_DEVICES for word in arguments
    ):
        return "danger", "overwriting a device"
    if name.startswith("mkfs") or name in ("mke2fs", "wipefs"):
        return "danger", "formatting a filesystem"
    if name in ("eval", "source", "."):
        text = " ".join(word for word in arguments if word is not None)
        if None in arguments or command.substitutions:
            return _substituted(command, depth) or ("doubt", f"`{name}` of text built at run time")
        return _script(text, depth + 1) if name == "eval" else None
    if name in SHELLS or name in INTERPRETERS:
        return _interpreter(name, arguments, command, depth)
    return None


def _substituted(command: Command, depth: int) -> Verdict | None:
    for inner in command.substitutions:
        if any(_base(_unwrap(c.words)[0] if _unwrap(c.words) else "") in FETCHERS for c in inner.commands):
            return "danger", "pipe a download into a shell"
        verdict = _judge_script(inner, depth + 1)
        if verdict is not None:
            return verdict
    return None


def _interpreter(name: str, arguments: list[str | None], command: Command, depth: int) -> Verdict | None:
    inline, text = _inline_script(arguments)
    if command.substitutions:
        return _substituted(command, depth) or ("doubt", f"`{name}` runs a script made at run time")
    for body in command.stdin_scripts:
        if body is None or name not in SHELLS:
            return "doubt", f"`{name}` reads a script the check cannot see"
        verdict = _script(body, depth + 1)
        if verdict is not None:
            return verdict
    if not inline:
        return None
    if text is None:
        return "doubt", f"`{name} -c` of text built at run time"
    if name not in SHELLS:
        return "doubt", f"inline `{name}` code the check cannot judge"
    return _script(text, depth + 1)


def _decodes(command: Command) -> bool:
    words = _unwrap(command.words)
    name = _base(words[0]) if words else None
    flags = DECODERS.get(name or "")
    return flags is not None and ("" in flags or any(word in flags for word in words[1:]))


def _decoded(stages: list[Command]) -> str | None:
    """``echo TEXT | base64 -d``: the decoded text, when every word is known."""
    if len(stages) != 2 or _base(stages[1].words[0]) != "base64":
        return None
    source = _unwrap(stages[0].words)
    if not source or _base(source[0]) not in ("echo", "printf") or None in source:
        return None
    try:
        return base64.b64decode("".join(word for word in source[1:] if word and not word.startswith("-"))).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _pipeline(stages: list[Command], depth: int) -> Verdict | None:
    for index, stage in enumerate(stages[1:], start=1):
        words = _unwrap(stage.words)
        name = _base(words[0]) if words else None
        if name is None or (name not in SHELLS and name not in INTERPRETERS):
            continue
        if not _reads_stdin(name, words[1:]):
            continue
        before = stages[:index]
        names = {_base(_unwrap(s.words)[0]) if _unwrap(s.words) else None for s in before}
        if names & FETCHERS:
            return "danger", "pipe a download into a shell"
        if any(_decodes(s) for s in before):
            decoded = _decoded(before)
            verdict = _script(decoded, depth + 1) if decoded is not None and name in SHELLS else None
            return verdict or ("danger", "decoded text piped into a shell")
        source = _unwrap(before[-1].words) if len(before) == 1 else []
        if source and _base(source[0]) in ("echo", "printf") and None not in source and name in SHELLS:
            verdict = _script(" ".join(word for word in source[1:] if word is not None), depth + 1)
            if verdict is not None:
                return verdict
            continue
        return "doubt", f"`{name}` reads a script piped in that the check cannot see"
    return None


def _judge_script(script: Script, depth: int) -> Verdict | None:
    doubt: Verdict | None = None
    for stages in script.pipelines:
        verdict = _pipeline(stages, depth)
        if verdict is not None and verdict[0] == "danger":
            return verdict
        doubt = doubt or verdict
    for command in script.commands:
        verdict = _command(command, depth)
        if verdict is not None and verdict[0] == "danger":
            return verdict
        doubt = doubt or verdict
    return doubt


def _script(text: str, depth: int) -> Verdict | None:
    if depth > MAX_NESTING:
        return "doubt", f"shell nested more than {MAX_NESTING} deep"
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SCRIPT_BYTES:
        return "doubt", f"shell text over {MAX_SCRIPT_BYTES // 1024} KiB, too large to judge"
    return _judge_script(parse(text, depth), depth)


def judge(text: str) -> Verdict | None:
    """The first certain danger in the shell text ``text``, else the first doubt, else ``None``."""
    return _script(text, 0)
