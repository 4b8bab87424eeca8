"""The execute step of ``Runtime.call`` on Prefect: the action runs as its task (``tasks.action_task``).

The Governor and the rest of the pipeline are the same as everywhere; only this
step differs, so a flow's tool call is cached and retried by the tool's
determinism and shows in the UI as a task run. The call's deadline reaches the
task's thread (a sandbox kills its command there and answers with what it did);
a task still running a grace later is left, and the call answers timed out.
"""

from __future__ import annotations

from typing import Any, cast

import anyio
import anyio.to_thread
from prefect.states import State

from colony.deadlines import deadline_scope, kill_grace
from colony.runtime import Authorization, CatalogTool
from colony.runtime.authorization import require_authorization
from colony.runtime.executor import BlockingAction, Execution, as_tool_error, timed_out
from tasks.actions import action_task
from tasks.concurrency import for_this_run
from tasks.policy import ExecutionPolicy

__all__ = ["TaskExecutor"]


class TaskExecutor:
    """Runs each action as its Prefect task, in the current flow run."""

    def __init__(self, policy: ExecutionPolicy | None = None, *, timeout_seconds: float = 600.0) -> None:
        self.policy = policy
        self.timeout_seconds = timeout_seconds

    async def run(
        self, tool: CatalogTool, action: str, arguments: dict[str, Any], authorization: Authorization | None
    ) -> Execution:
        """The task's result; a governed action spends its authorization once, whatever the retries."""
        if tool.governed(action):
            require_authorization(authorization, tool.name, action)
        task = action_task(tool.cls, action, self.policy)

        def run() -> State[Any]:
            runnable = for_this_run(task)  # may ask the API which tags carry a limit: off the event loop
            return cast("State[Any]", runnable(arguments=arguments, authorization=authorization, return_state=True))

        left = self.timeout_seconds
        try:
            with deadline_scope(left) as left, anyio.fail_after(left + kill_grace(left)):
                state = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except TimeoutError:
            raise timed_out(tool, left) from None
        try:
            result = state.result()
        except Exception as error:  # the task's failure, translated once as everywhere else
            raise as_tool_error(tool, error) from error
        return Execution(result=result, cached=state.name == "Cached")

    def blocking(self, tool: CatalogTool, action: str) -> BlockingAction | None:
        """None: every action runs as its task, so the Governor takes its steps one hop each around it."""
        return None
