"""Running an approved action, and its optional check, inside one Prefect transaction.

If the check fails after the action succeeded, leaving the transaction rolls it back:
Prefect calls the action task's rollback hook, which runs the capability's declared
rollback action (see ``tasks.actions``). A failure of the action itself rolls nothing back
(nothing was committed) and is reported as it is.
"""

from __future__ import annotations

import time
from typing import Any

from prefect.transactions import transaction
from pydantic import BaseModel, Field

from colony.capability import ToolCapability
from colony.errors import ColonyError, VerificationError
from flows._catalog import ToolCall, resolve_tool
from tasks import action_task
from tasks.actions import RollbackLog, rollback_log

__all__ = ["Execution", "execute"]


class Execution(BaseModel):
    """What running the action (and its check) did."""

    succeeded: bool = Field(description="The action ran and its check, if any, passed.")
    result: Any = Field(default=None, description="The action's result.")
    error: dict[str, Any] | None = Field(default=None, description="What failed.")
    rolled_back: list[str] = Field(default_factory=list, description="Rollback actions that ran.")
    runtime_seconds: float = Field(description="Wall-clock time of the action and its check.")

    def describe(self) -> str:
        """One line for the consequence record."""
        if self.succeeded:
            return "executed successfully"
        undone = f"; rolled back with {', '.join(self.rolled_back)}" if self.rolled_back else ""
        return f"failed: {self.error['message'] if self.error else 'unknown error'}{undone}"


def _error(error: BaseException) -> dict[str, Any]:
    if isinstance(error, ColonyError):
        return error.to_dict()
    return {"type": type(error).__name__, "message": str(error)}


def execute(
    capability: type[ToolCapability], action: str, arguments: dict[str, Any], verify: ToolCall | None
) -> Execution:
    """Run ``action`` then ``verify`` in one transaction; roll back if ``verify`` fails."""
    started = time.perf_counter()
    log: RollbackLog = []
    token = rollback_log.set(log)
    result: Any = None
    try:
        with transaction():
            result = action_task(capability, action)(arguments=arguments)
            if verify is not None:
                _verify(verify)
    except Exception as error:  # noqa: BLE001 - every failure is reported in the outcome
        return Execution(
            succeeded=False,
            result=result,
            error=_error(error),
            rolled_back=[name for name, problem in log if problem is None],
            runtime_seconds=time.perf_counter() - started,
        )
    finally:
        rollback_log.reset(token)
    return Execution(succeeded=True, result=result, runtime_seconds=time.perf_counter() - started)


def _verify(verify: ToolCall) -> None:
    checker = resolve_tool(verify)
    action = verify.action or checker.primary_action()
    try:
        action_task(checker, action)(arguments=verify.arguments)
    except Exception as error:
        raise VerificationError(f"check {checker.spec.name}.{action} failed: {error}") from error
