"""The ``lbfgs`` acquisition optimizer: multi-start L-BFGS-B with analytic gradients.

Starting points are the best-scoring of a scrambled Sobol set and a random pool, the
best of each branch (condition signature) in conditional spaces, and the incumbents
(the completed trials with the lowest targets, see ``LbfgsOptimizer._incumbents``).
Each start is ascended by its own L-BFGS-B run, on a scale of its own, so that no
start's value or progress decides when another stops; the runs go in lockstep, so
that one surface call per round serves all of them (`lockstep.Lockstep`). Each start moves
only its free continuous entries (:class:`ContinuousRelaxation`): categorical choices
and condition parents stay fixed, so a conditional space is optimized branch by
branch; integers and stepped (``q``) values are put back on their grid afterwards
and re-scored. The answer is the best
candidate, optimized or not, that the study has not seen. Surfaces without gradients
get the Sobol/random search alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

from ensembo.hookspecs import declares_options
from ensembo.plugins.acquisition_optimizers.continuous_relaxation import ContinuousRelaxation
from ensembo.plugins.acquisition_optimizers.lockstep import Lockstep
from ensembo.plugins.acquisition_optimizers.selection import best_distinct, vector_keys
from ensembo.plugins.option_checks import attrs_validator, sobol_size, whole
from ensembo.protocols import AcquisitionSurface, DifferentiableSurrogate, SampledSurrogate
from ensembo.spaces import Space
from ensembo.trial_vectors import TrialVectors
from ensembo.trials import History

MIN_GRADIENT_SCALE = 1e-150
"""Smallest start gradient a gain is divided by: a start in a region where EI
underflows has a gradient of ~1e-318, and its gains of order 1 overflowed to inf. A
start flatter than this stays where it is."""

@attrs.frozen(kw_only=True)
class LbfgsSettings:
    n_sobol: int = attrs.field(default=512, validator=attrs_validator("lbfgs", sobol_size))
    n_random: int = attrs.field(default=256, validator=attrs_validator("lbfgs", whole, 1))
    n_starts: int = attrs.field(default=5, validator=attrs_validator("lbfgs", whole, 1))
    n_incumbents: int = attrs.field(default=2, validator=attrs_validator("lbfgs", whole, 0))
    n_branch_starts: int = attrs.field(default=6, validator=attrs_validator("lbfgs", whole, 0))
    max_iterations: int = attrs.field(default=100, validator=attrs_validator("lbfgs", whole, 1))


@declares_options(LbfgsSettings)
class LbfgsOptimizer:
    """Options: ``n_sobol``, ``n_random`` (candidate pool sizes), ``n_starts`` (best
    candidates ascended), ``n_branch_starts`` (at most this many further starts, the
    best candidate of each other condition signature), ``n_incumbents`` (best observed
    configurations ascended), ``max_iterations`` (of each start's L-BFGS-B run)."""

    def __init__(self, **options: Any):
        # An unknown option is a TypeError the registry answers with "did you mean";
        # wrapped into a ValueError here, it lost that.
        self.settings = LbfgsSettings(**options)
        self._relaxations: dict[int, ContinuousRelaxation] = {}
        self._trial_vectors = TrialVectors()  # the history's vectors, each made once

    def _relaxation(self, space: Space) -> ContinuousRelaxation:
        key = id(space)
        if key not in self._relaxations or self._relaxations[key].space is not space:
            self._relaxations[key] = ContinuousRelaxation(space)
        return self._relaxations[key]

    def maximize(
        self,
        surface: AcquisitionSurface,
        space: Space,
        history: History,
        n: int,
        rng: np.random.Generator,
    ) -> list[dict[str, Any]]:
        relaxation = self._relaxation(space)
        settings = self.settings
        pool = space.sample_vectors(settings.n_random, rng)
        candidates = pool
        if settings.n_sobol and relaxation.free.any():
            sobol = qmc.Sobol(space.dimension, scramble=True, seed=rng).random(settings.n_sobol)
            templates = pool[np.arange(settings.n_sobol) % len(pool)]
            candidates = np.vstack([pool, relaxation.fill(templates, sobol)])
        batch = space.encode_vectors(candidates)
        scores = surface.score(batch)
        order = np.argsort(-np.nan_to_num(scores, nan=-np.inf), kind="stable")
        chosen = list(order[: settings.n_starts])
        chosen += self._branch_leaders(batch.signature, order, exclude=set(chosen))
        incumbents = self._incumbents(space, history, getattr(surface, "targets", None))
        starts = np.vstack([candidates[chosen], incumbents])
        if has_gradients(surface) and relaxation.movable(starts).any():
            ascended = relaxation.onto_grid(self._ascend(surface, space, relaxation, starts))
            candidates = np.vstack([candidates, ascended])
            scores = np.concatenate([scores, surface.score(space.encode_vectors(ascended))])
        seen = vector_keys(self._trial_vectors(space, list(history)))
        return best_distinct(space, candidates, scores, n, seen)

    def _branch_leaders(self, signature: np.ndarray, order: np.ndarray, exclude: set) -> list[int]:
        """The best candidate of each condition signature (best branches first), so
        that every branch, not only the currently favoured one, gets ascended."""
        leaders: dict[int, int] = {}
        for index in order:
            leaders.setdefault(int(signature[index]), int(index))
            if len(leaders) > self.settings.n_branch_starts:
                break
        picked = [i for i in leaders.values() if i not in exclude]
        return picked[: self.settings.n_branch_starts] if len(leaders) > 1 else []

    def _incumbents(
        self, space: Space, history: History, targets: np.ndarray | None = None
    ) -> np.ndarray:
        """Vectors of the ``n_incumbents`` best completed trials.

        Best by ``targets`` (one per completed trial, what the surrogate was fit to) when
        the surface carries them as its ``targets`` attribute: ensemble strategies
        (``eo``, ``esmbo``, ``segor``) re-label the trials, and the surface's optimum is
        near the best *target*, not the best loss. Without them, by loss.
        """
        completed = history.completed()
        if targets is None:
            targets = np.array([t.loss for t in completed], dtype=float)
        targets = np.asarray(targets, dtype=float)
        if targets.shape != (len(completed),):
            raise ValueError(
                f"lbfgs: {len(completed)} completed trials but targets of shape {targets.shape}"
            )
        ranked = [i for i in np.argsort(targets, kind="stable") if np.isfinite(targets[i])]
        best = [completed[i].config for i in ranked[: self.settings.n_incumbents]]
        return space.vectors(best) if best else np.empty((0, space.dimension))

    def _ascend(
        self, surface: Any, space: Space, relaxation: ContinuousRelaxation, starts: np.ndarray
    ) -> np.ndarray:
        """Each start ascended by its own L-BFGS-B run; the runs' surface calls batched.

        One joint run over all starts, scaled by the largest |value|, let a single
        extreme start (log-EI of -3.7e8 at an observed incumbent, or LCB with a 1e6
        target offset) push every other start's gradient below L-BFGS-B's absolute
        stopping tolerance: no start moved. A joint run scaled per start still shares
        its line search and its relative stopping test, and a start climbing out of a
        region where EI underflows dominated it. Separate runs share nothing.

        Run one after the other, they cost one surrogate call per start and iteration,
        and a GP's call costs about the same for one row as for ten. So the runs go in
        lockstep (`lockstep.Lockstep`): each round scores the next point of every run
        still going in one call; each run keeps its own state, scale and stopping.
        """

        def score(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            values, gradient = surface.score_with_gradient(space.encode_vectors(vectors))
            return np.asarray(values, dtype=float), relaxation.vector_gradient(gradient)

        ascended = starts.copy()
        movable = relaxation.movable(starts)
        rows = np.flatnonzero(movable.any(1))
        runs = [
            functools.partial(self._ascend_one, start=starts[row], movable=movable[row])
            for row in rows
        ]
        for row, vector in zip(rows, Lockstep(score).run(runs), strict=True):
            ascended[row] = vector
        return ascended

    def _ascend_one(
        self,
        evaluate: Callable[[np.ndarray], tuple[float, np.ndarray]],
        start: np.ndarray,
        movable: np.ndarray,
    ) -> np.ndarray:
        """One start ascended, on a scale of its own; ``evaluate`` gives the value and
        the vector gradient at a vector.

        L-BFGS-B's stopping tests are absolute (projected gradient below ``pgtol``) or
        relative to ``max(|f|, 1)``. The objective is therefore the gain over the start,
        ``(value - initial) / scale`` with ``scale`` the start's initial gradient
        (max-norm): invariant to a shift of the acquisition (a target offset) and to its
        unit, so the run stops when the gradient has fallen by a fixed factor.
        """

        def value_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
            vector = start.copy()
            vector[movable] = flat
            value, gradient = evaluate(vector)
            return float(value), gradient[movable]

        initial, gradient = value_and_gradient(start[movable])
        if not (np.isfinite(initial) and np.all(np.isfinite(gradient))):
            return start
        steepest = float(np.max(np.abs(gradient), initial=0.0))
        scale = max(steepest, MIN_GRADIENT_SCALE) if steepest > 0 else 1.0

        def negative(flat: np.ndarray) -> tuple[float, np.ndarray]:
            value, gradient = value_and_gradient(flat)
            if not (np.isfinite(value) and np.all(np.isfinite(gradient))):
                return np.inf, np.zeros_like(flat)
            return -(value - initial) / scale, -gradient / scale

        result = minimize(
            negative, start[movable], jac=True, method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * int(movable.sum()),
            options={"maxiter": self.settings.max_iterations},
        )
        ascended = start.copy()
        ascended[movable] = np.clip(result.x, 0.0, 1.0)
        return ascended


def has_gradients(surface: AcquisitionSurface) -> bool:
    """Whether ``surface`` can give input gradients.

    The study's surface always has ``score_with_gradient``, whatever its surrogate, so
    that method alone proved nothing: ``rf`` with ``lbfgs`` crashed at the first
    model-based ask. Its surrogate decides; a surface without one (a plugin's own)
    is taken at its word."""
    if not callable(getattr(surface, "score_with_gradient", None)):
        return False
    surrogate = getattr(surface, "surrogate", None)
    if surrogate is None:
        return True
    return isinstance(surrogate, (DifferentiableSurrogate, SampledSurrogate))
