"""doc_summarize: extractive, frequency-scored summaries."""

from tools.doc_summarize.capability import DocSummarize

__all__ = ["DocSummarize"]
