"""shell_exec runs real scripts in the busybox sandbox: stdin, input files, output files, exit codes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from colony.catalog import check_entry, load_registry
from colony.errors import ToolInputError
from tools.shell_exec import ShellExec


@pytest.fixture(scope="module")
def shell(busybox_image: str) -> Iterator[ShellExec]:
    tool = ShellExec()
    yield tool
    asyncio.run(tool.shutdown())


def call(tool: ShellExec, **arguments: Any) -> dict[str, Any]:
    result: dict[str, Any] = asyncio.run(tool.invoke("run_shell", arguments))
    return result


def test_counts_words_from_an_input_file(shell: ShellExec) -> None:
    result = call(
        shell,
        script="tr ' ' '\\n' < words.txt | sort | uniq -c | sort -rn | head -2 | awk '{print $2\"=\"$1}'",
        files={"words.txt": "b a b c b a"},
    )
    assert result["exit_code"] == 0
    assert result["stdout"].split() == ["b=3", "a=2"]


def test_reads_stdin_and_writes_output_files(shell: ShellExec) -> None:
    result = call(
        shell,
        script="sed 's/cat/dog/g' > out/fixed.txt; mkdir out/sub; wc -l < out/fixed.txt > $OUT/sub/n",
        stdin="cat\ncat food\n",
    )
    assert result["output_files"] == {"fixed.txt": "dog\ndog food\n", "sub/n": "2\n"}
    assert result["stdout"] == ""


def test_a_failing_script_is_a_result(shell: ShellExec) -> None:
    result = call(shell, script="echo nope >&2; exit 4")
    assert (result["exit_code"], result["stderr"], result["timed_out"]) == (4, "nope\n", False)


def test_timeout_argument_applies(shell: ShellExec) -> None:
    result = call(shell, script="sleep 30; echo finished", timeout_seconds=0.5)
    assert result["timed_out"] and "finished" not in result["stdout"]
    assert result["duration_seconds"] < 20  # killed, not waited for: a loaded engine may take seconds to clean up


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"script": ""}, "script"),
        ({"script": "true", "timeout_seconds": 600}, "timeout_seconds"),
        ({"script": "true", "files": {"a": 1}}, "files.a"),
        ({"script": "true", "shell": "bash"}, "shell"),
    ],
)
def test_bad_arguments_name_the_field(arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(ToolInputError) as raised:
        call(ShellExec(), **arguments)
    assert raised.value.errors[0].field == field


def test_spec_card_and_catalog() -> None:
    tool = ShellExec()
    assert ShellExec.spec.side_effecting is True
    assert tool.action_side_effecting("run_shell") is True
    card = tool.get_action_group_description()
    assert "Sandbox: Docker image role 'busybox'" in card and "no network" in card
    assert {"tool", "sandbox", "text"} <= tool.get_capability_tags()
    assert check_entry(load_registry()["shell_exec"]) is ShellExec


def test_preconditions_ok_when_the_image_is_built(busybox_image: str) -> None:
    report = ShellExec().check_preconditions()
    assert report["ok"], report["warnings"]
