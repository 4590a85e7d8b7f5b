"""Caruana et al.'s forward greedy selection, and keeping its result current as trials arrive.

Greedy selection starts from the ``start`` individually best models and repeatedly adds
(with replacement) the model that lowers the ensemble loss most (earliest model on a
tie, losses equal to 12 significant digits tying: :mod:`.ties`); the prefix with the
lowest loss is the ensemble (shortest on a tie). ``start=0`` begins empty, as Caruana's
and Roschewitz's selection does: its first step adds the best single model, so it
selects what ``start=1`` selects.

A study asks for the ensemble after every trial, and rerunning the whole selection each
time costs ``iterations`` passes over the pool. A :class:`GreedyTrace` records what each
step saw — the ensemble total before it, the lowest loss it was offered and the trial
it picked — so a new trial only has to be scored against those totals: if it does not
enter the start models and wins no step (a lower loss, or an equal one at an earlier
pool position, which is how a fresh run breaks ties), the selection on the larger pool
makes exactly the same choices; otherwise it is rerun from the first step the new trial
wins. The result is the one a fresh run gives (:func:`updated_trace`); only the work
differs. The check scores the new trials at every step in one batched call, whose
floating-point summation order depends on array shapes, so its values can differ from
the per-step scoring of a fresh run in the last digits (a tie there can be a win or a
loss by one rounding). So only a batched score clearly below a step's choice counts as a
win; one within :data:`SCREEN_RTOL` (relative, plus :data:`SCREEN_ATOL`) of it,
equal included, is decided by scoring that step exactly as a fresh run does (the whole
pool's candidates). Losses that count whole numbers (``integral``: sums of 0s and 1s are
exact in any order) give the same bits both ways and are compared exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.plugins.ensembles.ties import first_lowest, ranked
from ensembo.plugins.losses.ensemble_loss import EnsembleLoss, prepare_candidates

# A new model whose batched score is within SCREEN_RTOL·|score| + SCREEN_ATOL of a step's
# choice (equal included) may win that step by rounding in the per-step scoring: the step
# is rescored exactly. Differences in summation order are ~1e-16 relative to the losses'
# magnitudes (the absolute part covers losses near 0 computed by cancellation, c-bound).
SCREEN_RTOL = 1e-9
SCREEN_ATOL = 1e-12
IMPROVEMENT = 1e-12


def _close(scores: np.ndarray, reference: np.ndarray | float) -> np.ndarray:
    """Where ``scores`` may equal ``reference`` in another summation order."""
    return np.abs(scores - reference) <= SCREEN_RTOL * np.abs(reference) + SCREEN_ATOL


@attrs.define(kw_only=True)
class GreedyTrace:
    """One run of greedy selection over the pool ``numbers`` (trial numbers, pool order).

    ``cutoff`` is the single-model loss of the last start model (``inf`` when the pool
    had fewer models than ``start``, so any new model would join the start).
    ``totals[t]`` is the ensemble's contribution total before step t, ``scores[t]`` the
    lowest loss step t was offered and ``picks[t]`` the trial it added.
    """

    numbers: tuple[int, ...]
    seed: tuple[int, ...]
    cutoff: float
    seed_loss: float
    picks: list[int] = attrs.Factory(list)
    totals: list[np.ndarray] = attrs.Factory(list)
    scores: list[float] = attrs.Factory(list)

    def counts(self) -> dict[int, int]:
        """Multiplicity of every trial in the best prefix."""
        best_loss, best_length = self.seed_loss, 0
        for step, score in enumerate(self.scores):
            if score < best_loss - IMPROVEMENT:
                best_loss, best_length = score, step + 1
        return dict(Counter([*self.seed, *self.picks[:best_length]]))


def _extend(trace: GreedyTrace, contributions: np.ndarray, y: np.ndarray, loss: EnsembleLoss,
            candidates: np.ndarray, total: np.ndarray, iterations: int,
            prepared: Any = None) -> GreedyTrace:
    """Run the greedy steps from where ``trace`` stops (ensemble total ``total``);
    ``prepared`` are the ``candidates`` already prepared (:func:`prepare_candidates`)."""
    if prepared is None:
        whole = len(candidates) == len(contributions)
        prepared = prepare_candidates(loss, contributions if whole else contributions[candidates])
    size = len(trace.seed) + len(trace.picks)
    while len(trace.picks) < iterations:
        scores = prepared.adding_each(y, total, float(size))
        lowest = first_lowest(scores)
        pick = candidates[lowest]
        trace.totals.append(total)
        trace.scores.append(float(scores[lowest]))
        trace.picks.append(trace.numbers[pick])
        total = total + contributions[pick]
        size += 1
    return trace


def run_greedy(contributions: np.ndarray, y: np.ndarray, loss: EnsembleLoss,
               numbers: Sequence[int], *, start: int = 3, iterations: int = 50,
               allowed: np.ndarray | None = None, prepared: Any = None) -> GreedyTrace:
    """Greedy selection over pool positions ``allowed`` (all by default) of ``contributions``
    (n, m[, k]), the models' shares under ``loss``; ``numbers`` name the positions.

    ``prepared`` is the whole pool as candidates (``prepare_candidates(loss,
    contributions)``), for a caller that keeps it between selections (it is ignored when
    ``allowed`` restricts the pool).
    """
    candidates = np.arange(len(contributions)) if allowed is None else np.asarray(allowed)
    offered = contributions if allowed is None else contributions[candidates]
    prepared = prepared if allowed is None else None
    singles = _alone(loss, y, offered, prepared)
    order = ranked(singles)
    chosen = max(1, min(start, len(order)))  # an empty start's first step is the best model
    seed = candidates[order[:chosen]]
    total = contributions[seed].sum(axis=0)
    trace = GreedyTrace(
        numbers=tuple(numbers), seed=tuple(numbers[i] for i in seed),
        cutoff=float(singles[order[chosen - 1]]) if len(order) >= start else np.inf,
        seed_loss=float(loss.ensemble_loss(y, total, float(chosen))),
    )
    return _extend(trace, contributions, y, loss, candidates, total, iterations, prepared)


def _alone(loss: EnsembleLoss, y: np.ndarray, offered: np.ndarray, prepared: Any) -> np.ndarray:
    """Each of the ``offered`` models' loss on its own. A 0/1 loss (``integral``) is
    counted by the ``prepared`` candidates as "nothing plus each one", which is the same
    value (sums of 0s and 1s are exact in any order) without a pass over (n, m, k)."""
    if prepared is not None and getattr(loss, "integral", False):
        return prepared.adding_each(y, np.zeros(offered.shape[1:]), 0.0)
    return loss.ensemble_loss(y, offered, np.ones(len(offered)))


def updated_trace(trace: GreedyTrace, contributions: np.ndarray, y: np.ndarray,
                  loss: EnsembleLoss, numbers: Sequence[int], *, start: int = 3,
                  iterations: int = 50, prepared: Any = None) -> GreedyTrace:
    """What :func:`run_greedy` gives on the pool ``numbers``, reusing ``trace`` of a smaller one.

    The pool may have gained trials anywhere in its order (asynchronous evaluation); a
    pool that lost trials is selected afresh. ``prepared`` as in :func:`run_greedy`.
    """
    numbers = tuple(numbers)
    before = set(trace.numbers)
    options = {"start": start, "iterations": iterations, "prepared": prepared}
    if not before <= set(numbers):
        return run_greedy(contributions, y, loss, numbers, **options)
    new = np.array([i for i, n in enumerate(numbers) if n not in before], dtype=int)
    if not len(new):
        return attrs.evolve(trace, numbers=numbers)
    arrivals = contributions[new]
    position = {n: i for i, n in enumerate(numbers)}
    singles = loss.ensemble_loss(y, arrivals, np.ones(len(new)))
    last_seed = position[trace.seed[-1]]
    # A new model joins the start models if its loss beats the last one's, or ties it at
    # an earlier position; one that comes within rounding of it (only a fresh run's
    # scoring can tell) gets a fresh selection too.
    exact = getattr(loss, "integral", False)
    near = (singles == trace.cutoff) if exact else _close(singles, trace.cutoff)
    if np.any((singles < trace.cutoff) | (near & ((new < last_seed) | (not exact)))):
        return run_greedy(contributions, y, loss, numbers, **options)
    if prepared is None and not exact:  # the candidates a fresh run scores (exact checks)
        prepared = prepare_candidates(loss, contributions)
    step = _first_step_won(trace, arrivals, new, position, y, loss, prepared)
    if step is None:
        return attrs.evolve(trace, numbers=numbers)
    resumed = GreedyTrace(numbers=numbers, seed=trace.seed, cutoff=trace.cutoff,
                          seed_loss=trace.seed_loss, picks=trace.picks[:step],
                          totals=trace.totals[:step], scores=trace.scores[:step])
    return _extend(resumed, contributions, y, loss, np.arange(len(numbers)), trace.totals[step],
                   iterations, prepared)


def _first_step_won(trace: GreedyTrace, arrivals: np.ndarray, places: np.ndarray,
                    position: dict[int, int], y: np.ndarray, loss: EnsembleLoss,
                    prepared: Any) -> int | None:
    """The first step one of the new models (``arrivals`` at pool positions ``places``)
    would have been picked at, or ``None``. ``prepared`` are the whole pool's candidates
    (the scoring of a fresh run), for the steps the batched scores cannot decide; ``None``
    for an ``integral`` loss, whose batched scores are exact."""
    if not trace.picks:
        return None
    totals = np.stack(trace.totals)
    sizes = len(trace.seed) + np.arange(len(totals), dtype=float)
    best = np.asarray(trace.scores)[:, None]
    winner = np.array([position[p] for p in trace.picks])[:, None]
    # (steps, arrivals) in one call: each step's total plus each new model.
    scores = loss.ensemble_loss(y, totals[:, None] + arrivals[None], sizes[:, None] + 1.0)
    if getattr(loss, "integral", False):
        # Counts of 0s and 1s over m: the per-step scoring's values, bit for bit.
        wins = (scores < best) | ((scores == best) & (places[None] < winner))
        won = np.flatnonzero(wins.any(axis=1))
        return int(won[0]) if len(won) else None
    # Elsewhere the batched values may differ from the per-step ones in the last digits,
    # so a clear win is one, and a near tie (equal included) is settled by scoring the
    # step as a fresh run does: the pool with the new models picks what the step picked
    # (same model, same score) or the selection changes from that step on.
    clear = scores < best - (SCREEN_RTOL * np.abs(best) + SCREEN_ATOL)
    near = _close(scores, best)
    for step in np.flatnonzero(clear.any(axis=1) | near.any(axis=1)):
        if clear[step].any():
            return int(step)
        exact = prepared.adding_each(y, trace.totals[step], sizes[step])
        pick = first_lowest(exact)
        if pick != winner[step, 0] or float(exact[pick]) != trace.scores[step]:
            return int(step)
    return None


def forward_greedy(
    contributions: np.ndarray,
    y: np.ndarray,
    loss: EnsembleLoss,
    *,
    start: int = 3,
    iterations: int = 50,
    allowed: np.ndarray | None = None,
) -> np.ndarray:
    """Multiplicities (n,) of the best ensemble found by greedy selection with replacement;
    ``allowed`` restricts the candidates (bagging)."""
    n = len(contributions)
    trace = run_greedy(contributions, y, loss, range(n), start=start, iterations=iterations,
                       allowed=allowed)
    counts = np.zeros(n, dtype=int)
    for position, count in trace.counts().items():
        counts[position] = count
    return counts


def bagged_forward_greedy(
    contributions: np.ndarray,
    y: np.ndarray,
    loss: EnsembleLoss,
    *,
    n_bags: int,
    bag_fraction: float,
    rng: np.random.Generator,
    start: int = 3,
    iterations: int = 50,
) -> np.ndarray:
    """Weights (n,) summed over ``n_bags`` selections, each on a random subset of models."""
    n = len(contributions)
    bag_size = max(1, int(round(bag_fraction * n)))
    weights = np.zeros(n)
    for _ in range(n_bags):
        allowed = np.sort(rng.choice(n, size=bag_size, replace=False))
        counts = forward_greedy(
            contributions, y, loss, start=start, iterations=iterations, allowed=allowed
        )
        weights += counts / counts.sum()
    return weights
