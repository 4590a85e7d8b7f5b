"""Incremental greedy selection gives exactly what a fresh selection over the pool gives."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import components
from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.plugins.ensembles import posthoc
from ensembo.plugins.ensembles.greedy import forward_greedy, run_greedy, updated_trace
from ensembo.plugins.ensembles.posthoc import PostHocSelection
from ensembo.plugins.ensembles.ties import first_lowest, tied_for_lowest
from ensembo.plugins.losses.ensemble_loss import prepare_candidates
from ensembo.stats import without_float_noise
from ensembo.trials import History, Trial, TrialState


def classification_pool(n: int, m: int, classes: int, rng: np.random.Generator):
    y = rng.integers(0, classes, size=m)
    predictions = []
    for _ in range(n):
        logits = rng.uniform(0.2, 2.5) * np.eye(classes)[y] + rng.normal(size=(m, classes))
        predictions.append(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True))
    return predictions, y


def regression_pool(n: int, m: int, rng: np.random.Generator):
    y = rng.normal(size=m)
    return [y + rng.normal(scale=rng.uniform(0.3, 1.5), size=m) for _ in range(n)], y


def arrivals(predictions, order):
    """Histories after each arrival: trials finish in ``order``, the rest are running."""
    finished: dict[int, float] = {}
    for number in order:
        finished[number] = float(len(finished))
        yield History([
            Trial(number=i, config={"i": i}, state=TrialState.COMPLETE, loss=0.0,
                  predictions=p, finished_at=finished[i])
            if i in finished else Trial(number=i, config={"i": i}, state=TrialState.RUNNING)
            for i, p in enumerate(predictions)
        ])


CASES = [
    ("classification", "zero-one"), ("classification", "log-loss"),
    ("classification", "squared-margin"), ("classification", "sigmoid-margin"),
    ("classification", "c-bound"), ("regression", "mse"), ("regression", "huber"),
]


@pytest.mark.parametrize("task, loss", CASES, ids=[c[1] for c in CASES])
def test_posthoc_kept_current_equals_a_fresh_selection_after_every_trial(task, loss, monkeypatch):
    rng = np.random.default_rng(len(loss))
    if task == "classification":
        predictions, y = classification_pool(60, 40, 3, rng)
        context = EnsembleContext(y_true=y, loss=loss, task=task, classes=np.arange(3))
    else:
        predictions, y = regression_pool(60, 40, rng)
        context = EnsembleContext(y_true=y, loss=loss, task=task)
    order = rng.permutation(len(predictions))  # asynchronous: trials finish out of order
    histories = list(arrivals(predictions, order))
    expected = [PostHocSelection(iterations=20).ensemble(h, context) for h in histories]
    fresh_runs = []
    original = posthoc.run_greedy
    monkeypatch.setattr(
        posthoc, "run_greedy", lambda *a, **k: fresh_runs.append(1) or original(*a, **k))
    live = PostHocSelection(iterations=20)
    assert [live.ensemble(h, context) for h in histories] == expected
    # The point of keeping it current: most arrivals did not need a fresh selection.
    assert len(fresh_runs) < len(order) // 2


def test_a_new_model_that_ties_a_step_resumes_from_that_step():
    rng = np.random.default_rng(0)
    predictions, y = classification_pool(30, 50, 2, rng)
    loss = components.build("loss", "squared-margin")
    contributions = np.stack([loss.contributions(p) for p in predictions])
    before = run_greedy(contributions[:29], y, loss, range(29), start=3, iterations=15)
    # A copy of the model greedy picked at step 6 (not a start model), placed last: it
    # ties that step's choice (and any earlier step the original tied, to 12 significant
    # digits), so the steps before the first tie are kept and the rest checked again.
    picked = before.picks[6]
    contributions[29] = contributions[picked]
    first_tie = next(t for t, total in enumerate(before.totals)
                     if without_float_noise(loss.ensemble_loss(y, total + contributions[picked],
                                                               4.0 + t))
                     <= without_float_noise(before.scores[t]))
    assert picked not in before.seed and first_tie <= 6
    after = updated_trace(before, contributions, y, loss, range(30), start=3, iterations=15)
    fresh = run_greedy(contributions, y, loss, range(30), start=3, iterations=15)
    assert after.picks == fresh.picks and after.scores == fresh.scores
    kept = zip(after.totals[:first_tie], before.totals[:first_tie], strict=True)
    assert all(a is b for a, b in kept)  # reused, not recomputed
    assert after.counts() == fresh.counts()


def test_forward_greedy_counts_match_the_trace():
    rng = np.random.default_rng(1)
    predictions, y = classification_pool(12, 30, 2, rng)
    loss = components.build("loss", "zero-one")
    contributions = np.stack([loss.contributions(p) for p in predictions])
    counts = forward_greedy(contributions, y, loss, start=2, iterations=10)
    trace = run_greedy(contributions, y, loss, range(12), start=2, iterations=10)
    assert {i: c for i, c in enumerate(counts) if c} == trace.counts()


@pytest.mark.filterwarnings("ignore:.*slots with a budget:UserWarning")  # 40 trials on purpose
@pytest.mark.parametrize("name", ["agnostic-bayes", "esmbo", "eo"])
def test_other_strategies_kept_current_equal_a_fresh_one_after_every_trial(name):
    rng = np.random.default_rng(5)
    predictions, y = classification_pool(40, 25, 2, rng)
    context = EnsembleContext(y_true=y, loss="zero-one", task="classification",
                              classes=np.arange(2), budget=40, seed=1)
    live = components.build("ensemble_strategy", name)
    # Out of order, then in order: both the rebuilding and the growing paths.
    order = [*rng.permutation(20), *range(20, 40)]
    for history in arrivals(predictions, order):
        fresh = components.build("ensemble_strategy", name)
        live_targets = live.targets(history, context)
        np.testing.assert_allclose(live_targets, fresh.targets(history, context))
        got, expected = live.ensemble(history, context), fresh.ensemble(history, context)
        assert got.members == expected.members
        np.testing.assert_allclose(got.weights, expected.weights, rtol=0, atol=1e-12)


def _zero_one_by_counting(y: np.ndarray, votes: np.ndarray) -> float:
    """Zero-one loss of integer vote counts (m, k): wrong unless the true class leads alone."""
    true = votes[np.arange(len(y)), y]
    wrong = np.where(np.eye(votes.shape[1], dtype=bool)[y], -1, votes).max(axis=1)
    return np.count_nonzero(true <= wrong) / len(y)


def _scored_one_by_one(loss, y: np.ndarray, totals: list[np.ndarray], size: float) -> np.ndarray:
    """Each candidate ensemble built and scored on its own (stacked for the same row means)."""
    return np.stack([loss.ensemble_examples(y, t, size) for t in totals]).mean(axis=-1)


def reference_greedy(contributions, y, score, start: int, iterations: int):
    """Forward greedy selection written out plainly: every step builds every candidate's
    ensemble. ``score(totals, size)`` gives the losses of a list of ensemble totals; losses
    equal to 12 significant digits tie, and a tie goes to the earliest model."""
    n = len(contributions)
    singles = without_float_noise(score(list(contributions), 1.0))
    seed = sorted(range(n), key=lambda i: (singles[i], i))[:start]
    total = sum(contributions[i] for i in seed)
    best_loss, best_length = float(score([total], float(len(seed)))[0]), 0
    picks, scores = [], []
    for step in range(iterations):
        size = float(len(seed) + step + 1)
        losses = score([total + c for c in contributions], size)
        rounded = without_float_noise(losses)
        pick = min(range(n), key=lambda j: (rounded[j], j))
        picks.append(pick)
        scores.append(float(losses[pick]))
        total = total + contributions[pick]
        if losses[pick] < best_loss - 1e-12:
            best_loss, best_length = float(losses[pick]), step + 1
    counts: dict[int, int] = {}
    for i in [*seed, *picks[:best_length]]:
        counts[i] = counts.get(i, 0) + 1
    return picks, scores, counts


REFERENCE_CASES = [("zero-one", 2), ("zero-one", 3), ("zero-one", 4),
                   ("squared-margin", 3), ("sigmoid-margin", 2), ("sigmoid-margin", 3)]


@pytest.mark.parametrize("name, classes", REFERENCE_CASES)
@pytest.mark.parametrize("seed", range(4))
def test_greedy_steps_equal_a_plain_computation_bit_for_bit(name, classes, seed):
    """The prepared candidates (outcome tables, settled examples skipped for zero-one)
    give the very scores, picks and counts of scoring every ensemble directly."""
    rng = np.random.default_rng([seed, classes])
    n, m = int(rng.integers(8, 30)), int(rng.integers(7, 200))
    predictions, y = classification_pool(n, m, classes, rng)
    for i in rng.integers(0, n, size=n // 3):  # copies of a model tie with it at every step
        predictions[int(rng.integers(0, n))] = predictions[i]
    loss = components.build("loss", name)
    contributions = np.stack([loss.contributions(p) for p in predictions])
    if name == "zero-one":
        def score(totals, size):
            return np.array([_zero_one_by_counting(y, t.astype(int)) for t in totals])
    else:
        def score(totals, size):
            return _scored_one_by_one(loss, y, totals, size)
    start, iterations = int(rng.integers(1, 5)), int(rng.integers(5, 40))
    picks, scores, counts = reference_greedy(contributions, y, score, start, iterations)
    fresh = run_greedy(contributions, y, loss, range(n), start=start, iterations=iterations,
                       prepared=loss.prepare_candidates(contributions))
    assert (fresh.picks, fresh.scores, fresh.counts()) == (picks, scores, counts)
    plain = forward_greedy(contributions, y, loss, start=start, iterations=iterations)
    assert {i: int(c) for i, c in enumerate(plain) if c} == counts
    # Kept current one trial at a time, as the posthoc strategy does.
    trace = run_greedy(contributions[:start], y, loss, range(start), start=start,
                       iterations=iterations)
    for size in range(start + 1, n + 1):
        trace = updated_trace(trace, contributions[:size], y, loss, range(size), start=start,
                              iterations=iterations,
                              prepared=loss.prepare_candidates(contributions[:size]))
    assert trace.counts() == counts


def _colleague_pool(seed: int):
    """Pool size n, examples m and start models as first found to disagree (seed 103)."""
    rng = np.random.default_rng(seed)
    n, m, start = int(rng.integers(5, 40)), int(rng.integers(5, 300)), int(rng.integers(2, 5))
    predictions, y = classification_pool(n, m, 2, rng)
    return predictions, y, start, rng.permutation(n)


def _tied_pool(seed: int):
    """Small pools with copied models: many exact ties, which different summation orders
    can turn into wins or losses by one rounding."""
    rng = np.random.default_rng([seed, 11])
    n, m, start = int(rng.integers(4, 25)), int(rng.integers(4, 60)), int(rng.integers(1, 4))
    predictions, y = classification_pool(n, m, 2 if seed % 3 else 3, rng)
    for i in rng.integers(0, n, size=n // 4):
        predictions[int(rng.integers(0, n))] = predictions[i]
    return predictions, y, start, rng.permutation(n)


NEAR_TIE_LOSSES = ["squared-margin", "c-bound", "zero-one", "sigmoid-margin", "log-loss", "mse"]


@pytest.mark.parametrize("name", NEAR_TIE_LOSSES)
def test_kept_current_equals_fresh_when_scores_tie_up_to_rounding(name):
    """The batched check for a new trial computes its scores in another floating-point
    order than a fresh run's steps (0.011805555555555559 vs ...557): a trial that ties or
    wins a step by one rounding there must still resume the selection from that step."""
    loss = components.build("loss", name)
    pools = [_colleague_pool(103), *(_tied_pool(seed) for seed in range(25))]
    if name == "mse":
        rng = np.random.default_rng(7)
        pools = []
        for start in [1, 2, 3] * 4:
            n = int(rng.integers(4, 25))
            pools.append((*regression_pool(n, 30, rng), start, rng.permutation(n)))
    for predictions, y, start, order in pools:
        contributions = np.stack([loss.contributions(p) for p in predictions])
        trace = None
        for arrived in range(1, len(order) + 1):  # trials finish in a random order
            numbers = sorted(order[:arrived].tolist())
            pool = contributions[numbers]
            options = {"start": start, "iterations": 20,
                       "prepared": prepare_candidates(loss, pool)}
            fresh = run_greedy(pool, y, loss, numbers, **options)
            trace = fresh if trace is None else updated_trace(trace, pool, y, loss, numbers,
                                                              **options)
            kept = Ensemble.from_counts(trace.counts())
            expected = Ensemble.from_counts(fresh.counts())
            assert (kept.members, kept.weights) == (expected.members, expected.weights)
            assert (trace.seed, trace.picks, trace.scores) == (fresh.seed, fresh.picks,
                                                               fresh.scores)


def test_losses_equal_to_12_significant_digits_tie():
    scores = np.array([0.1 + 0.2, 0.3, 0.31, np.inf])  # 0.30000000000000004 and 0.3
    assert tied_for_lowest(scores).tolist() == [0, 1] and first_lowest(scores) == 0
    assert first_lowest([0.3, 0.3 - 1e-9]) == 1  # a real difference still decides
    assert first_lowest([0.5, 0.5 + 1e-17, 0.6], [0.2, 0.1, 0.0]) == 1  # then the next key
    assert first_lowest([np.inf, np.inf]) == 0


@pytest.mark.parametrize(
    ("scores", "first"),
    [([0.3, np.nan, 0.2], 2), ([np.nan, 0.5], 1), ([-np.inf, 0.1, -np.inf], 0),
     ([np.inf, np.inf], 0), ([np.nan, np.nan], 0)],
)
def test_a_nan_or_infinite_score_does_not_break_the_argmin(scores, first):
    """A plugin loss returning NaN or -inf made the tie helpers index an empty array."""
    assert first_lowest(np.array(scores)) == first
