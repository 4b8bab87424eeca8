"""Prefect tasks: every tool action by one factory, and the kernel's steps."""

from tasks.actions import action_task, capability_instance
from tasks.policy import ExecutionPolicy, ToolCallCachePolicy, is_transient

__all__ = ["ExecutionPolicy", "ToolCallCachePolicy", "action_task", "capability_instance", "is_transient"]
