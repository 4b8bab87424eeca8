"""pruning_report: the pruning daemon's advisory report, as a Prefect artifact."""

from __future__ import annotations

from datetime import UTC, datetime

from prefect import flow
from prefect.artifacts import create_table_artifact

from blocks import load_settings
from colony.kernel import PruningReport
from flows._heartbeat import beating
from tasks.kernel import prune_report

__all__ = ["pruning_report"]


@flow(name="pruning-report")
@beating
def pruning_report() -> PruningReport:
    """Nominate low-usage, stale or duplicate modules (advisory: nothing is removed)."""
    report = prune_report(load_settings().kernel)
    generated = datetime.fromtimestamp(report.generated_at, tz=UTC).isoformat(timespec="seconds")
    create_table_artifact(
        key="colony-pruning-report",
        table=[
            {
                "module": candidate.module_path,
                "confidence": round(candidate.confidence, 2),
                "reason": candidate.reason,
                "calls": candidate.call_count,
                "duplicate of": candidate.duplicate_of or "",
            }
            for candidate in report.candidates
        ],
        description=f"{report.total_candidates} pruning candidate(s), generated {generated}.",
    )
    return report
