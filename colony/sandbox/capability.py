"""SandboxToolCapability: a tool whose actions run commands in a hardened Docker container.

A concrete tool names an image role (``sandbox_image_role``) and calls
``_exec_in_sandbox`` from its actions. The container is started on the first
call, reused by later ones, and removed by ``shutdown()`` (or at interpreter
exit). See ``colony.sandbox.policy`` for the hardening and how a spec relaxes it.

A call never outlives the call's deadline (``colony.deadlines``): its timeout
is cut to the time left, and a caller that is cancelled (its own timeout fired)
gets the command killed before the cancellation reaches it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from colony.callers import CURRENT_CALLER
from colony.capability import ToolCapability
from colony.deadlines import remaining_seconds
from colony.errors import CallTimeoutError, SandboxError, SandboxUnavailableError, ToolInputError
from colony.sandbox.files import check_input_files
from colony.sandbox.offload import in_daemon_thread, interruptible_in_daemon_thread
from colony.sandbox.policy import ContainerPlan, limit_warnings, overrides_of, plan_container
from colony.sandbox.session import SandboxResult, SandboxSession

__all__ = ["MAX_STDIN_BYTES", "SandboxToolCapability"]

MAX_STDIN_BYTES = 8 << 20


def sandbox_output_bytes(output_limit_bytes: int) -> int:
    """The most JSON a sandbox result can take, so its own output limit is what cuts it.

    stdout, stderr and the output files are each at most ``output_limit_bytes``;
    every byte is at worst a 6-byte escape; the other fields fit in 64 KiB.
    """
    return 3 * 6 * output_limit_bytes + (64 << 10)


class SandboxToolCapability(ToolCapability):
    """A tool that runs inside a Docker container of its ``sandbox_image_role``."""

    __abstract_tool__ = True
    #: The image role (a key of the sandbox settings' roles) this tool's commands run in.
    sandbox_image_role: ClassVar[str]
    isolated: ClassVar[bool] = True
    retryable_errors: ClassVar[tuple[type[BaseException], ...]] = (SandboxUnavailableError,)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("__abstract_tool__", False):
            return
        role = getattr(cls, "sandbox_image_role", None)
        if not isinstance(role, str) or not role:
            raise TypeError(f"{cls.__qualname__} must declare `sandbox_image_role: ClassVar[str]` (an image role name)")
        overrides = overrides_of(cls.spec)  # a bad spec.extra["sandbox"] fails at import, naming the key
        if "max_output_bytes" not in cls.__dict__:
            cls.max_output_bytes = sandbox_output_bytes(overrides.output_limit_bytes)

    def __init__(self, *, session: SandboxSession | None = None) -> None:
        super().__init__()
        self._owns_session = session is None
        self.sandbox_session = session or SandboxSession()

    @classmethod
    def call_timeout(cls, action: str, arguments: Mapping[str, Any]) -> float | None:
        """The call's own timeout, else the spec's sandbox timeout (what its command is killed at)."""
        own = super().call_timeout(action, arguments)
        return own if own is not None else float(overrides_of(cls.spec).timeout_seconds)

    def _container_plan(self) -> ContainerPlan:
        role = self.sandbox_session.config.role(self.sandbox_image_role)
        return plan_container(self.sandbox_image_role, role, self.spec)

    async def _exec_in_sandbox(
        self,
        command: list[str],
        *,
        stdin: str | bytes | None = None,
        files: Mapping[str, str | bytes] | None = None,
        timeout_seconds: float | None = None,
    ) -> SandboxResult:
        """Run ``command`` in this tool's sandbox and report what it did.

        Args:
            command: The program and its arguments, run without a shell (a list of strings).
            stdin: Fed to the command's standard input, then closed; None gives it none.
            files: Input files, name -> content, placed in the call's work directory (the
                command's working directory). Anything the command writes under ``out/``
                there comes back in ``output_files``.
            timeout_seconds: Wall-clock limit; past it the command is killed, the container
                replaced, and the result says ``timed_out``. Defaults to the spec's setting,
                and is cut to the time left before the call's deadline when that is sooner.

        Returns:
            A SandboxResult. The command's own failure (non-zero exit, a timeout, output cut
            at the cap) is in the result; only the sandbox failing raises (a SandboxError,
            retryable when the engine was unreachable or failed, or every container of the
            role stayed busy; a CallTimeoutError when the call's deadline had already passed).
            When the awaiting coroutine is cancelled, the command is killed before the
            cancellation propagates.
        """
        overrides = overrides_of(self.spec)
        _check_command(command)
        data = stdin.encode() if isinstance(stdin, str) else stdin
        if data is not None and not isinstance(data, bytes):
            raise ToolInputError.for_field("stdin", "stdin must be text", expected="string")
        if data is not None and len(data) > MAX_STDIN_BYTES:
            raise ToolInputError.for_field("stdin", f"stdin is {len(data)} bytes; at most {MAX_STDIN_BYTES}")
        timeout = overrides.timeout_seconds if timeout_seconds is None else timeout_seconds
        if not 0 < timeout <= 3600:
            raise ToolInputError.for_field("timeout_seconds", f"must be in (0, 3600], got {timeout}")
        plan = self._container_plan()
        inputs = check_input_files(files, limit_bytes=plan.work_mb << 19)  # half the work tmpfs
        timeout = _within_deadline(self.spec.name, timeout)
        caller = CURRENT_CALLER.get()  # read here: the daemon thread does not inherit the context
        return await interruptible_in_daemon_thread(
            lambda interrupt: self.sandbox_session.run(
                plan,
                command,
                stdin=data,
                files=inputs,
                timeout_seconds=timeout,
                limit_bytes=overrides.output_limit_bytes,
                interrupt=interrupt,
                caller=caller,
            )
        )

    def _describe_tool_extras(self) -> list[str]:
        overrides = overrides_of(self.spec)
        try:
            image = f"image {self._container_plan().image!r}"
        except SandboxError:
            image = "no image configured"
        network = "no network" if overrides.network == "none" else f"{overrides.network} network"
        return [
            f"Sandbox: Docker image role {self.sandbox_image_role!r} ({image}); {network}, "
            f"{'read-only root' if overrides.read_only_root else 'writable root'}, non-root user, "
            f"{overrides.timeout_seconds:g} s timeout, output cut at {overrides.output_limit_bytes} bytes."
        ]

    def _precondition_warnings(self) -> list[str]:
        warnings = super()._precondition_warnings()
        try:
            plan = self._container_plan()
        except SandboxError as error:
            return [*warnings, str(error)]
        role = self.sandbox_session.config.role(self.sandbox_image_role)
        warnings += limit_warnings(self.sandbox_image_role, role, self.spec)
        try:
            present = self.sandbox_session.image_present(plan)
        except SandboxError as error:
            return [*warnings, str(error)]
        if not present:
            warnings.append(
                f"image {plan.image!r} for sandbox role {self.sandbox_image_role!r} is not built here; "
                f"build it with `colony sandbox build {self.sandbox_image_role}`"
            )
        return warnings

    async def shutdown(self) -> None:
        """Remove this tool's sandbox containers (when it owns its session)."""
        if self._owns_session:
            await in_daemon_thread(self.sandbox_session.close)


def _check_command(command: Any) -> None:
    if not isinstance(command, list) or not command:
        raise ToolInputError.for_field(
            "command", f"command must be a non-empty list of strings, got {type(command).__name__}", expected="list"
        )
    for index, part in enumerate(command):
        if not isinstance(part, str) or "\x00" in part:
            raise ToolInputError.for_field(
                f"command.{index}", f"command parts must be strings without NUL, got {part!r}", expected="string"
            )


def _within_deadline(tool: str, timeout: float) -> float:
    """The timeout cut to the call's deadline; a deadline already passed is a timeout before anything runs."""
    remaining = remaining_seconds()
    if remaining is None:
        return timeout
    if remaining <= 0:
        raise CallTimeoutError(f"{tool}: the call's deadline passed before its sandbox command could start")
    return min(timeout, remaining)
