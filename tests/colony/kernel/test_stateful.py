"""Property-based: the ledger and the pheromone store against a plain in-memory model (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from colony.kernel import ColonyKernel, DecayRate, KernelSettings
from tests.colony.kernel.conftest import FakeClock

LOCATIONS = st.sampled_from(["pkg.a", "pkg.b", "pkg.c", "pkg.d"])
TYPES = st.sampled_from(["failure", "success", "risk"])
RATES = st.sampled_from(list(DecayRate))
AMOUNTS = st.floats(min_value=0.05, max_value=6.0, allow_nan=False)
USAGE = st.floats(min_value=0.0, max_value=8.0, allow_nan=False)
MIN, MAX, LIMIT, PERIOD = 0.01, 10.0, 20.0, 100.0


class LedgerAndField(RuleBasedStateMachine):
    """Drive the kernel and a dict-based model side by side; they must always agree."""

    @initialize()
    def start(self) -> None:
        self.clock = FakeClock(1_000.0)
        self.kernel = ColonyKernel(
            KernelSettings(
                database_url="sqlite://",
                budget_llm_calls=LIMIT,
                budget_runtime_seconds=LIMIT,
                budget_period_seconds=PERIOD,
                min_strength=MIN,
                max_strength=MAX,
            ),
            clock=self.clock,
        )
        self.tick = 0
        self.traces: dict[tuple[str, str], tuple[float, int, float]] = {}  # strength, written tick, multiplier
        self.used = 0.0
        self.reserved = 0.0
        self.open: list[tuple[int, float]] = []  # (period, amount) reserved and not settled

    def teardown(self) -> None:
        self.kernel.close()

    def _now(self, key: tuple[str, str]) -> float:
        strength, written, rate = self.traces[key]
        return strength * (1 - 0.1 * rate) ** (self.tick - written)

    # -- pheromones ----------------------------------------------------------------------------------

    @rule(location=LOCATIONS, kind=TYPES, amount=AMOUNTS, rate=RATES)
    def deposit(self, location: str, kind: str, amount: float, rate: DecayRate) -> None:
        key = (location, kind)
        current = self._now(key) if key in self.traces else 0.0
        expected = min(MAX, (current if current > MIN else 0.0) + amount)
        self.traces[key] = (expected, self.tick, float(rate))
        assert self.kernel.deposit(location, kind, amount, decay_rate=rate).strength == pytest.approx(
            expected, abs=1e-6
        )

    @rule()
    def evaporate(self) -> None:
        self.tick += 1
        self.traces = {key: value for key, value in self.traces.items() if self._now(key) > MIN}
        assert self.kernel.tick().tick_count == self.tick

    @rule(location=LOCATIONS, kind=TYPES)
    def sense(self, location: str, kind: str) -> None:
        found = self.kernel.pheromone_query(location, kind)
        if (location, kind) in self.traces:
            assert [s.strength for s in found] == [pytest.approx(self._now((location, kind)), abs=1e-6)]
        else:
            assert found == []

    # -- ledger ----------------------------------------------------------------------------------------

    def _period(self) -> int:
        return int(self.clock.now // PERIOD)

    @rule(amount=USAGE)
    def reserve(self, amount: float) -> None:
        fits = self.used + self.reserved + amount <= LIMIT
        estimate = {"llm_calls": amount, "runtime_seconds": 0.0}
        period = self.kernel.store.run(lambda c: self.kernel.ledger.reserve(c, estimate, self.clock.now))
        assert (period is not None) == fits
        if fits:
            self.reserved += amount
            self.open.append((self._period(), amount))

    @precondition(lambda self: bool(self.open))
    @rule(actual=USAGE, index=st.integers(min_value=0))
    def settle(self, actual: float, index: int) -> None:
        period, amount = self.open.pop(index % len(self.open))
        if period == self._period():
            self.reserved -= amount
            self.used += actual
        held = {"llm_calls": amount, "runtime_seconds": 0.0}
        self.kernel.store.run(
            lambda c: self.kernel.ledger.settle(c, period, held, {"llm_calls": actual, "runtime_seconds": 0.0})
        )

    @rule(actual=USAGE)
    def charge(self, actual: float) -> None:
        self.used += actual
        self.kernel.store.run(lambda c: self.kernel.ledger.charge(c, {"llm_calls": actual}, self.clock.now))

    @rule()
    def roll_over(self) -> None:
        self.clock.advance(PERIOD)
        self.used = self.reserved = 0.0

    # -- invariants ----------------------------------------------------------------------------------

    @invariant()
    def field_agrees(self) -> None:
        status = self.kernel.status()
        assert status.pheromone_summary.total_signals == len(self.traces)
        expected = sorted((self._now(key) for key in self.traces), reverse=True)[:10]
        got = [s.strength for s in status.pheromone_summary.top_signals]
        assert got == pytest.approx(expected, abs=1e-6)

    @invariant()
    def ledger_agrees(self) -> None:
        dimension = self.kernel.status().budget_usage["llm_calls"]
        assert dimension.used == pytest.approx(self.used, abs=1e-6)
        assert dimension.max == LIMIT


LedgerAndField.TestCase.settings = settings(max_examples=20, stateful_step_count=30, deadline=None)
test_kernel_matches_model = LedgerAndField.TestCase
