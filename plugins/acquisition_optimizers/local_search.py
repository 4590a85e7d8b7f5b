"""The ``local-search`` acquisition optimizer, SMAC style (notes/003 §1.4, Eq. 5.7-5.8).

Hill climbing over one-exchange neighbourhoods of the *active* hyperparameters, from
the observed configurations the acquisition rates highest and from the best of a
random pool. Each climb moves to its best neighbour while that improves; on a plateau
(equal values, common with tree surrogates) it takes a bounded number of sideways
steps; at a local optimum it halves the continuous step and stops once the step is at
its minimum or the iteration cap is spent. All climbs advance together, so each round
scores every neighbourhood as one encoded batch.

The answer is the best unseen configuration among the climbs' end points and the random
pool; with probability ``random_fraction`` a slot is given to a random configuration
instead, as SMAC interleaves random configurations for exploration (SMAC uses 0.2; the
default here is 0, which did better on the synthetic suite at 50-80 evaluations, see
docs/benchmarks.md).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ensembo.hookspecs import declares_options
from ensembo.plugins.acquisition_optimizers.neighbourhood import OneExchangeNeighbourhood
from ensembo.plugins.acquisition_optimizers.random_search import default_samples
from ensembo.plugins.acquisition_optimizers.selection import best_distinct, vector_keys
from ensembo.plugins.option_checks import attrs_validator, positive, probability, whole
from ensembo.protocols import AcquisitionSurface
from ensembo.spaces import Space
from ensembo.trial_vectors import TrialVectors
from ensembo.trials import History, TrialState

_RELATIVE_TOLERANCE = 1e-9
"""Scores closer than this fraction of the top of the random pool's spread count as equal."""

_TOP_QUANTILE = 0.9
"""The spread is measured from this quantile of the pool's finite scores to the best."""

_FLOAT_NOISE = 1e-15
"""A few ulps of ``|score|``: differences below it are rounding, however large the score."""


def _count(minimum: int):
    """An integer option: a float or a string passed ``ge`` or failed in it."""
    return attrs_validator("local-search", whole, minimum)


@attrs.frozen(kw_only=True)
class LocalSearchSettings:
    """Options of ``local-search``; ``n_random`` defaults to a quarter of ``random``'s."""

    n_observed_starts: int = attrs.field(default=5, validator=_count(0))
    n_random_starts: int = attrs.field(default=5, validator=_count(0))
    n_random: int | None = attrs.field(default=None, validator=attrs.validators.optional(_count(1)))
    max_steps: int = attrs.field(default=30, validator=_count(1))
    plateau_steps: int = attrs.field(default=5, validator=_count(0))
    step: float = attrs.field(default=0.1, validator=attrs_validator("local-search", positive))
    min_step: float = attrs.field(
        default=0.0125, validator=attrs_validator("local-search", positive)
    )
    random_fraction: float = attrs.field(
        default=0.0, validator=attrs_validator("local-search", probability)
    )

    def __attrs_post_init__(self) -> None:
        if self.min_step > self.step:
            raise ValueError(
                f"local-search: 'min_step' ({self.min_step}) must not exceed 'step' ({self.step})"
            )
        if self.n_observed_starts + self.n_random_starts == 0:
            raise ValueError("local-search: 'n_observed_starts' and 'n_random_starts' are both 0")


@attrs.define
class _Climbs:
    """State of the climbs that advance together (one row each)."""

    vectors: np.ndarray
    scores: np.ndarray
    step: np.ndarray
    plateau_left: np.ndarray
    running: np.ndarray
    tolerance: float  # score differences below it (or float noise) are a plateau


@declares_options(LocalSearchSettings)
class LocalSearchOptimizer:
    """One-exchange hill climbing with plateau walks, plus interleaved random picks."""

    def __init__(self, **options):
        self.settings = LocalSearchSettings(**options)
        self._trial_vectors = TrialVectors()

    def maximize(
        self,
        surface: AcquisitionSurface,
        space: Space,
        history: History,
        n: int,
        rng: np.random.Generator,
    ) -> list[dict[str, Any]]:
        settings = self.settings
        trials = list(history)
        seen_vectors = self._trial_vectors(space, trials)
        seen = vector_keys(seen_vectors)
        completed = np.array([t.state is TrialState.COMPLETE for t in trials], dtype=bool)
        pool = space.sample_vectors(max(settings.n_random or default_samples(space) // 4, n), rng)
        pool_scores = surface.score(space.encode_vectors(pool))
        starts, start_scores = self._starts(
            surface, space, seen_vectors[completed], pool, pool_scores
        )
        tolerance = score_tolerance(pool_scores, start_scores)
        ends, end_scores = self._climb(surface, space, starts, start_scores, tolerance, rng)
        chosen = best_distinct(
            space, np.concatenate([ends, pool]), np.concatenate([end_scores, pool_scores]), n, seen
        )
        return self._interleave_random(space, chosen, pool, seen, rng)

    # --- pieces --------------------------------------------------------------------------

    def _starts(self, surface, space, observed, pool, pool_scores):
        settings = self.settings
        best_random = np.argsort(-np.nan_to_num(pool_scores, nan=-np.inf))[
            : settings.n_random_starts
        ]
        vectors, scores = [pool[best_random]], [pool_scores[best_random]]
        if len(observed) and settings.n_observed_starts:
            observed_scores = surface.score(space.encode_vectors(observed))
            best = np.argsort(-np.nan_to_num(observed_scores, nan=-np.inf))[
                : settings.n_observed_starts
            ]
            vectors.append(observed[best])
            scores.append(observed_scores[best])
        return np.concatenate(vectors), np.nan_to_num(np.concatenate(scores), nan=-np.inf)

    def _climb(self, surface, space, starts, start_scores, tolerance, rng):
        settings = self.settings
        count = len(starts)
        climbs = _Climbs(
            vectors=starts.copy(),
            scores=start_scores.astype(float),
            step=np.full(count, settings.step),
            plateau_left=np.full(count, settings.plateau_steps),
            running=np.ones(count, dtype=bool),
            tolerance=tolerance,
        )
        neighbourhood = OneExchangeNeighbourhood(space)
        for _ in range(settings.max_steps):
            rows = np.flatnonzero(climbs.running)
            if rows.size == 0:
                break
            neighbours = neighbourhood.neighbours(climbs.vectors[rows], climbs.step[rows])
            if len(neighbours.vectors) == 0:
                break
            scores = np.nan_to_num(
                surface.score(space.encode_vectors(neighbours.vectors)), nan=-np.inf
            )
            self._advance(climbs, rows, neighbours, scores, rng)
        return climbs.vectors, climbs.scores

    def _advance(self, climbs: _Climbs, rows, neighbours, scores, rng) -> None:
        """One step of every running climb: improve, walk the plateau, refine, or stop."""
        origin = neighbours.origin
        best = np.full(rows.size, -np.inf)
        np.maximum.at(best, origin, scores)
        current = climbs.scores[rows]
        tolerance = plateau_tolerance(climbs.tolerance, current)
        improve = best > current + tolerance
        plateau = ~improve & (best >= current - tolerance) & (climbs.plateau_left[rows] > 0)
        move = improve | plateau
        # Among the neighbours good enough (the best ones when improving, any as good
        # as the current point on a plateau) each climb takes one at random.
        level = np.where(improve, best - tolerance, current - tolerance)
        eligible = move[origin] & (scores >= level[origin])
        keys = np.where(eligible, rng.random(scores.size), -1.0)
        top = np.full(rows.size, -1.0)
        np.maximum.at(top, origin, keys)
        picked = np.flatnonzero(eligible & (keys == top[origin]))
        owners, first = np.unique(origin[picked], return_index=True)
        climbs.vectors[rows[owners]] = neighbours.vectors[picked[first]]
        climbs.scores[rows[owners]] = scores[picked[first]]
        climbs.plateau_left[rows[plateau]] -= 1
        refine = ~move & (climbs.step[rows] / 2 >= self.settings.min_step)
        climbs.step[rows[refine]] /= 2
        climbs.running[rows[~move & ~refine]] = False

    def _interleave_random(self, space, chosen, pool, seen, rng):
        slots = np.flatnonzero(rng.random(len(chosen)) < self.settings.random_fraction)
        if slots.size == 0:
            return chosen
        taken = set(seen) | set(vector_keys(space.vectors(chosen)))
        randoms = best_distinct(
            space, pool, rng.random(len(pool)), slots.size, taken, fill_with_excluded=False
        )
        for slot, config in zip(slots, randoms, strict=False):
            chosen[slot] = config
        return chosen


def score_tolerance(pool_scores: np.ndarray, start_scores: np.ndarray) -> float:
    """How close two scores must be to count as equal: a fraction of the spread of the
    scores the climbs compete with, from the pool's top-decile boundary to the best
    finite score of the pool and the starts.

    A spread (a difference) rather than ``|score|``: ``lcb`` carries the targets'
    offset, and with a tolerance relative to ``|score|`` an offset of 1e9 made every real
    difference a plateau, so the climbs wandered sideways and stopped. The top of the
    pool rather than its whole range: a few extreme scores (``log-ei`` at -1e10 or less
    where failed trials pin the variance at its floor, ``lcb`` near one diverged loss of
    1e9) made the range's tolerance larger than every difference near the best, and the
    climbs turned into random walks. Those scores sit at the bottom; they move the
    boundary only when they fill more than nine tenths of the pool. The scores are
    scaled before subtracting, so a spread wider than the largest float stays finite.
    """
    pool = _RELATIVE_TOLERANCE * _finite(pool_scores)
    if pool.size == 0:
        return 0.0
    best = max(pool.max(), (_RELATIVE_TOLERANCE * _finite(start_scores)).max(initial=-np.inf))
    return float(best - np.quantile(pool, _TOP_QUANTILE))


def _finite(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=float)
    return scores[np.isfinite(scores)]


def plateau_tolerance(tolerance: float, current: np.ndarray) -> np.ndarray:
    """``tolerance`` per climb, at least the float noise of its current score.

    The spread can be far below the rounding of large scores (a flat top under an
    offset of 1e9 rounds to ~1e-7): without this floor, rounding would count as an
    improvement and a plateau would never be walked as one. 1e-15 of ``|score|`` is a
    few ulps: 1e-6 under an offset of 1e9, below the differences that matter there.
    """
    magnitude = np.abs(np.where(np.isfinite(current), current, 0.0))
    return np.maximum(tolerance, _FLOAT_NOISE * magnitude)
