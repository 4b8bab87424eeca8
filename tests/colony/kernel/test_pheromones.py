"""The pheromone field: per-trace decay computed on read, expiry by index, reinforcement, the top ten."""

from __future__ import annotations

import math

import pytest

from colony.kernel import ColonyKernel, DecayRate
from colony.kernel.pheromones import expiry_tick, keep_fraction, strength_at


@pytest.mark.parametrize(
    ("rate", "after_one"), [(DecayRate.FAST, 0.7), (DecayRate.NORMAL, 0.9), (DecayRate.SLOW, 0.98)]
)
def test_each_trace_decays_by_its_own_multiplier(kernel: ColonyKernel, rate: DecayRate, after_one: float) -> None:
    kernel.deposit("pkg.a", "risk", 2.0, decay_rate=rate)
    kernel.tick()
    kernel.tick()
    [signal] = kernel.pheromone_query("pkg.a", "risk")
    assert signal.strength == pytest.approx(2.0 * after_one**2)
    assert signal.decay_rate == float(rate)


def test_reinforcement_adds_to_the_decayed_strength(kernel: ColonyKernel) -> None:
    kernel.deposit("pkg.a", "need", 2.0)
    kernel.tick()
    assert kernel.deposit("pkg.a", "need", 1.0).strength == pytest.approx(2.0 * 0.9 + 1.0)
    kernel.tick()
    assert kernel.pheromone_query("pkg.a", "need")[0].strength == pytest.approx((2.0 * 0.9 + 1.0) * 0.9)


def test_reinforcement_is_capped(kernel: ColonyKernel) -> None:
    for _ in range(5):
        kernel.deposit("pkg.a", "human_priority", 4.0)
    assert kernel.pheromone_query("pkg.a", "human_priority")[0].strength == 10.0


def test_tick_removes_traces_at_or_below_min_strength(kernel: ColonyKernel) -> None:
    kernel.deposit("pkg.fast", "failure", 1.0, decay_rate="fast")
    kernel.deposit("pkg.slow", "failure", 1.0, decay_rate="slow")
    ticks_to_expire = expiry_tick(1.0, 3.0, 0, 0.01)
    assert 0.7 ** (ticks_to_expire - 1) > 0.01 >= 0.7**ticks_to_expire
    for _ in range(ticks_to_expire - 1):
        kernel.tick()
    assert kernel.pheromone_query("pkg.fast", "failure")
    status = kernel.tick()
    assert kernel.pheromone_query("pkg.fast", "failure") == []
    assert status.pheromone_summary.total_signals == 1
    assert [s.location for s in status.pheromone_summary.top_signals] == ["pkg.slow"]


def test_top_signals_rank_by_strength_now_across_rates(kernel: ColonyKernel) -> None:
    kernel.deposit("fast.strong", "risk", 5.0, decay_rate="fast")
    kernel.deposit("slow.weak", "risk", 3.0, decay_rate="slow")
    for index in range(12):
        kernel.deposit(f"normal.{index:02d}", "need", 0.5 + index * 0.1)
    assert kernel.status().pheromone_summary.top_signals[0].location == "fast.strong"
    for _ in range(3):
        kernel.tick()
    top = kernel.status().pheromone_summary.top_signals
    assert len(top) == 10
    assert [t.location for t in top[:2]] == ["slow.weak", "fast.strong"]  # 2.82 vs 1.715
    strengths = [t.strength for t in top]
    assert strengths == sorted(strengths, reverse=True)
    assert top[-1].key.endswith(":need")


def test_the_field_survives_a_restart(kernel: ColonyKernel, settings, clock) -> None:  # type: ignore[no-untyped-def]
    kernel.deposit("pkg.a", "success", 3.8)
    kernel.tick()
    kernel.close()
    again = ColonyKernel(settings, clock=clock)
    assert again.status().tick_count == 1
    assert again.pheromone_query("pkg.a", "success")[0].strength == pytest.approx(3.42)
    again.close()


@pytest.mark.parametrize("strength", [0.011, 0.5, 1.0, 3.8, 10.0])
@pytest.mark.parametrize("rate", [3.0, 1.0, 0.2])
def test_expiry_tick_is_the_first_tick_at_or_below_min(strength: float, rate: float) -> None:
    tick = expiry_tick(strength, rate, 7, 0.01)
    assert strength_at(strength, rate, tick - 7) <= 0.01 < strength_at(strength, rate, tick - 8)
    assert tick - 7 == math.ceil(math.log(0.01 / strength) / math.log(keep_fraction(rate)) - 1e-9)
