"""prefect.yaml is the one definition of the deployments: ``colony up`` serves exactly its entries."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml

from flows.deployments import FLOW_RUN_ENV, PREFECT_YAML, deployments, entries


def test_colony_up_serves_every_entry_of_prefect_yaml_as_written() -> None:
    served = {deployment.name: deployment for deployment in deployments()}
    assert list(served) == [entry["name"] for entry in entries()]
    for entry in entries():
        deployment = served[entry["name"]]
        assert deployment.description == entry["description"]
        assert deployment.tags == entry["tags"]
        assert deployment.parameters == (entry.get("parameters") or {})
        flow_file, _, function = entry["entrypoint"].partition(":")
        assert deployment.entrypoint is not None and deployment.entrypoint.endswith(
            f"{Path(flow_file).name}:{function}"
        )
        written = entry.get("schedules") or []
        assert len(deployment.schedules or []) == len(written)
        for schedule, spec in zip(deployment.schedules or [], written, strict=True):
            if "interval" in spec:
                assert schedule.schedule.interval == timedelta(seconds=spec["interval"])  # type: ignore[union-attr]
            else:
                assert schedule.schedule.cron == spec["cron"]  # type: ignore[union-attr]


def test_the_tick_interval_can_be_overridden_for_colony_up() -> None:
    tick = next(d for d in deployments(tick_interval_seconds=5) if d.name == "colony-tick")
    assert tick.schedules is not None and tick.schedules[0].schedule.interval == timedelta(seconds=5)  # type: ignore[union-attr]


def test_the_work_pool_gives_flow_runs_the_same_environment_as_colony_up() -> None:
    document = yaml.safe_load(PREFECT_YAML.read_text(encoding="utf-8"))
    for entry in document["deployments"]:
        assert entry["work_pool"]["job_variables"]["env"] == FLOW_RUN_ENV


def test_a_new_entry_needs_no_second_definition(tmp_path: Path) -> None:
    document = yaml.safe_load(PREFECT_YAML.read_text(encoding="utf-8"))
    document["deployments"].append(
        {
            "name": "tool-call-nightly",
            "description": "Nightly.",
            "entrypoint": "flows/tool_call.py:tool_call",
            "tags": ["colony", "nightly"],
            "schedules": [{"cron": "0 1 * * *"}],
        }
    )
    copy = tmp_path / "prefect.yaml"
    copy.write_text(yaml.safe_dump(document))
    nightly = next(d for d in deployments(path=copy) if d.name == "tool-call-nightly")
    assert nightly.tags == ["colony", "nightly"] and nightly.schedules is not None
