"""The shell_exec tool: a text-processing shell snippet, run in a Docker sandbox."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from colony import action_executor
from colony.sandbox import SandboxResult, SandboxToolCapability
from colony.spec import (
    Backend,
    CostModel,
    Determinism,
    Interruptibility,
    Licensing,
    ResourceRequirements,
    ToolSpec,
)

MAX_SCRIPT_CHARS = 64 * 1024
MAX_TIMEOUT_SECONDS = 60.0

INPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "script": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_SCRIPT_CHARS,
            "description": "POSIX shell script run by busybox sh in the call's work directory.",
        },
        "stdin": {"type": ["string", "null"], "description": "Text fed to the script's standard input."},
        "files": {
            "type": ["object", "null"],
            "additionalProperties": {"type": "string"},
            "description": "Input files, relative name -> text, placed in the work directory.",
        },
        "timeout_seconds": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_TIMEOUT_SECONDS,
            "description": "Wall-clock limit; the script is killed past it.",
        },
    },
    "required": ["script"],
    "additionalProperties": False,
}
OUTPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "exit_code": {"type": ["integer", "null"], "description": "The script's exit status (137: killed)."},
        "stdout": {"type": "string", "description": "Standard output, cut at the output cap."},
        "stderr": {"type": "string", "description": "Standard error, cut at the output cap."},
        "stdout_truncated": {"type": "boolean", "description": "Whether stdout was cut (a marker line says so)."},
        "stderr_truncated": {"type": "boolean", "description": "Whether stderr was cut (a marker line says so)."},
        "timed_out": {"type": "boolean", "description": "Whether the script was killed at its timeout."},
        "output_files": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Files the script wrote under out/, name -> text.",
        },
        "output_files_truncated": {"type": "boolean", "description": "Whether some output files were left out."},
        "duration_seconds": {"type": "number", "description": "Wall-clock time of the call."},
    },
    "required": [
        "exit_code",
        "stdout",
        "stderr",
        "stdout_truncated",
        "stderr_truncated",
        "timed_out",
        "output_files",
        "output_files_truncated",
        "duration_seconds",
    ],
    "additionalProperties": False,
}


class ShellExec(SandboxToolCapability):
    """Run a shell snippet over text, in a locked-down container with no network."""

    spec = ToolSpec(
        name="shell_exec",
        version="1.0.3",
        description=(
            "Run a POSIX shell snippet (busybox sh with awk, sed, grep, sort, uniq, wc, tr, cut, ...) "
            "over text given as stdin and input files; returns stdout, stderr, the exit code and "
            "the files it wrote under out/."
        ),
        domain="text",
        backend=Backend.SANDBOX,
        capabilities=("run_shell",),
        inputs_schema=INPUTS_SCHEMA,
        outputs_schema=OUTPUTS_SCHEMA,
        determinism=Determinism.NONDETERMINISTIC,
        side_effecting=True,
        cost_model=CostModel(cpu_seconds=0.5),
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.25, expected_wallclock_seconds=1),
        interruptibility=Interruptibility.RESTARTABLE,
        licensing=Licensing.GPL,
        licensing_notes="busybox (GPL-2.0) runs unmodified in its own image; Colony's code is MIT",
        policy_tags=("executes_code", "sandboxed", "no_network"),
        extra={"sandbox": {"timeout_seconds": 10, "output_limit_bytes": 1 << 20}},
    )
    sandbox_image_role = "busybox"

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"shell", "sandbox"})

    @action_executor
    async def run_shell(
        self,
        *,
        script: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_SCRIPT_CHARS,
                description="POSIX shell script run by busybox sh in the call's work directory.",
            ),
        ],
        stdin: Annotated[str | None, Field(description="Text fed to the script's standard input.")] = None,
        files: Annotated[
            dict[str, str] | None,
            Field(description="Input files, relative name -> text, placed in the work directory."),
        ] = None,
        timeout_seconds: Annotated[
            float, Field(gt=0, le=MAX_TIMEOUT_SECONDS, description="Wall-clock limit; the script is killed past it.")
        ] = 10.0,
    ) -> SandboxResult:
        """Run a shell script over text in a sandbox and return what it printed and wrote.

        The script runs as an unprivileged user under busybox sh, in a fresh work
        directory holding the input files; it has no network, a read-only root
        filesystem, /tmp for scratch, and limits on memory, processes and time.
        Write result files under ``out/`` (also ``$OUT``) to get them back.
        Nothing persists between calls.

        Args:
            script: Shell script, e.g. "sort data.txt | uniq -c | sort -rn | head -5".
            stdin: Text fed to the script's standard input; none if omitted.
            files: Input files as relative name -> text (at most half the work space, 32 MB).
            timeout_seconds: Wall-clock limit in seconds (at most 60).

        Returns:
            {"exit_code", "stdout", "stderr", "stdout_truncated", "stderr_truncated",
            "timed_out", "output_files", "output_files_truncated", "duration_seconds"}.
            A failing script is a result, not an error: read exit_code and stderr.
            Output past 1 MB per stream is cut with a marker line and the script is
            stopped; past the timeout it is killed (timed_out true, exit_code 137).
        """
        return await self._exec_in_sandbox(
            ["sh", "-c", script], stdin=stdin, files=files, timeout_seconds=timeout_seconds
        )
