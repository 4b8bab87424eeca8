"""The runner: one ``docker exec`` that runs a call's command, then cleans up and reports.

Each call is a single exec of a small POSIX shell script (passed in the exec's
command line, so any image with a busybox-like ``sh`` works unchanged). Run as
the command's user, it:

1. makes the call's work directory (unless the inputs already created it) and
   runs the command there in a child process (``exec`` in a subshell, so the
   command is always an external program and cannot replace or exit the runner);
2. kills every process of that user the command left (the container's main
   process belongs to another user, so it survives) and waits until they are gone;
3. streams a tar of ``out/`` to stderr, cut at a byte budget (an ``out`` that is a
   link is not followed: the command's files are what it wrote there);
4. empties ``/work`` and ``/tmp`` and checks that they are empty;
5. appends one report line to stderr and exits 0 (clean) or 3 (the container
   could not be emptied and must be replaced).

The report is read from the end of the stderr stream: the runner writes last,
after everything of the command is dead, so nothing the command printed can
stand in for it. It is believed only when the exec's own exit code equals the
status it states; a command that kills, stops or replaces the runner gets no
report believed, and its container is replaced.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REPORT_TAG", "RunnerReport", "archive_budget", "read_report", "report_overhead", "runner_command"]

REPORT_TAG = b"colony-sandbox-report"
_CLEAN, _DIRTY = 0, 3
_TAR_OVERHEAD_BYTES = 1 << 16
_REPORT_LINE_BYTES = 64

# $1: the call's work directory; $2: the most archive bytes to send; the rest: the command.
_SCRIPT = r"""
d=$1 budget=$2
shift 2
if { [ -d "$d/out" ] || mkdir -p "$d/out"; } && cd "$d"; then
  ( exec "$@" )
  rc=$?
else
  rc=126
fi
kill -9 -1 2>/dev/null
kill -9 -1 2>/dev/null
status=0
left() {
  for p in /proc/[0-9]*; do
    [ "$p" != "/proc/$$" ] && [ -O "$p" ] && return 0
  done
  return 1
}
tries=0
while left; do
  tries=$((tries + 1))
  [ "$tries" -gt 200 ] && { status=3; break; }
  kill -9 -1 2>/dev/null
  sleep 0.01
done
n=0
if [ "$status" = 0 ] && [ -d "$d/out" ] && [ ! -L "$d/out" ]; then
  for f in "$d"/out/* "$d"/out/.[!.]* "$d"/out/..?*; do
    if [ -e "$f" ] || [ -L "$f" ]; then
      n=$(tar -c -f - -C "$d/out" . 2>/dev/null | head -c "$budget" | tee /proc/self/fd/2 | wc -c)
      break
    fi
  done
fi
cd /
rm -rf /work/* /work/.[!.]* /work/..?* /tmp/* /tmp/.[!.]* /tmp/..?* 2>/dev/null
for f in /work/* /work/.[!.]* /work/..?* /tmp/* /tmp/.[!.]* /tmp/..?*; do
  if [ -e "$f" ] || [ -L "$f" ]; then status=3; break; fi
done
printf '\ncolony-sandbox-report %d %d %d\n' "$rc" "$n" "$status" >&2
exit "$status"
"""


def runner_command(call_dir: str, command: list[str], *, archive_bytes: int) -> list[str]:
    """The exec command line that runs ``command`` in ``call_dir`` under the runner."""
    return ["sh", "-c", _SCRIPT, "colony-sandbox", call_dir, str(archive_bytes), *command]


def archive_budget(limit_bytes: int) -> int:
    """Most bytes of ``out/`` archive the runner sends: the content cap, plus room for tar headers."""
    return 2 * limit_bytes + _TAR_OVERHEAD_BYTES


def report_overhead(limit_bytes: int) -> int:
    """Most bytes the runner adds to the stderr stream after the command's own."""
    return archive_budget(limit_bytes) + _REPORT_LINE_BYTES


@dataclass(frozen=True)
class RunnerReport:
    """What the runner said about the call, split from the command's own stderr."""

    exit_code: int
    stderr: bytes
    archive: bytes
    archive_complete: bool
    clean: bool


def read_report(stream: bytes, exec_exit_code: int | None, *, archive_bytes: int) -> RunnerReport | None:
    """Split the stderr stream into the command's stderr, the archive and the report line.

    None when there is no believable report: the stream does not end with one,
    its numbers do not fit the stream, or the exec's exit code is not the status
    the report states (the runner was killed or replaced before it finished).
    """
    if exec_exit_code not in (_CLEAN, _DIRTY) or not stream.endswith(b"\n"):
        return None
    separator = stream.rfind(b"\n", 0, len(stream) - 1)
    fields = stream[separator + 1 : -1].split(b" ")
    if separator < 0 or len(fields) != 4 or fields[0] != REPORT_TAG:
        return None
    if not all(field.isdigit() and len(field) <= 12 for field in fields[1:]):
        return None
    exit_code, size, status = (int(field) for field in fields[1:])
    if status != exec_exit_code or not 0 <= size <= min(separator, archive_bytes) or not 0 <= exit_code <= 255:
        return None
    return RunnerReport(
        exit_code=exit_code,
        stderr=stream[: separator - size],
        archive=stream[separator - size : separator],
        archive_complete=size < archive_bytes,
        clean=status == _CLEAN,
    )
