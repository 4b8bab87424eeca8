"""shell_exec: run a shell snippet (busybox sh, awk, sed, grep, sort) in a hardened sandbox."""

from tools.shell_exec.capability import ShellExec

__all__ = ["ShellExec"]
