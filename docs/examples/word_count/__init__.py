"""word_count: the words and lines of a text."""

from .capability import WordCount

__all__ = ["WordCount"]
