"""Argmin over losses that tie up to floating-point noise.

The same loss summed over the examples in another order can differ in its last bits (a
squared margin of 19/45 came out as 0.42222222222222222 for one candidate and
...217 for another), so comparing raw floats breaks a documented tie rule — the
earliest trial, the current slot occupant — by noise. Losses equal to 12 significant
digits tie (:func:`ensembo.stats.without_float_noise`), the rule of the study's best
trial too (``ensembo.trials.History.best``).

The benchmark statistics no longer use this rule: :func:`ensembo.stats.tie_float_noise`
ties losses within a relative 1e-12, which no rounding boundary can split. The two
disagree only on losses that close which straddle a boundary of the 12th digit (two
floats 1 ulp apart, say): the statistics tie them, while rounding here can prefer the
later trial by float noise. The strategies and the study keep the rounding on purpose:
changing it would change which trials running benchmarks and resumed studies select,
and a rounded score is a key of its own, so :func:`ranked` is one stable sort and ties
never chain (under a tolerance, a ≈ b and b ≈ c while a ≉ c).
"""

from __future__ import annotations

import numpy as np

from ensembo.stats.ranking import without_float_noise

# Only scores this close (relative) to the lowest can round to it at 12 significant
# digits; rounding just those keeps a step over a large pool cheap.
NEAR = 1e-9


def tied_for_lowest(scores: np.ndarray) -> np.ndarray:
    """Positions (ascending) of the scores equal to the lowest to 12 significant digits."""
    scores = _nan_last(scores)
    lowest = scores.min()
    if not np.isfinite(lowest):  # -inf, or every score +inf: no rounding to do
        return np.flatnonzero(scores == lowest)
    near = np.flatnonzero(scores <= lowest + NEAR * abs(lowest))
    if np.all(scores[near] == lowest):  # exact ties (counted 0/1 losses): nothing to round
        return near
    rounded = without_float_noise(scores[near])
    return near[rounded == rounded.min()]


def first_lowest(*keys: np.ndarray) -> int:
    """Position of the lowest ``keys[0]``; ties go to the lowest next key, and so on,
    then to the earliest position."""
    candidates = np.arange(len(keys[0]))
    for key in keys:
        candidates = candidates[tied_for_lowest(np.asarray(key)[candidates])]
    return int(candidates[0])


def ranked(scores: np.ndarray) -> np.ndarray:
    """Positions from the lowest score up; tied scores in position order."""
    return np.argsort(without_float_noise(_nan_last(scores)), kind="stable")


def _nan_last(scores: np.ndarray) -> np.ndarray:
    """NaN (a plugin loss gone wrong) as the worst score rather than a crash."""
    scores = np.asarray(scores, dtype=float)
    return np.where(np.isnan(scores), np.inf, scores)
