"""How a study turns its history into the next configurations.

Everything that proposes is a :class:`~ensembo.protocols.Proposer`. Random search and
TPE-like plugins implement it directly; :class:`ModelBasedProposer` composes a
surrogate, an acquisition and an acquisition optimizer. Pending trials (handed out,
not yet told) enter the surrogate as fantasies (kriging believer or constant liar) so
that parallel suggestions differ.

Asks with pending trials are the parallel driver's bottleneck: a worker waits while
the driver proposes. So a surrogate that can be *conditioned* (the GP: add points,
redo the Cholesky factor, keep the hyperparameters) keeps its fit on the finished
trials until a new result arrives and takes the fantasies without a second
hyperparameter fit. A surrogate that cannot be conditioned (the forest) is refitted
with the fantasies anyway, and its fit on the finished trials, whose means the
kriging believer tells, is made afresh on every ask too: a study resumed with trials
pending then proposes as the uninterrupted one.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np
from scipy.special import logsumexp

from ensembo.attribution import calling
from ensembo.errors import PluginContractError
from ensembo.protocols import (
    Acquisition,
    AcquisitionOptimizer,
    Resumable,
    SampledSurrogate,
    Surrogate,
)
from ensembo.spaces import EncodedBatch, Space
from ensembo.trial_vectors import TrialVectors
from ensembo.trials import History, Trial

logger = logging.getLogger(__name__)


class RandomProposer:
    """Random search: configurations from the space's prior."""

    def propose(
        self, space: Space, history: History, targets: np.ndarray, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        return space.sample(n, rng)


def check_posterior(mean: Any, variance: Any, n: int) -> None:
    """A surrogate's predictions must be usable: with a wrong shape the acquisition
    optimizer failed in its own code, and with NaN or a negative variance every
    acquisition value was NaN and the search silently stopped using the model."""
    mean, variance = np.asarray(mean), np.asarray(variance)
    if mean.shape != (n,) or variance.shape != (n,):
        raise PluginContractError(
            f"predict returned shapes {mean.shape} and {variance.shape} for {n} configurations"
        )
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(variance))):
        raise PluginContractError("predict returned NaN or infinite means or variances")
    _check_variance_sign(variance, "predict")


def check_gradients(predicted: Any, shape: tuple[int, ...], d: int, method: str) -> None:
    """The gradients that steer local search must be as usable as the predictions
    (:func:`check_posterior`): d mean/dx of shape (n,) failed in numpy's matmul inside
    the acquisition optimizer, which the error then blamed, and NaN gradients were
    followed without a word. ``shape`` is the mean's: (n,), or (S, n) per sample."""
    arrays = tuple(np.asarray(a) for a in predicted)
    expected = (shape, shape, (*shape, d), (*shape, d))
    found = tuple(a.shape for a in arrays)
    if found != expected:
        raise PluginContractError(
            f"{method} returned shapes {', '.join(map(str, found))} for {shape[-1]} "
            f"configurations of {d} dimensions; expected {', '.join(map(str, expected))}"
        )
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise PluginContractError(
            f"{method} returned NaN or infinite means, variances or gradients"
        )
    _check_variance_sign(arrays[1], method)


def _check_variance_sign(variance: np.ndarray, method: str) -> None:
    """Rounding may make a variance slightly negative; more than that is a bug."""
    if np.any(variance < -1e-9 * max(1.0, float(np.max(np.abs(variance))))):
        raise PluginContractError(f"{method} returned a negative variance ({variance.min():.3g})")


class SurrogateAcquisition:
    """A fitted surrogate composed with an acquisition (an ``AcquisitionSurface``).
    ``targets`` are what the surrogate was fit to, one per completed trial: optimizers
    start from the best of them (ensemble strategies re-label trials, so the best
    target need not be the best loss)."""

    def __init__(
        self,
        surrogate: Surrogate,
        acquisition: Acquisition,
        best: float,
        targets: np.ndarray | None = None,
    ):
        self.surrogate = surrogate
        self.acquisition = acquisition
        self.best = best
        self.targets = targets

    def score(self, batch: EncodedBatch) -> np.ndarray:
        if isinstance(self.surrogate, SampledSurrogate):  # integrate over the samples
            with calling("surrogate", self.surrogate, "predict_samples", _SAMPLED):
                means, variances = self.surrogate.predict_samples(batch)
            with calling("acquisition", self.acquisition, "__call__"):
                values = self.acquisition(means, variances, self.best)
            if in_log_space(self.acquisition):
                return logsumexp(values, axis=0) - np.log(len(values))
            return values.mean(0)
        with calling("surrogate", self.surrogate, "predict", _MEAN_VARIANCE):
            mean, variance = self.surrogate.predict(batch)
            check_posterior(mean, variance, len(batch))
        with calling("acquisition", self.acquisition, "__call__"):
            return self.acquisition(mean, variance, self.best)

    def score_with_gradient(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        """Values (n,) and input gradients (n, d); needs a differentiable surrogate."""
        sampled = isinstance(self.surrogate, SampledSurrogate)
        method = "predict_samples_with_gradients" if sampled else "predict_with_gradients"
        n, d = batch.values.shape
        with calling("surrogate", self.surrogate, method, _WITH_GRADIENTS):
            mean, variance, d_mean, d_variance = getattr(self.surrogate, method)(batch)
            shape = (*np.shape(mean)[:1], n) if sampled else (n,)
            check_gradients((mean, variance, d_mean, d_variance), shape, d, method)
        with calling("acquisition", self.acquisition, "gradient", "(d/d mean, d/d variance)"):
            values = self.acquisition(mean, variance, self.best)
            by_mean, by_variance = self.acquisition.gradient(mean, variance, self.best)
        gradient = by_mean[..., None] * d_mean + by_variance[..., None] * d_variance
        if sampled and in_log_space(self.acquisition):
            return _log_mean_exp(values, gradient)
        if sampled:
            return values.mean(0), gradient.mean(0)
        return values, gradient


def in_log_space(acquisition: Acquisition) -> bool:
    """Whether ``acquisition`` returns the log of a utility, so that its values under
    hyperparameter samples integrate as the log of their mean utility, not as their
    mean (the mean of log-EI is the log of EI's geometric mean, whose maximizer had up
    to 64% less integrated EI). Declared by the class attribute ``log_space = True``."""
    return getattr(acquisition, "log_space", False) is True


def _log_mean_exp(values: np.ndarray, gradient: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log mean_s exp(values_s)`` (S, n) -> (n,) and its gradient, the mean of the
    per-sample gradients (S, n, d) weighted by the softmax of the values over samples
    (a sample of weight 0, say of value -inf, contributes nothing, whatever its gradient)."""
    combined = logsumexp(values, axis=0)
    with np.errstate(invalid="ignore"):
        weights = np.exp(values - combined)
    weights = np.where(np.isfinite(combined), weights, 1.0 / len(values))  # all -inf
    weighted = np.where(weights[..., None] > 0, weights[..., None] * gradient, 0.0)
    return combined - np.log(len(values)), weighted.sum(0)


_MEAN_VARIANCE = "(mean, variance), two arrays of shape (n,)"
_SAMPLED = "(means, variances), two arrays of shape (s, n)"
_WITH_GRADIENTS = "(mean, variance, d mean/dx, d variance/dx)"


def constant_liar(targets: np.ndarray) -> float:
    """The lie told for pending points: the best target so far (CL-min).

    Lying optimistically makes the acquisition near a pending point collapse, which
    pushes the next suggestion elsewhere.
    """
    return float(np.min(targets))


SEARCH_UNITS = (1e-100, 1e100)
"""Typical target magnitudes the surrogate and acquisition see unchanged. Beyond them a
surrogate's variance in target units (its scale squared times a standardized variance)
under- or overflows, and targets above ``scaling.TARGET_LIMIT`` are clipped to one
value: with every loss near 1e-300 or above 1e150 the GP and forest proposals no
longer depended on the results (the search went blind) and the acquisition overflowed."""


def search_shift(targets: np.ndarray) -> int:
    """The power of two that brings the targets' median magnitude near 1 when it lies
    outside :data:`SEARCH_UNITS`, else 0; never so large that the largest finite target
    overflows (losses spanning more than the float range turned an ordinary one into
    -inf, the best trial into the worst)."""
    magnitudes = np.abs(targets[np.isfinite(targets) & (targets != 0)])
    if magnitudes.size == 0:
        return 0
    typical = float(np.median(magnitudes))
    if SEARCH_UNITS[0] <= typical <= SEARCH_UNITS[1]:
        return 0
    largest = int(np.frexp(float(np.max(magnitudes)))[1])
    return min(-int(np.frexp(typical)[1]), _LARGEST_EXPONENT - largest)


_LARGEST_EXPONENT = 480
"""2**480 is about 3e144: below the surrogates' clip of targets at 1e150
(``scaling.TARGET_LIMIT``), so the incumbent the acquisition is given stays comparable
with the predictions (an incumbent of -6e300 beside predictions clipped at -1e150 made
EI infinite everywhere, and the proposal arbitrary)."""


def in_search_units(targets: np.ndarray, shift: int | None = None) -> np.ndarray:
    """``targets`` times ``2**shift`` (by default :func:`search_shift`'s). A power of two
    scales exactly, so a surrogate that standardizes its targets fits the same model bit
    for bit, and failed (infinite) and NaN targets stay what they are."""
    shift = search_shift(targets) if shift is None else shift
    return targets if shift == 0 else np.ldexp(targets, shift)


def acquisition_in_search_units(acquisition: Acquisition, shift: int) -> Acquisition:
    """``acquisition`` with its ``xi`` (a required improvement, in target units) scaled
    like the targets, so it keeps its meaning; a copy, the study's own is left as it is.
    Where a plugin's ``xi`` cannot be read or set (a read-only property), the acquisition
    is used as it is and its ``xi`` counts in the scaled units, which is said once: going
    back to unscaled targets made the search blind, and a property that raised failed
    every ask."""
    if shift == 0:
        return acquisition
    try:
        xi = getattr(acquisition, "xi", None)
        if not xi:
            return acquisition
        scaled_xi = float(np.ldexp(xi, shift))
        if attrs.has(type(acquisition)):
            return attrs.evolve(acquisition, xi=scaled_xi)
        if dataclasses.is_dataclass(acquisition):
            return dataclasses.replace(acquisition, xi=scaled_xi)
        scaled = copy.copy(acquisition)
        scaled.xi = scaled_xi
        return scaled
    except Exception:  # whatever the plugin's class refuses, it refuses alike
        _say_xi_unscaled(acquisition, shift)
        return acquisition


_SAID_XI_UNSCALED: set[str] = set()


def _say_xi_unscaled(acquisition: Acquisition, shift: int) -> None:
    name = type(acquisition).__qualname__
    if name not in _SAID_XI_UNSCALED:
        _SAID_XI_UNSCALED.add(name)
        logger.warning(
            "the targets are scaled by 2**%d (their typical magnitude is beyond 1e±100), but "
            "%s's xi cannot be scaled with them: it counts in the scaled units", shift, name,
        )


FANTASIES = ("constant-liar", "kriging-believer")


@runtime_checkable
class ConditionableSurrogate(Surrogate, Protocol):
    """A surrogate that can take extra observations without refitting its
    hyperparameters (cheap: for a GP, one Cholesky factorization)."""

    def conditioned(self, batch: EncodedBatch, y: np.ndarray) -> Surrogate:
        """A copy that also observed ``y`` at ``batch``; ``self`` is left unchanged."""
        ...


class ModelBasedProposer:
    """Surrogate -> acquisition -> acquisition optimizer.

    ``fantasy`` is what pending points are told: ``constant-liar`` (the best target)
    or ``kriging-believer`` (the surrogate's own mean there, from the fit on the
    completed trials: the mean stays, the uncertainty at pending points goes). The
    acquisition's incumbent stays the best *real* target. Counting a believed value
    as the one to beat kills refinement next to a pending point, and in the FIFO
    replay of 8 workers (``docs/benchmarks.md``, issue 9) that cost Branin and
    Hartmann3 one to two orders of magnitude of final regret.
    """

    def __init__(
        self,
        surrogate: Surrogate,
        acquisition: Acquisition,
        optimizer: AcquisitionOptimizer,
        fantasy: str = "constant-liar",
    ):
        if fantasy not in FANTASIES:
            raise ValueError(
                f"unknown fantasy {fantasy!r} for pending points; valid: {', '.join(FANTASIES)}"
            )
        self.surrogate = surrogate
        self.acquisition = acquisition
        self.optimizer = optimizer
        self.fantasy = fantasy
        self._fitted_on: tuple | None = None  # what ``surrogate`` was last fitted on
        # Each trial's vector made and checked once, not every trial's on every ask.
        self._vectors = TrialVectors(check=True)

    def state(self) -> Any:
        """The surrogate's :class:`~ensembo.protocols.Resumable` state, if it has one."""
        return self.surrogate.state() if isinstance(self.surrogate, Resumable) else None

    def restore(self, state: Any) -> None:
        if isinstance(self.surrogate, Resumable):
            self.surrogate.restore(state)

    def _encode(self, space: Space, trials: list[Trial]) -> EncodedBatch:
        """``space.encode`` of the trials' configurations, from vectors kept by trial
        number (:class:`~ensembo.trial_vectors.TrialVectors`, checked as ``encode``
        checks): the same batch, bit for bit, and the same refusal of a configuration
        ``encode`` cannot encode. Made before ``calling`` the surrogate, so that such a
        refusal is not noted as raised by the surrogate's method."""
        return space.encode_vectors(self._vectors(space, trials))

    def _fit(self, space: Space, history: History, y: np.ndarray, rng) -> None:
        completed = history.completed()
        raw = self._vectors(space, completed)
        batch = space.encode_vectors(raw)
        with calling("surrogate", self.surrogate, "fit"):
            self.surrogate.fit(batch, y, rng)
        self._fitted_on = _fit_key(completed, raw, y)

    def _fit_completed(self, space: Space, history: History, y: np.ndarray, rng) -> None:
        """Fit on the completed trials unless already fitted on exactly these trials,
        configurations and results (a completed trial replaced by another configuration
        with the same loss kept a fit on the old one)."""
        completed = history.completed()
        if _fit_key(completed, self._vectors(space, completed), y) != self._fitted_on:
            self._fit(space, history, y, rng)

    def _fit_believer(self, space: Space, history: History, y: np.ndarray, rng) -> None:
        """The fit on the completed trials whose mean the pending points are told, for a
        surrogate that is refitted with them anyway (the forest).

        Always a fresh fit from a child of the trial's generator: a fit kept from an
        earlier ask came from that ask's generator, so a study resumed with a trial
        pending, which has no such fit, proposed differently from the uninterrupted one.
        A child leaves ``rng``'s own draws to the refit and the optimizer.
        """
        (believer_rng,) = rng.spawn(1)
        self._fit(space, history, y, believer_rng)

    def _lies(self, space: Space, pending: list[Trial], y: np.ndarray) -> np.ndarray:
        if self.fantasy == "kriging-believer":
            batch = self._encode(space, pending)
            with calling("surrogate", self.surrogate, "predict", _MEAN_VARIANCE):
                return np.asarray(self.surrogate.predict(batch)[0], dtype=float)
        return np.full(len(pending), constant_liar(y))

    def _with_fantasies(self, space: Space, history: History, y: np.ndarray, rng) -> Surrogate:
        """A surrogate that has also seen the pending points, told their lies."""
        pending = history.pending()
        conditionable = isinstance(self.surrogate, ConditionableSurrogate)
        if conditionable:
            self._fit_completed(space, history, y, rng)
        elif self.fantasy == "kriging-believer":
            self._fit_believer(space, history, y, rng)
        lies = self._lies(space, pending, y)
        if conditionable:
            batch = self._encode(space, pending)
            with calling("surrogate", self.surrogate, "conditioned"):
                return self.surrogate.conditioned(batch, lies)
        batch = self._encode(space, history.completed() + pending)
        with calling("surrogate", self.surrogate, "fit"):
            self.surrogate.fit(batch, np.concatenate([y, lies]), rng)
        self._fitted_on = None
        return self.surrogate

    def propose(
        self, space: Space, history: History, targets: np.ndarray, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        targets = np.asarray(targets, dtype=float)
        shift = search_shift(targets)
        acquisition = acquisition_in_search_units(self.acquisition, shift)
        y = in_search_units(targets, shift)
        if history.pending():
            surrogate = self._with_fantasies(space, history, y, rng)
        else:  # the serial path: always a fresh fit
            self._fit(space, history, y, rng)
            surrogate = self.surrogate
        surface = SurrogateAcquisition(surrogate, acquisition, float(np.min(y)), targets=y)
        with calling("acquisition optimizer", self.optimizer, "maximize"):
            return self.optimizer.maximize(surface, space, history, n, rng)


def _fit_key(completed: list[Trial], raw: np.ndarray, y: np.ndarray) -> tuple:
    """What a fit on the completed trials depends on: their numbers, vectors and targets."""
    return tuple(t.number for t in completed), raw.tobytes(), y.tobytes()
