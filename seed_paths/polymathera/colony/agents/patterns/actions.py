"""Seed 000's ``action_executor`` path: a re-export of ``colony.action_executor``, so its samples run as written."""

from colony.capability import action_executor

__all__ = ["action_executor"]
