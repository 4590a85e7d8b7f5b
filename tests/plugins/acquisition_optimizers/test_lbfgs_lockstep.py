"""``lbfgs`` runs its starts in lockstep: one surface call per round scores the next
point of every run still going, and each run ends exactly where it would alone.

Run one after the other, the starts cost one surrogate call per start and iteration
(CPU per ask at 40 trials in 6-D: EI 68 -> 102 ms, log-EI 48 -> 190 ms). Batching
their calls must not give back what separate runs bought: no run's value, scale or
stopping depends on another's.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.plugins.acquisition_optimizers.lockstep import Lockstep
from ensembo.spaces import EncodedBatch, Space

PLANE = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))


class CountingBump:
    """``offset + exp(-k |x - target|^2)``, row by row, counting its calls and rows.
    Far from the target its gradient is subnormal, near it of order k."""

    def __init__(self, target, k: float, offset: float = 0.0):
        self.target, self.k, self.offset = np.asarray(target), k, offset
        self.calls, self.rows = 0, []

    def score(self, batch: EncodedBatch) -> np.ndarray:
        diff = batch.values - self.target
        return self.offset + np.exp(-self.k * (diff**2).sum(1))

    def score_with_gradient(self, batch: EncodedBatch):
        self.calls += 1
        self.rows.append(len(batch))
        diff = batch.values - self.target
        bump = np.exp(-self.k * (diff**2).sum(1))
        return self.offset + bump, -2.0 * self.k * diff * bump[:, None]


STARTS = PLANE.vectors(
    [
        {"x": 1.0, "y": 1.0},  # gradient ~1e-315: where EI underflows
        {"x": 0.52, "y": 0.49},  # next to the peak: steep
        {"x": 0.55, "y": 0.47},
        {"x": 0.3, "y": 0.7},
    ]
)


def _ascend(surface, starts: np.ndarray) -> np.ndarray:
    optimizer = LbfgsOptimizer()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return optimizer._ascend(surface, PLANE, optimizer._relaxation(PLANE), starts)


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_each_start_ends_exactly_where_it_would_alone(offset):
    together = CountingBump([0.5, 0.5], k=1465.0, offset=offset)
    ascended = _ascend(together, STARTS)
    alone_calls = []
    for row, start in enumerate(STARTS):
        alone = CountingBump([0.5, 0.5], k=1465.0, offset=offset)
        np.testing.assert_array_equal(ascended[row], _ascend(alone, start[None])[0])
        alone_calls.append(alone.calls)
    # One call per round: as many as the longest run needs, not the sum of all runs.
    assert together.calls == max(alone_calls) < sum(alone_calls)
    assert together.rows[0] == len(STARTS)
    assert sorted(together.rows, reverse=True) == together.rows  # finished runs drop out


def test_the_steep_starts_reach_the_peak_beside_a_flat_one():
    ascended = _ascend(CountingBump([0.5, 0.5], k=1465.0), STARTS)
    np.testing.assert_allclose(ascended[1:], 0.5, atol=1e-4)


class Failing(CountingBump):
    def score_with_gradient(self, batch):
        if self.calls == 2:
            raise RuntimeError("surrogate failed")
        return super().score_with_gradient(batch)


def test_an_error_while_scoring_is_raised_and_stops_every_run():
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="surrogate failed"):
        _ascend(Failing([0.5, 0.5], k=1465.0), STARTS)
    assert threading.active_count() == before


def test_an_error_in_one_run_is_raised_and_stops_the_others():
    def scores(vectors):
        return np.zeros(len(vectors)), np.zeros_like(vectors)

    def asks_forever(evaluate):
        while True:
            evaluate(np.zeros(2))

    def fails(evaluate):
        evaluate(np.zeros(2))
        raise ValueError("run failed")

    before = threading.active_count()
    with pytest.raises(ValueError, match="run failed"):
        Lockstep(scores).run([asks_forever, fails, asks_forever])
    assert threading.active_count() == before


def test_results_come_back_in_run_order():
    def scores(vectors):
        return vectors[:, 0], np.zeros_like(vectors)

    def run_for(steps):
        def run(evaluate):
            return [evaluate(np.array([float(step), 0.0]))[0] for step in range(steps)]

        return run

    results = Lockstep(scores).run([run_for(3), run_for(0), run_for(1)])
    assert results == [[0.0, 1.0, 2.0], [], [0.0]]


class _InterruptOnce(type):
    """lockstep's ``np.ndarray`` check, raising KeyboardInterrupt on its n-th use: a
    Ctrl-C landing just after the caller took a message off the queue."""

    checks = 0
    interrupt_at = 3

    def __instancecheck__(cls, value):
        type(cls).checks += 1
        if type(cls).checks == type(cls).interrupt_at:
            raise KeyboardInterrupt
        return isinstance(value, np.ndarray)


@pytest.mark.parametrize("interrupt_at", [1, 2, 3, 4, 5])
def test_a_ctrl_c_between_taking_and_recording_a_message_stops_every_run(
    monkeypatch, interrupt_at
):
    """The message taken was lost, and the stop that trusted its counts waited for ever
    for a run that was itself waiting (Ctrl-C hung a GP proposal)."""
    from ensembo.plugins.acquisition_optimizers import lockstep

    _InterruptOnce.checks, _InterruptOnce.interrupt_at = 0, interrupt_at
    shim = type("numpy", (), {"ndarray": _InterruptOnce("ndarray", (), {}),
                              "stack": staticmethod(np.stack)})
    monkeypatch.setattr(lockstep, "np", shim)

    def three_steps(evaluate):
        for _ in range(3):
            evaluate(np.zeros(2))

    outcome: list[str] = []

    def call():
        try:
            Lockstep(lambda v: (v.sum(axis=1), v.copy())).run([three_steps, three_steps])
        except KeyboardInterrupt:
            outcome.append("interrupted")

    before = threading.active_count()
    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(10)
    assert outcome == ["interrupted"]
    assert threading.active_count() == before
