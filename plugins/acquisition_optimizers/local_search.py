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
instead, as SMAC interleaves random configurations for exploration.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ensembo.plugins.acquisition_optimizers.neighbourhood import OneExchangeNeighbourhood
from ensembo.plugins.acquisition_optimizers.random_search import default_samples
from ensembo.plugins.acquisition_optimizers.selection import best_distinct, seen_vectors, vector_keys
from ensembo.protocols import AcquisitionSurface
from ensembo.spaces import Space
from ensembo.trials import History

_RELATIVE_TOLERANCE = 1e-9


def _in_unit_interval(instance, attribute, value) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"local-search option {attribute.name!r} must be in [0, 1], got {value}")


def _positive(instance, attribute, value) -> None:
    if not value > 0:
        raise ValueError(f"local-search option {attribute.name!r} must be positive, got {value}")


@attrs.frozen(kw_only=True)
class LocalSearchSettings:
    """Options of ``local-search``; ``n_random`` defaults to a quarter of ``random``'s."""

    n_observed_starts: int = attrs.field(default=5, validator=attrs.validators.ge(0))
    n_random_starts: int = attrs.field(default=5, validator=attrs.validators.ge(0))
    n_random: int | None = None
    max_steps: int = attrs.field(default=30, validator=attrs.validators.ge(1))
    plateau_steps: int = attrs.field(default=5, validator=attrs.validators.ge(0))
    step: float = attrs.field(default=0.1, validator=_positive)
    min_step: float = attrs.field(default=0.0125, validator=_positive)
    random_fraction: float = attrs.field(default=0.2, validator=_in_unit_interval)

    def __attrs_post_init__(self) -> None:
        if self.min_step > self.step:
            raise ValueError(
                f"local-search: 'min_step' ({self.min_step}) must not exceed 'step' ({self.step})"
            )
        if self.n_random is not None and self.n_random < 1:
            raise ValueError(f"local-search: 'n_random' must be a positive integer, got {self.n_random}")
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


class LocalSearchOptimizer:
    """One-exchange hill climbing with plateau walks, plus interleaved random picks."""

    def __init__(self, **options):
        self.settings = LocalSearchSettings(**options)

    def maximize(
        self,
        surface: AcquisitionSurface,
        space: Space,
        history: History,
        n: int,
        rng: np.random.Generator,
    ) -> list[dict[str, Any]]:
        settings = self.settings
        seen = vector_keys(seen_vectors(space, history))
        pool = space.sample_vectors(max(settings.n_random or default_samples(space) // 4, n), rng)
        pool_scores = surface.score(space.encode_vectors(pool))
        starts, start_scores = self._starts(surface, space, history, pool, pool_scores)
        ends, end_scores = self._climb(surface, space, starts, start_scores, rng)
        chosen = best_distinct(
            space, np.concatenate([ends, pool]), np.concatenate([end_scores, pool_scores]), n, seen
        )
        return self._interleave_random(space, chosen, pool, seen, rng)

    # --- pieces --------------------------------------------------------------------------

    def _starts(self, surface, space, history, pool, pool_scores):
        settings = self.settings
        best_random = np.argsort(-np.nan_to_num(pool_scores, nan=-np.inf))[: settings.n_random_starts]
        vectors, scores = [pool[best_random]], [pool_scores[best_random]]
        observed = space.vectors([trial.config for trial in history.completed()])
        if len(observed) and settings.n_observed_starts:
            observed_scores = surface.score(space.encode_vectors(observed))
            best = np.argsort(-np.nan_to_num(observed_scores, nan=-np.inf))[: settings.n_observed_starts]
            vectors.append(observed[best])
            scores.append(observed_scores[best])
        return np.concatenate(vectors), np.nan_to_num(np.concatenate(scores), nan=-np.inf)

    def _climb(self, surface, space, starts, start_scores, rng):
        settings = self.settings
        count = len(starts)
        climbs = _Climbs(
            vectors=starts.copy(),
            scores=start_scores.astype(float),
            step=np.full(count, settings.step),
            plateau_left=np.full(count, settings.plateau_steps),
            running=np.ones(count, dtype=bool),
        )
        neighbourhood = OneExchangeNeighbourhood(space)
        for _ in range(settings.max_steps):
            rows = np.flatnonzero(climbs.running)
            if rows.size == 0:
                break
            neighbours = neighbourhood.neighbours(climbs.vectors[rows], climbs.step[rows])
            scores = np.nan_to_num(
                surface.score(space.encode_vectors(neighbours.vectors)), nan=-np.inf
            ) if len(neighbours.vectors) else np.empty(0)
            for local, row in enumerate(rows):
                mine = np.flatnonzero(neighbours.origin == local)
                self._advance(climbs, row, neighbours.vectors[mine], scores[mine], rng)
        return climbs.vectors, climbs.scores

    def _advance(self, climbs: _Climbs, row: int, candidates, scores, rng) -> None:
        """One step of one climb: improve, walk the plateau, refine the step, or stop."""
        current = climbs.scores[row]
        tolerance = _RELATIVE_TOLERANCE * max(abs(current), 1e-300) if np.isfinite(current) else 0.0
        best = scores.max() if len(scores) else -np.inf
        if best > current + tolerance:
            ties = np.flatnonzero(scores >= best - tolerance)
        elif best >= current - tolerance and climbs.plateau_left[row] > 0:
            ties = np.flatnonzero(scores >= current - tolerance)
            climbs.plateau_left[row] -= 1
        elif climbs.step[row] / 2 >= self.settings.min_step:
            climbs.step[row] /= 2
            return
        else:
            climbs.running[row] = False
            return
        pick = ties[rng.integers(len(ties))]
        climbs.vectors[row] = candidates[pick]
        climbs.scores[row] = scores[pick]

    def _interleave_random(self, space, chosen, pool, seen, rng):
        slots = np.flatnonzero(rng.random(len(chosen)) < self.settings.random_fraction)
        if slots.size == 0:
            return chosen
        taken = set(seen) | set(vector_keys(space.vectors(chosen)))
        randoms = best_distinct(
            space, pool, rng.random(len(pool)), slots.size, taken, fill_with_excluded=False
        )
        for slot, config in zip(slots, randoms):
            chosen[slot] = config
        return chosen
