"""``esmbo``: Sequential Model-Based Ensemble Optimization (Lacoste et al., seed 000).

N bootstrap replicates S'_1..S'_N of the validation set define N hyperparameter
optimization problems that share every trained model: the risk of a trial on S'_j is a
resampled mean of its cached per-example losses, so all N histories are updated for
free. Proposals go round-robin: trial number k is proposed by the surrogate fit to
bootstrap (k mod N). The ensemble is the multiset {argmin_h R_{S'_j}(h)}_j, each member
weighted by how many bootstraps chose it (Algorithm 2, Eq. 8.5–8.6); a tie within one
bootstrap splits its unit evenly. Default N = ⌊budget/2⌋ (L1803), or 10 when the study
has no budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.plugins.ensembles.best_model_posterior import resample_counts
from ensembo.plugins.ensembles.bootstrap_wins import BootstrapWins
from ensembo.plugins.ensembles.pool import Pool, TrialCache, build_pool, resolve_loss
from ensembo.plugins.losses.ensemble_loss import combination_of
from ensembo.plugins.option_checks import whole
from ensembo.trials import History, Trial

FALLBACK_BOOTSTRAPS = 10


class ESMBO:
    """Options: ``n_bootstraps`` (default ⌊budget/2⌋) and ``loss`` (default: the study's)."""

    name = "esmbo"
    needs_predictions = True  # every completed trial must carry validation predictions

    def __init__(self, n_bootstraps: int | None = None, loss: Any = None):
        self.n_bootstraps = (
            None if n_bootstraps is None else whole("esmbo", "n_bootstraps", n_bootstraps, 1)
        )
        self.loss = loss
        self._counts: np.ndarray | None = None
        self._wins: BootstrapWins | None = None
        self._wins_key: tuple | None = None
        self._cache = TrialCache()

    def size(self, context: EnsembleContext) -> int:
        if self.n_bootstraps is not None:
            return int(self.n_bootstraps)
        if context.budget:
            return max(1, context.budget // 2)
        return FALLBACK_BOOTSTRAPS

    def bootstrap_counts(self, context: EnsembleContext, m: int) -> np.ndarray:
        """(N, m): how often each validation example appears in each replicate S'_j."""
        n = self.size(context)
        if self._counts is None or self._counts.shape != (n, m):
            rng = np.random.default_rng([context.seed, 13])
            self._counts, self._wins = resample_counts(m, m, n, rng), None
        return self._counts

    def _bootstraps(self, pool: Pool, context: EnsembleContext) -> tuple[BootstrapWins, np.ndarray]:
        """The N histories (kept between iterations) and the pool's loss matrix."""
        loss = resolve_loss(self.loss, context, pool.task)
        losses = self._cache.loss_matrix(pool, loss, self.loss or context.loss)
        counts = self.bootstrap_counts(context, len(pool.y))
        key = (repr(self.loss or context.loss), hash(np.asarray(pool.y).tobytes()))
        if self._wins is None or self._wins_key != key:
            self._wins, self._wins_key = BootstrapWins(counts / len(pool.y)), key
        return self._wins, losses

    def risks(self, pool: Pool, context: EnsembleContext) -> np.ndarray:
        """(N, n): risk of every completed trial on every bootstrap replicate."""
        wins, losses = self._bootstraps(pool, context)
        return wins.risks(pool.numbers, losses).T

    def proposer_index(self, history: History, context: EnsembleContext) -> int:
        """Which bootstrap proposes the next trial: its number modulo N."""
        return len(history) % self.size(context)

    def loss_options(self) -> dict[str, Any]:
        """Its own loss option, checked against the study's task before any trial."""
        return {"loss": self.loss}

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        pool = build_pool(history, context, self.name, self._cache)
        if not len(pool):
            return np.empty(0)
        wins, losses = self._bootstraps(pool, context)
        return wins.risks(pool.numbers, losses)[:, self.proposer_index(history, context)].copy()

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        """Nothing to track: every history is a re-weighting of the cached losses."""

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        pool = build_pool(history, context, self.name, self._cache)
        if not len(pool):
            return None
        wins, losses = self._bootstraps(pool, context)
        shares = wins.shares(pool.numbers, losses)
        loss = resolve_loss(self.loss, context, pool.task)
        # The multiset of the N bootstraps' winners: m = N voters.
        return Ensemble.from_weights(dict(zip(pool.numbers, shares.tolist(), strict=True)),
                                     size=self.size(context), combination=combination_of(loss))
