"""``posthoc``: Caruana et al.'s forward greedy ensemble selection over the finished trials.

The search itself is plain SMBO on the trials' losses; the ensemble is chosen after the
fact from all stored predictions: start from the ``start`` best models, then repeatedly
add (with replacement) the model that lowers the ensemble loss most, and keep the best
prefix. Bagging over models (``n_bags`` > 0) repeats the selection on random subsets
of the pool and pools the counts, Caruana's remedy against overfitting the validation
set. Under k-fold CV the stored predictions are out-of-fold, so the loss is minimized
over all folds at once.

Without bagging the selection is kept current incrementally (:mod:`.greedy`): a new
trial that cannot change any greedy step costs one batched scoring, and the result is
always the one a fresh selection over the whole pool gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.plugins.ensembles.greedy import (
    GreedyTrace,
    bagged_forward_greedy,
    run_greedy,
    updated_trace,
)
from ensembo.plugins.ensembles.pool import (
    TrialCache,
    build_pool,
    require_ensemble_loss,
    resolve_loss,
)
from ensembo.plugins.losses.ensemble_loss import combination_of
from ensembo.plugins.option_checks import share, whole
from ensembo.trials import History, Trial


class PostHocSelection:
    """Options: ``loss`` (default: the study's), ``start`` top-k seed (3, as BO-post),
    ``iterations`` of greedy additions (50), ``n_bags`` (0 = no bagging) and
    ``bag_fraction`` (0.5)."""

    name = "posthoc"
    needs_predictions = True  # every completed trial must carry validation predictions
    combining_losses = ("loss",)  # it scores combinations of models with its loss

    def __init__(
        self,
        loss: Any = None,
        start: int = 3,
        iterations: int = 50,
        n_bags: int = 0,
        bag_fraction: float = 0.5,
    ):
        self.loss = loss
        self.start = whole("posthoc", "start", start, 1)
        self.iterations = whole("posthoc", "iterations", iterations, 0)
        self.n_bags = whole("posthoc", "n_bags", n_bags, 0)
        self.bag_fraction = share("posthoc", "bag_fraction", bag_fraction)
        self._cache = TrialCache()
        self._trace: GreedyTrace | None = None
        self._trace_key: tuple | None = None

    def loss_options(self) -> dict[str, Any]:
        """Its own loss option, checked against the study's task before any trial."""
        return {"loss": self.loss}

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        return history.losses()

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        """Nothing to track here: :meth:`ensemble` brings the selection up to date."""

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        pool = build_pool(history, context, self.name, self._cache)
        if not len(pool):
            return None
        loss = require_ensemble_loss(resolve_loss(self.loss, context, pool.task), self.name)
        contributions = self._cache.contributions(pool, loss, self.loss or context.loss)
        combination = combination_of(loss)
        if self.n_bags:
            rng = np.random.default_rng([context.seed, len(pool), 7])
            weights = bagged_forward_greedy(
                contributions, pool.y, loss, n_bags=self.n_bags, bag_fraction=self.bag_fraction,
                rng=rng, start=self.start, iterations=self.iterations,
            )
            return Ensemble.from_weights(dict(zip(pool.numbers, weights.tolist(), strict=True)),
                                         combination=combination)
        key = (repr(self.loss or context.loss), hash(np.asarray(pool.y).tobytes()))
        # The pool as greedy candidates, kept between iterations (vote positions per trial).
        prepared = self._cache.candidates(pool, loss, self.loss or context.loss)
        options = {"start": self.start, "iterations": self.iterations, "prepared": prepared}
        if self._trace is None or self._trace_key != key:
            self._trace = run_greedy(contributions, pool.y, loss, pool.numbers, **options)
        else:
            self._trace = updated_trace(self._trace, contributions, pool.y, loss, pool.numbers,
                                        **options)
        self._trace_key = key
        return Ensemble.from_counts(self._trace.counts(), combination=combination)
