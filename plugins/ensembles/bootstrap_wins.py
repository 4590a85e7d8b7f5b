"""Which model wins on each of a fixed set of resamples, kept current as trials arrive.

Bootstrap Agnostic Bayes and ESMBO both weigh the pool by how often each model has the
lowest risk on resamples of the validation set, and both keep the resamples fixed for
the whole study. So a trial's risks on every resample are one matrix-vector product,
computed once, and a new trial changes the winners only on the resamples where it ties
or beats the current lowest risk: only those are looked at again. The shares are those
of :func:`~.best_model_posterior.win_shares` on the whole risk matrix (same ties, same
tolerance), up to rounding in the last bits of the average.
"""

from __future__ import annotations

import numpy as np

from ensembo.plugins.ensembles.best_model_posterior import TIE_TOLERANCE
from ensembo.plugins.ensembles.pool import RowStack


class BootstrapWins:
    """``weights`` (s, m): the weight of validation example i in resample j (its
    multiplicity over the number of draws), so a model's risks are ``weights @ losses``.

    Given ``draws``, ``weights`` are the multiplicities themselves, kept in their small
    integer type (a byte rather than eight) and divided by ``draws`` only while new
    trials' risks are computed, to the same weights and risks.
    """

    def __init__(self, weights: np.ndarray, draws: int | None = None):
        self.weights = np.asarray(weights, dtype=None if draws else float)
        self.draws = draws
        self._risks = RowStack()
        self._reset()

    def _float_weights(self) -> np.ndarray:
        return self.weights if self.draws is None else self.weights / self.draws

    def _reset(self) -> None:
        samples = len(self.weights)
        self._numbers: tuple[int, ...] = ()
        self._winners = np.zeros((16, samples))  # row per trial: 1.0 on the resamples it wins
        self._counts = np.zeros(samples)  # winners per resample
        self._lowest = np.full(samples, np.inf)

    def risks(self, numbers: tuple[int, ...], losses: np.ndarray) -> np.ndarray:
        """(n, s) risk of each pool trial on each resample; ``losses`` is the (m, n) matrix."""
        weights = None

        def risk_row(i: int) -> np.ndarray:
            nonlocal weights  # divided once per call, and only when a row is missing
            weights = self._float_weights() if weights is None else weights
            # an infinite loss on an example a resample leaves out (weight 0) made the
            # risk NaN, and a NaN lowest risk let no later trial win that resample
            return weights @ np.minimum(losses[:, i], np.finfo(float).max)

        return self._risks.rows(numbers, risk_row)

    def shares(self, numbers: tuple[int, ...], losses: np.ndarray) -> np.ndarray:
        """(n,) fraction of resamples each pool trial wins, ties splitting a resample."""
        numbers = tuple(numbers)
        risks = self.risks(numbers, losses)
        if numbers[: len(self._numbers)] != self._numbers:
            self._reset()  # a trial finished out of order: count the wins afresh
        if len(numbers) > len(self._numbers):
            self._absorb(risks, len(self._numbers))
            self._numbers = numbers
        winners = self._winners[: len(numbers)]
        return winners @ (1.0 / self._counts) / len(self.weights)

    def _absorb(self, risks: np.ndarray, known: int) -> None:
        """Winners after the trials at positions ``known:`` joined the pool."""
        n = len(risks)
        if n > len(self._winners):
            grown = np.zeros((2 * n, len(self.weights)))
            grown[:known] = self._winners[:known]
            self._winners = grown
        arriving = risks[known:].min(axis=0)
        # Elsewhere the newcomers lose and the old winners stay: nothing to redo.
        touched = np.flatnonzero(arriving <= self._lowest + TIE_TOLERANCE)
        self._lowest = np.minimum(self._lowest, arriving)
        self._winners[known:n] = 0.0
        self._winners[:n, touched] = risks[:, touched] <= self._lowest[touched] + TIE_TOLERANCE
        self._counts[touched] = self._winners[:n, touched].sum(axis=0)
