"""The contract between ensembo and its plugins.

Each plugin kind is a small :class:`typing.Protocol`. A registered factory is called
with the user's options as keyword arguments and must return an object satisfying the
protocol of its kind; the registry checks this on first build and names the plugin if
it does not. Context (the space, the history, a random generator) arrives per call,
never through setters.

Shapes: ``n`` configurations, ``d`` encoded dimensions, ``m`` validation examples.

Two ways to propose configurations exist side by side:

* the composed path — :class:`Surrogate` → :class:`Acquisition` →
  :class:`AcquisitionOptimizer` — used by GP and random-forest surrogates;
* a :class:`Proposer`, which a surrogate plugin may return instead when it brings its
  own acquisition and candidate sampler (TPE does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ensembo.ensemble import Ensemble, EnsembleContext
    from ensembo.spaces import EncodedBatch, Space
    from ensembo.trials import History, Trial

@runtime_checkable
class Surrogate(Protocol):
    """A regression model of the targets over encoded configurations."""

    def fit(self, batch: EncodedBatch, y: np.ndarray, rng: np.random.Generator) -> None:
        """Fit to ``batch`` (n configurations) and targets ``y`` of shape (n,)."""

    def predict(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        """Predictive mean and variance, each of shape (n,)."""


@runtime_checkable
class DifferentiableSurrogate(Surrogate, Protocol):
    """A surrogate whose mean and variance have input gradients (for L-BFGS)."""

    def predict_with_gradients(
        self, batch: EncodedBatch
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Mean (n,), variance (n,), d mean/dx (n, d), d variance/dx (n, d)."""


@runtime_checkable
class SampledSurrogate(Surrogate, Protocol):
    """A surrogate holding several posteriors, e.g. one per MCMC hyperparameter sample.

    Acquisitions are then *integrated*: computed under each posterior and averaged,
    rather than applied to the mixture's mean and variance. S is the sample count.
    """

    def predict_samples(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        """Per-sample mean and variance, each of shape (S, n)."""

    def predict_samples_with_gradients(
        self, batch: EncodedBatch
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Mean (S, n), variance (S, n), d mean/dx (S, n, d), d variance/dx (S, n, d)."""


@runtime_checkable
class Resumable(Protocol):
    """Optional for surrogates and proposers whose fits depend on earlier fits (a warm
    start, a Markov chain). The study stores ``state()`` after each model-based
    proposal and passes it to ``restore`` when it is resumed, so that a resumed run
    proposes what the uninterrupted run would have."""

    def state(self) -> Any:
        """What the next fit depends on, as JSON values (``None``: nothing yet)."""

    def restore(self, state: Any) -> None:
        """Continue from ``state``, a value ``state()`` returned."""


@runtime_checkable
class Acquisition(Protocol):
    """Utility of a point from its predictive mean and variance; higher is better.

    Acquisitions are pure functions of the posterior so that any surrogate giving a
    mean and a variance can use any of them. ``best`` is the incumbent target value
    (targets are minimized). An acquisition that returns the log of a utility (log-EI)
    sets the class attribute ``log_space = True``: under sampled GP hyperparameters its
    values are then combined as the log of the mean utility, not averaged.
    """

    def __call__(self, mean: np.ndarray, variance: np.ndarray, best: float) -> np.ndarray:
        """Acquisition values, shape (n,)."""

    def gradient(
        self, mean: np.ndarray, variance: np.ndarray, best: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Partial derivatives with respect to mean and to variance, each (n,)."""


@runtime_checkable
class AcquisitionOptimizer(Protocol):
    """Finds configurations that maximize an acquisition surface over a space."""

    def maximize(
        self,
        surface: AcquisitionSurface,
        space: Space,
        history: History,
        n: int,
        rng: np.random.Generator,
    ) -> list[dict[str, Any]]:
        """Return ``n`` distinct valid configurations, best first."""


@runtime_checkable
class AcquisitionSurface(Protocol):
    """A fitted surrogate composed with an acquisition, scored on encoded batches.

    The study's surface also has ``targets`` (what the surrogate was fit to, one per
    completed trial) and, for a differentiable surrogate, ``score_with_gradient``; an
    optimizer should use them only when present (``getattr(surface, "targets", None)``).
    """

    def score(self, batch: EncodedBatch) -> np.ndarray:
        """Acquisition values, shape (n,)."""


@runtime_checkable
class Proposer(Protocol):
    """Proposes configurations directly from the history (TPE, random search)."""

    def propose(
        self,
        space: Space,
        history: History,
        targets: np.ndarray,
        n: int,
        rng: np.random.Generator,
    ) -> list[dict[str, Any]]:
        """Return ``n`` configurations; ``targets`` align with ``history.completed()``."""


@runtime_checkable
class InitialDesign(Protocol):
    """Configurations evaluated before any model is fit."""

    def configs(self, space: Space, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        """Return ``n`` valid configurations."""


@runtime_checkable
class Loss(Protocol):
    """Per-example loss of predictions against the truth (lower is better)."""

    def __call__(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        """Per-example losses, shape (m,)."""


@runtime_checkable
class EnsembleLoss(Protocol):
    """The ensemble side of a :class:`Loss`, which strategies that score combinations of
    models (``posthoc``, ``eo``, ``segor``, ``agnostic-bayes`` with ``rho: tune``) need:
    see :mod:`ensembo.plugins.losses.ensemble_loss`. ``totals`` are the members'
    contributions summed with their weights; ``size`` is the ensemble's size m."""

    def contributions(self, predictions: np.ndarray) -> np.ndarray:
        """A member's share of the ensemble total, from its stored predictions."""

    def ensemble_loss(
        self, y_true: np.ndarray, totals: np.ndarray, size: float | np.ndarray
    ) -> np.ndarray:
        """Mean loss over examples; ``totals`` (..., m[, k]) -> shape (...)."""


@runtime_checkable
class EnsembleStrategy(Protocol):
    """Decides what the surrogate models and which trials form the ensemble.

    ``targets`` may re-label the whole history every iteration (EO, SEGOR), so it gets
    the full history each time; ``update`` sees each finished trial once, in finishing
    order (a resumed study replays its stored trials; a trial whose ``update`` raised is
    offered again with the next result). The
    ``context`` carries the validation labels and the loss that trial predictions are
    scored with.
    """

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        """Surrogate targets aligned with ``history.completed()``, shape (n,)."""

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        """Account for a newly finished trial."""

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        """The current ensemble, or ``None`` before any trial completed."""


PROTOCOLS: Mapping[str, type] = {
    "surrogate": Surrogate,
    "acquisition": Acquisition,
    "acquisition_optimizer": AcquisitionOptimizer,
    "initial_design": InitialDesign,
    "ensemble_strategy": EnsembleStrategy,
    "loss": Loss,
}
"""Protocol per component kind; a surrogate may also be a :class:`Proposer`."""

__all__ = [
    "Acquisition",
    "AcquisitionOptimizer",
    "AcquisitionSurface",
    "DifferentiableSurrogate",
    "EnsembleLoss",
    "EnsembleStrategy",
    "InitialDesign",
    "Loss",
    "PROTOCOLS",
    "Proposer",
    "Resumable",
    "SampledSurrogate",
    "Surrogate",
]

