"""``stacking``: weights the trials' validation predictions with a ridge meta-learner.

Stacked regression (Breiman, 1996, "Stacked regressions", Machine Learning 24) fits a
linear model of the validation targets on the base models' predictions and constrains
its coefficients to be non-negative; the Super Learner (van der Laan, Polley and
Hubbard, 2007) normalizes them to a convex combination. Here the meta-learner is a
non-negative ridge regression solved as NNLS on the ridge-augmented system

    minimize ||P w - y||² + alpha ||w||²   subject to w >= 0,

over the ``max_candidates`` trials with the lowest loss. Trials whose normalized weight
is below ``min_weight`` are dropped. Probabilities of a classifier are stacked class by
class against one-hot labels; label predictions are one-hot encoded first.

The surrogate models the trials' own losses, as with the ``best`` strategy: stacking is
a post-hoc combination and does not re-label the history. Without validation targets
or predictions the ensemble is the single best trial.
"""

from __future__ import annotations

import numpy as np
from ensembo import Ensemble, EnsembleContext, History, Trial
from scipy.optimize import nnls

from ensembo_plugin_example.errors import OptionError


def nonnegative_ridge(features: np.ndarray, target: np.ndarray, alpha: float) -> np.ndarray:
    """Coefficients w >= 0 minimizing ||features w - target||² + alpha ||w||²."""
    n_columns = features.shape[1]
    augmented = np.vstack([features, np.sqrt(alpha) * np.eye(n_columns)])
    padded = np.concatenate([target, np.zeros(n_columns)])
    weights, _ = nnls(augmented, padded)
    return weights


def _one_hot(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return (np.asarray(labels)[:, None] == classes[None, :]).astype(float)


class Stacking:
    """Options: ``alpha`` (ridge penalty), ``max_candidates``, ``min_weight``."""

    def __init__(self, alpha: float = 1e-3, max_candidates: int = 20, min_weight: float = 0.01):
        if not isinstance(alpha, int | float) or alpha < 0:
            raise OptionError("ensemble strategy 'stacking'", "alpha", alpha, "a number >= 0")
        if (
            isinstance(max_candidates, bool)
            or not isinstance(max_candidates, int)
            or max_candidates < 1
        ):
            raise OptionError(
                "ensemble strategy 'stacking'", "max_candidates", max_candidates, "an integer >= 1"
            )
        if not isinstance(min_weight, int | float) or not 0 <= min_weight < 1:
            raise OptionError("ensemble strategy 'stacking'", "min_weight", min_weight, "in [0, 1)")
        self.alpha = float(alpha)
        self.max_candidates = max_candidates
        self.min_weight = float(min_weight)

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        return history.losses()

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        """Nothing to track: the meta-learner is refit from the history on demand."""

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        best = history.best()
        if best is None:
            return None
        candidates = sorted(
            (t for t in history.completed() if t.predictions is not None), key=lambda t: t.loss
        )[: self.max_candidates]
        if not context.has_predictions or len(candidates) < 2:
            return Ensemble.single(best.number)
        features, target = self._design(candidates, context)
        weights = nonnegative_ridge(features, target, self.alpha)
        if weights.sum() <= 0:
            return Ensemble.single(best.number)
        weights = weights / weights.sum()
        kept = {
            t.number: w for t, w in zip(candidates, weights, strict=True) if w >= self.min_weight
        }
        if not kept:
            return Ensemble.single(best.number)
        return Ensemble.from_weights(kept)

    @staticmethod
    def _design(candidates: list[Trial], context: EnsembleContext) -> tuple[np.ndarray, np.ndarray]:
        """Meta-features (rows: examples x outputs, columns: trials) and the target."""
        y_true = np.asarray(context.y_true)
        first = np.asarray(candidates[0].predictions)
        if context.task != "classification" and first.ndim == 1:
            columns = [np.asarray(t.predictions, dtype=float) for t in candidates]
            return np.column_stack(columns), y_true.astype(float)
        classes = np.asarray(context.classes) if context.classes is not None else np.unique(y_true)
        columns = []
        for trial in candidates:
            predictions = np.asarray(trial.predictions)
            probabilities = _one_hot(predictions, classes) if predictions.ndim == 1 else predictions
            columns.append(probabilities.astype(float).ravel())
        return np.column_stack(columns), _one_hot(y_true, classes).ravel()
