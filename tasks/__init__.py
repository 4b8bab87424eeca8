"""Prefect tasks: every tool action by one factory, the kernel's steps and the HPC job's steps."""

from tasks.actions import POOL, action_task
from tasks.executor import TaskExecutor
from tasks.policy import ExecutionPolicy, ToolCallCachePolicy, is_transient

__all__ = ["POOL", "ExecutionPolicy", "TaskExecutor", "ToolCallCachePolicy", "action_task", "is_transient"]
