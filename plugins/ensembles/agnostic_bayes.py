"""``agnostic-bayes``: weight every finished trial by its posterior probability of being best.

Lacoste (thesis ch. 6): the ensemble is the weighted vote (classification) or weighted
mean (regression) of all models, with weight Pr(h* = h | S) estimated from the loss
matrix (:mod:`.best_model_posterior`). The search itself is plain SMBO on the trials'
losses. With K-fold cross-validation the stored predictions are out-of-fold and the
examples are not independent; ``rho="tune"`` then picks the effective-sample ratio ρ
from 20 values in [0.1, 0.8] by the ensemble's loss on the out-of-fold meta-set
(L1460–1464). A single holdout uses ρ = 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.plugins.ensembles.best_model_posterior import (
    SAMPLERS,
    require_zero_one,
    resample_counts,
    sample_risks,
    win_shares,
)
from ensembo.plugins.ensembles.bootstrap_wins import BootstrapWins
from ensembo.plugins.ensembles.pool import (
    Pool,
    TrialCache,
    build_pool,
    require_ensemble_loss,
    resolve_loss,
)
from ensembo.plugins.losses.ensemble_loss import combination_of
from ensembo.plugins.option_checks import non_negative, positive, whole
from ensembo.trials import History, Trial

RHO_GRID = tuple(np.linspace(0.1, 0.8, 20).tolist())
REGRESSION_PROBE_OFFSETS = (0.5, 2.5)
"""Residuals a regression loss is tried on before any trial: not 0 or 1, whose squared
and absolute errors are 0 or 1 too (an offset of 1 let mse and mae pass on whole-number
targets, and the first tell failed instead)."""


class AgnosticBayes:
    """Options: ``sampler`` (bootstrap | dirichlet | student-t), ``n_samples`` (1000, as
    the thesis), ``rho`` (a number, or ``"tune"``), ``alpha`` (Dirichlet prior α̃, 0 =
    Bayesian bootstrap) and ``loss`` (default: the study's)."""

    name = "agnostic-bayes"
    needs_predictions = True  # every completed trial must carry validation predictions

    def __init__(
        self,
        sampler: str = "bootstrap",
        n_samples: int = 1000,
        rho: float | str = 1.0,
        alpha: float = 0.0,
        loss: Any = None,
    ):
        if sampler not in SAMPLERS:
            raise ValueError(
                f"agnostic-bayes: unknown sampler {sampler!r}; valid: {', '.join(SAMPLERS)}")
        if rho != "tune":
            try:
                rho = positive("agnostic-bayes", "rho", rho)
            except ValueError:
                raise ValueError(
                    f"agnostic-bayes: rho must be a finite number > 0 or 'tune', got {rho!r}"
                ) from None
        self.sampler, self.rho = sampler, rho
        self.n_samples = whole("agnostic-bayes", "n_samples", n_samples, 1)
        self.alpha, self.loss = non_negative("agnostic-bayes", "alpha", alpha), loss
        self.chosen_rho: float | None = None
        self._cache = TrialCache()
        self._wins: dict[tuple, BootstrapWins] = {}

    @property
    def combining_losses(self) -> tuple[str, ...]:
        """Tuning rho scores the ensembles it gives; the posterior itself needs only
        per-example losses."""
        return ("loss",) if self.rho == "tune" else ()

    def loss_options(self) -> dict[str, Any]:
        """Its own loss option, checked against the study's task before any trial."""
        return {"loss": self.loss}

    def check_loss(self, option: str, loss: Any, context: EnsembleContext) -> None:
        """The posterior needs a loss per example, even when tuning rho scores whole
        ensembles (the C-bound passed as a combining loss, then failed after the first
        trial). The Dirichlet prior (``alpha`` > 0) is over right/wrong patterns: refuse,
        before any trial, a loss that scores a wrong prediction other than 1."""
        if not getattr(loss, "per_example", True):
            raise ValueError(
                f"the loss ({type(loss).__name__}) is defined on whole ensembles only, and "
                "agnostic-bayes's posterior needs a loss per example (use it as the loss of "
                "'eo' or 'posthoc')"
            )
        if self.sampler != "dirichlet" or self.alpha <= 0 or context.y_true is None:
            return
        y = np.asarray(context.y_true)
        if context.task == "classification":  # losses score class indices, not labels
            y = np.searchsorted(context.classes, y)
            wrongs = [np.eye(len(context.classes))[(y + 1) % len(context.classes)]]
        else:
            wrongs = [y.astype(float) + offset for offset in REGRESSION_PROBE_OFFSETS]
        for wrong in wrongs:
            require_zero_one(np.asarray(loss(y, wrong), dtype=float))

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        return history.losses()

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        """Nothing to track: the posterior is recomputed from the whole pool."""

    def posterior(self, pool: Pool, losses: np.ndarray, rho: float, seed: int) -> np.ndarray:
        if self.sampler == "bootstrap":
            return self._bootstrap_wins(pool, rho, seed).shares(pool.numbers, losses)
        rng = np.random.default_rng([seed, len(pool), 11])
        risks = sample_risks(
            losses, self.n_samples, rng, sampler=self.sampler, rho=rho, alpha=self.alpha
        )
        return win_shares(risks)

    def _bootstrap_wins(self, pool: Pool, rho: float, seed: int) -> BootstrapWins:
        """The bootstrap posterior, kept between iterations.

        The resamples of the validation rows do not depend on the pool, so they are drawn
        once (from the study seed): a new trial costs its risk on each resample and a look
        at the resamples it might win, the same Monte Carlo estimate as redrawing. They
        are kept as their multiplicities, a byte each: tuning ρ keeps one set per grid
        value.
        """
        m = len(pool.y)
        draws = max(1, math.ceil(rho * m))
        key = (m, draws, self.n_samples, seed, hash(np.asarray(pool.y).tobytes()))
        if key not in self._wins:
            counts = resample_counts(m, draws, self.n_samples, np.random.default_rng([seed, 11]))
            self._wins[key] = BootstrapWins(counts, draws=draws)
        return self._wins[key]

    def _tuned_rho(self, pool: Pool, loss: Any, losses: np.ndarray, seed: int) -> float:
        combiner = require_ensemble_loss(loss, self.name)
        contributions = self._cache.contributions(pool, combiner, ("tune", repr(self.loss)))
        position = {number: i for i, number in enumerate(pool.numbers)}
        scores = []
        for rho in RHO_GRID:
            # Scored as the ensemble it gives, at its size (as the report scores it).
            ensemble = self._ensemble(pool, self.posterior(pool, losses, rho, seed), loss)
            rows = contributions[[position[m] for m in ensemble.members]]
            totals = np.tensordot(ensemble.counts, rows, axes=1)
            scores.append(float(combiner.ensemble_loss(pool.y, totals, ensemble.size)))
        return RHO_GRID[int(np.argmin(scores))]

    @staticmethod
    def _ensemble(pool: Pool, weights: np.ndarray, loss: Any) -> Ensemble:
        """Every trial with its posterior weight, one voter each, combined as ``loss`` does."""
        return Ensemble.from_weights(dict(zip(pool.numbers, weights.tolist(), strict=True)),
                                     combination=combination_of(loss))

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        pool = build_pool(history, context, self.name, self._cache)
        if not len(pool):
            return None
        loss = resolve_loss(self.loss, context, pool.task)
        losses = self._cache.loss_matrix(pool, loss, self.loss or context.loss)
        rho = (
            self._tuned_rho(pool, loss, losses, context.seed)
            if self.rho == "tune" else float(self.rho)
        )
        self.chosen_rho = rho
        return self._ensemble(pool, self.posterior(pool, losses, rho, context.seed), loss)
