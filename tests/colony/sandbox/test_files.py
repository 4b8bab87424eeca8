"""Input file names are checked before anything reaches the engine; output archives are read safely."""

from __future__ import annotations

import io
import tarfile

import pytest

from colony.errors import ToolInputError
from colony.sandbox.files import check_input_files, collect_outputs, pack_call_directory


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape", "a/../../b", "out/x", "", "."])
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(ToolInputError) as raised:
        check_input_files({name: "x"}, limit_bytes=100)
    assert raised.value.errors[0].field.startswith("files")


def test_oversized_inputs_are_refused() -> None:
    with pytest.raises(ToolInputError, match="at most 10"):
        check_input_files({"a": "x" * 11}, limit_bytes=10)


def test_pack_holds_inputs_and_an_empty_out() -> None:
    with tarfile.open(fileobj=io.BytesIO(pack_call_directory("c1", {"sub/a.txt": b"hi"}))) as archive:
        assert {"c1", "c1/out", "c1/sub", "c1/sub/a.txt"} <= set(archive.getnames())
        assert archive.getmember("c1/out").mode == 0o777


def _tar(members: dict[str, bytes], link: bool = False) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
        if link:
            info = tarfile.TarInfo("./passwd")
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            archive.addfile(info)
    return buffer.getvalue()


def test_collect_reads_files_and_skips_links() -> None:
    collected = collect_outputs(_tar({"./a.txt": b"A", "./d/b.txt": b"B"}, link=True), limit_bytes=100)
    assert collected.files == {"a.txt": "A", "d/b.txt": "B"}
    assert not collected.truncated


def test_collect_stops_at_the_limit_and_survives_a_cut_archive() -> None:
    data = _tar({"./a": b"x" * 60, "./b": b"y" * 60})
    assert collect_outputs(data, limit_bytes=100).truncated
    cut = collect_outputs(data[:700], limit_bytes=1000, complete=False)
    assert cut.truncated and cut.files.get("a") == "x" * 60
