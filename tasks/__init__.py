"""Prefect tasks: every tool action by one factory, the kernel's steps and the HPC job's steps."""

from tasks.actions import action_task, capability_instance
from tasks.policy import ExecutionPolicy, ToolCallCachePolicy, is_transient

__all__ = ["ExecutionPolicy", "ToolCallCachePolicy", "action_task", "capability_instance", "is_transient"]
