"""``posthoc``: Caruana et al.'s forward greedy ensemble selection over the finished trials.

The search itself is plain SMBO on the trials' losses; the ensemble is chosen after the
fact from all stored predictions: start from the ``start`` best models, then repeatedly
add (with replacement) the model that lowers the ensemble loss most, and keep the best
prefix. Bagging over models (``n_bags`` > 0) repeats the selection on random subsets
of the pool and pools the counts, Caruana's remedy against overfitting the validation
set. Under k-fold CV the stored predictions are out-of-fold, so the loss is minimized
over all folds at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.plugins.ensembles.pool import TrialCache, build_pool, require_ensemble_loss, resolve_loss
from ensembo.plugins.losses.ensemble_loss import EnsembleLoss, prepare_candidates
from ensembo.trials import History, Trial


def forward_greedy(
    contributions: np.ndarray,
    y: np.ndarray,
    loss: EnsembleLoss,
    *,
    start: int = 3,
    iterations: int = 50,
    allowed: np.ndarray | None = None,
) -> np.ndarray:
    """Multiplicities (n,) of the best ensemble found by greedy selection with replacement.

    ``contributions`` (n, m[, k]) are the models' shares under ``loss``; ``allowed``
    restricts the candidates (bagging). The ``start`` individually best models seed the
    ensemble; each step adds the model that gives the lowest loss (earliest model on a
    tie), and the prefix with the lowest loss is returned (shortest on a tie).
    """
    n = len(contributions)
    candidates = np.arange(n) if allowed is None else np.asarray(allowed)
    offered = contributions if allowed is None else contributions[candidates]
    singles = loss.ensemble_loss(y, offered, np.ones(len(candidates)))
    order = candidates[np.argsort(singles, kind="stable")]
    counts = np.zeros(n, dtype=int)
    seed = order[: max(1, min(start, len(order)))]
    counts[seed] += 1
    total = contributions[seed].sum(axis=0)
    best_loss = float(loss.ensemble_loss(y, total, float(len(seed))))
    best_counts = counts.copy()
    prepared = prepare_candidates(loss, offered)
    for _ in range(iterations):
        scores = prepared.adding_each(y, total, float(counts.sum()))
        pick = candidates[int(np.argmin(scores))]
        counts[pick] += 1
        total = total + contributions[pick]
        if float(np.min(scores)) < best_loss - 1e-12:
            best_loss, best_counts = float(np.min(scores)), counts.copy()
    return best_counts


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


class PostHocSelection:
    """Options: ``loss`` (default: the study's), ``start`` top-k seed (3, as BO-post),
    ``iterations`` of greedy additions (50), ``n_bags`` (0 = no bagging) and
    ``bag_fraction`` (0.5)."""

    name = "posthoc"

    def __init__(
        self,
        loss: Any = None,
        start: int = 3,
        iterations: int = 50,
        n_bags: int = 0,
        bag_fraction: float = 0.5,
    ):
        if start < 1 or iterations < 0 or n_bags < 0 or not 0 < bag_fraction <= 1:
            raise ValueError(
                f"posthoc: need start >= 1, iterations >= 0, n_bags >= 0 and 0 < bag_fraction"
                f" <= 1, got start={start}, iterations={iterations}, n_bags={n_bags}, "
                f"bag_fraction={bag_fraction}"
            )
        self.loss = loss
        self.start, self.iterations = int(start), int(iterations)
        self.n_bags, self.bag_fraction = int(n_bags), float(bag_fraction)
        self._cache = TrialCache()

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        return history.losses()

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        """Nothing to track: selection reruns over the whole pool when asked."""

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        pool = build_pool(history, context, self.name)
        if not len(pool):
            return None
        loss = require_ensemble_loss(resolve_loss(self.loss, context, pool.task), self.name)
        contributions = self._cache.contributions(pool, loss, self.loss or context.loss)
        if self.n_bags:
            rng = np.random.default_rng([context.seed, len(pool), 7])
            weights = bagged_forward_greedy(
                contributions, pool.y, loss, n_bags=self.n_bags, bag_fraction=self.bag_fraction,
                rng=rng, start=self.start, iterations=self.iterations,
            )
        else:
            weights = forward_greedy(
                contributions, pool.y, loss, start=self.start, iterations=self.iterations
            )
        return Ensemble.from_counts(dict(zip(pool.numbers, weights.tolist())))
