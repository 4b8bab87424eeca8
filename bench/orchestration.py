"""Orchestration: a tool action as our task vs a bare task, a cache hit vs computing, a gated flow.

Runs against Prefect's test harness (a temporary API server on SQLite) in a temporary COLONY_HOME.
"""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings
from prefect.states import State
from prefect.testing.utilities import prefect_test_harness

ROUNDS = 40
FLOW_ROUNDS = 5


def median_seconds(function: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def task_overhead() -> None:
    from tasks import action_task
    from tasks.concurrency import for_this_run
    from tasks.storage import RESULT_SERIALIZER, result_storage
    from tools.unit_convert import UnitConvert

    unit = UnitConvert()

    @task
    def bare_convert(arguments: dict[str, Any]) -> Any:
        return unit.convert_units(**arguments)

    @task(persist_result=True, result_storage=result_storage(), result_serializer=RESULT_SERIALIZER)
    def bare_persisted_convert(arguments: dict[str, Any]) -> Any:
        return unit.convert_units(**arguments)

    @flow
    def side_by_side() -> dict[str, list[float]]:
        # Each contender is timed as a callable, whatever its result; ours as TaskExecutor runs it: no limit, no tags.
        ours_task: Callable[..., object] = for_this_run(action_task(UnitConvert))
        bare_tagged = bare_persisted_convert.with_options(tags=action_task(UnitConvert).tags)
        contenders: dict[str, Callable[..., object]] = {
            "ours": ours_task,
            "bare": bare_convert,
            "bare_persisted": bare_persisted_convert,
            "bare_tagged": bare_tagged,
        }
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        for round_ in range(ROUNDS):
            for offset, (name, contender) in enumerate(contenders.items()):
                # a new value every call: each is a cache miss (ours persists its result)
                arguments = {"value": round_ + offset / 10, "from_unit": "km", "to_unit": "m"}
                start = time.perf_counter()
                contender(arguments=arguments)
                samples[name].append(time.perf_counter() - start)
        hit = {"value": 0.0, "from_unit": "km", "to_unit": "m"}
        samples["ours_hit"] = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            ours_task(arguments=hit)
            samples["ours_hit"].append(time.perf_counter() - start)
        return samples

    medians = {name: statistics.median(values[5:]) for name, values in side_by_side().items()}
    ours, bare, persisted, hit = medians["ours"], medians["bare"], medians["bare_persisted"], medians["ours_hit"]
    tagged = medians["bare_tagged"]
    print(f"unit_convert as our task (miss, persisted): {ours * 1000:7.2f} ms")
    print(f"bare @task, persisting its result too:      {persisted * 1000:7.2f} ms")
    print(f"bare @task, persisting, with our tags:      {tagged * 1000:7.2f} ms")
    print(f"bare @task, no persistence:                 {bare * 1000:7.2f} ms")
    print(f"our task on a cache hit:                    {hit * 1000:7.2f} ms")
    print(f"ratio ours / bare persisted (same work):    {ours / persisted:7.2f}  (target <= 1.15)")
    print(f"ratio bare with our tags / bare persisted:  {tagged / persisted:7.2f}  (what a tag limit lookup costs)")
    print(f"ratio ours / bare unpersisted:              {ours / bare:7.2f}")
    print(f"ratio ours hit / bare unpersisted:          {hit / bare:7.2f}")


def cache_hit() -> None:
    from tasks import action_task
    from tools.doc_summarize import DocSummarize

    sentences = [
        "The colony gate weighs trust, budget and falsification before any action runs.",
        "Pheromone signals evaporate a little at every tick of the colony.",
        "A held action waits for a person to approve it in the Prefect UI.",
        "Deterministic tool actions are cached on their validated arguments.",
    ]
    text = " ".join(sentences[(i * 3) % len(sentences)] for i in range(20_000))[: 1 << 20]

    @flow
    def hit_vs_compute() -> tuple[float, float]:
        summarize: Callable[..., State[Any]] = action_task(DocSummarize)  # called with return_state=True
        start = time.perf_counter()
        first = summarize(arguments={"text": text}, return_state=True)
        compute = time.perf_counter() - start
        hits = []
        for _ in range(5):
            start = time.perf_counter()
            again = summarize(arguments={"text": text}, return_state=True)
            hits.append(time.perf_counter() - start)
            assert again.name == "Cached", again
        assert first.name == "Completed"
        return compute, statistics.median(hits)

    compute, hit = hit_vs_compute()
    print(f"doc_summarize over 1 MB, computed:  {compute * 1000:8.2f} ms (includes persisting the result)")
    print(f"doc_summarize over 1 MB, cache hit: {hit * 1000:8.2f} ms")
    print(f"ratio hit / compute:                {hit / compute:8.2f}")


def gated_versus_bare() -> None:
    from colony.kernel import KernelSettings
    from flows.gated_action import GatedActionRequest, gated_action
    from flows.results import GatedActionSummary
    from flows.tool_call import ToolCall
    from tasks.kernel import kernel_for

    kernel_for(KernelSettings()).set_trust("bench-agent", 0.9)

    @task
    def nothing() -> None:
        return None

    @flow
    def three_tasks() -> None:
        nothing()
        nothing()
        nothing()

    def gated() -> None:
        summary = gated_action(
            GatedActionRequest(
                agent_id="bench-agent",
                call=ToolCall(tool="unit_convert", arguments={"value": 1, "from_unit": "km", "to_unit": "m"}),
                target="bench.units",
                rationale="Convert the benchmark distance for the nightly report",
                rollback_plan="nothing to undo: the conversion is read-only",
                evidence={"tests": ["tests/tools/unit_convert"]},
            )
        )
        assert isinstance(summary, GatedActionSummary) and summary.outcome.value == "executed", summary

    three_tasks()
    gated()
    bare_s, gated_s = median_seconds(three_tasks, FLOW_ROUNDS), median_seconds(gated, FLOW_ROUNDS)
    print(f"gated_action (execute path):    {gated_s * 1000:8.1f} ms per flow run")
    print(f"bare flow of three no-op tasks: {bare_s * 1000:8.1f} ms per flow run")
    print(f"ratio gated / bare:             {gated_s / bare_s:8.2f}")


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["COLONY_HOME"] = home
        logging.getLogger("prefect").setLevel(logging.WARNING)
        storage = {PREFECT_LOCAL_STORAGE_PATH: Path(home) / "prefect-storage"}
        with temporary_settings(storage), prefect_test_harness(server_startup_timeout=120):
            task_overhead()
            cache_hit()
            gated_versus_bare()


if __name__ == "__main__":
    main()
