"""Parzen estimators over groups of hyperparameters, as TPE uses them.

One :class:`ParzenEstimator` holds a mixture with one component per observation plus a
*prior* component, over ``k`` columns in the unit scale (numeric columns in [0, 1],
categorical ones as a choice index). Columns are partitioned into *groups*; a group's
density is a mixture of products of per-column kernels, and groups are independent:

* univariate TPE (Bergstra et al. 2011; Optuna's and Hyperopt's default) puts every
  column in a group of its own;
* multivariate TPE (Falkner et al. 2018; Optuna's ``multivariate=True``) puts columns
  that are always active together in one group;
* joint TPE puts every column in one group, across branches.

An observation counts for a group when any of the group's columns was active in it; on
a column it did not have, its kernel is the prior's. So a column's shape comes only from
the observations where it was active, which is what makes TPE conditional-native (a
hyperparameter of a branch never tried has only the prior), and in a joint group a
branch's hyperparameters stay tied to the shared ones they were observed with. A joint
group scores each row on that row's active columns (the marginal of the mixture), so
rows of different branches are compared on their own dimensions.

Kernels: truncated normals on [0, 1] for numeric columns; for categorical columns the
observed choice plus ``prior_weight / (m + 1)`` spread over all choices (Optuna's
categorical kernel). The prior component is N(0.5, 1) truncated to [0, 1], uniform over
choices. Bandwidths follow the neighbour rule per column, clipped from below at
``max((1 + kernels) ** -floor_exponent, min_bandwidth)``: exponent 1 and 0.01 is
Optuna 5's magic clip ``1 / min(100, 1 + kernels)``; exponent 2 lets kernels narrow
as the good region is pinned down (Watanabe 2023, arXiv:2304.11127).
"""

from __future__ import annotations

import attrs
import numpy as np
from scipy.special import ndtr, ndtri

PRIOR_MEAN = 0.5
PRIOR_BANDWIDTH = 1.0
_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


@attrs.frozen(kw_only=True)
class ColumnKinds:
    """What the ``k`` columns are: ``sizes[j]`` choices for a categorical column, 0 for
    a numeric one; ``min_bandwidth[j]`` keeps integer kernels wider than their grid."""

    sizes: np.ndarray = attrs.field(eq=False)
    min_bandwidth: np.ndarray = attrs.field(eq=False)

    @property
    def numeric(self) -> np.ndarray:
        return self.sizes == 0


class ParzenEstimator:
    """Mixture density over grouped columns, fitted to weighted observations.

    ``observations`` (m, k) are in the unit scale with NaN where a column was inactive;
    ``weights`` (m,) are per-observation weights (e.g. recency); ``groups`` (k,) gives
    each column's group id in 0..G-1.
    """

    def __init__(
        self,
        observations: np.ndarray,
        weights: np.ndarray,
        kinds: ColumnKinds,
        groups: np.ndarray,
        *,
        prior_weight: float,
        floor_exponent: float = 1.0,
        min_bandwidth: float = 0.01,
    ):
        self.kinds = kinds
        self.groups = np.asarray(groups)
        self.n_groups = int(self.groups.max()) + 1 if self.groups.size else 0
        m, k = observations.shape
        active = ~np.isnan(observations)
        # An observation counts for a group when any of its columns was active; its
        # kernel on a column it did not have is the prior's (grouped by activity, a
        # group's columns are active together, so this only matters for joint groups).
        indicator = np.zeros((k, self.n_groups))
        indicator[np.arange(k), self.groups] = 1.0
        self._indicator = indicator
        group_active = (active.astype(float) @ indicator) > 0
        group_weights = np.vstack(
            [weights[:, None] * group_active, np.full((1, self.n_groups), prior_weight)]
        )
        self._log_group_weights = _log(group_weights / group_weights.sum(axis=0, keepdims=True))
        column_counts = active.sum(axis=0)  # observations that shape each column
        values = np.where(active, observations, PRIOR_MEAN)
        self._fit_numeric(values, active, column_counts, floor_exponent, min_bandwidth)
        self._fit_categorical(values, active, column_counts, prior_weight)

    # --- fitting -------------------------------------------------------------------------

    def _fit_numeric(self, values, active, column_counts, floor_exponent, min_bandwidth):
        numeric = np.flatnonzero(self.kinds.numeric)
        self._numeric = numeric
        m = values.shape[0]
        self._mus = np.vstack([values[:, numeric], np.full((1, numeric.size), PRIOR_MEAN)])
        sigmas = np.ones_like(self._mus)
        kernels = column_counts[numeric] + 1.0  # observations and the prior
        magic_clip = np.maximum((1.0 + kernels) ** -floor_exponent, min_bandwidth)
        floor = np.maximum(magic_clip, self.kinds.min_bandwidth[numeric])
        # Columns active on the same observations get their bandwidths in one call.
        patterns: dict[bytes, list[int]] = {}
        for position, column in enumerate(numeric):
            patterns.setdefault(active[:, column].tobytes(), []).append(position)
        for positions in patterns.values():
            observed = np.flatnonzero(active[:, numeric[positions[0]]])
            widths = _neighbour_bandwidths(values[np.ix_(observed, numeric[positions])])
            sigmas[np.ix_(observed, positions)] = np.clip(widths, floor[positions], 1.0)
        sigmas[m, :] = PRIOR_BANDWIDTH
        self._sigmas = sigmas
        # Mass of each kernel inside [0, 1], for the truncated density and for sampling.
        self._cdf_low = ndtr((0.0 - self._mus) / self._sigmas)
        self._cdf_high = ndtr((1.0 - self._mus) / self._sigmas)
        self._log_mass = _log(self._cdf_high - self._cdf_low)

    def _fit_categorical(self, values, active, column_counts, prior_weight):
        self._categorical = np.flatnonzero(~self.kinds.numeric)
        self._choice_probabilities = []
        m = values.shape[0]
        for column in self._categorical:
            size = int(self.kinds.sizes[column])
            smoothing = prior_weight / (column_counts[column] + 1.0)
            probabilities = np.full((m + 1, size), smoothing)
            chosen = np.clip(np.round(values[:, column]).astype(int), 0, size - 1)
            probabilities[np.arange(m), chosen] += 1.0
            probabilities[np.append(~active[:, column], True)] = 1.0  # the prior's kernel
            probabilities /= probabilities.sum(axis=1, keepdims=True)
            self._choice_probabilities.append(probabilities)

    # --- use -----------------------------------------------------------------------------

    def sample(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` draws (count, k); each group picks its mixture component independently."""
        components = (
            np.stack(
                [rng.choice(len(w), size=count, p=np.exp(w)) for w in self._log_group_weights.T],
                axis=1,
            )
            if self.n_groups
            else np.empty((count, 0), dtype=int)
        )
        drawn = np.empty((count, len(self.groups)))
        if self._numeric.size:
            chosen = components[:, self.groups[self._numeric]]
            columns = np.arange(self._numeric.size)[None, :]
            low, high = self._cdf_low[chosen, columns], self._cdf_high[chosen, columns]
            u = low + rng.random(chosen.shape) * (high - low)
            values = self._mus[chosen, columns] + self._sigmas[chosen, columns] * ndtri(u)
            drawn[:, self._numeric] = np.clip(values, 0.0, 1.0)
        for probabilities, column in zip(
            self._choice_probabilities, self._categorical, strict=True
        ):
            cumulative = np.cumsum(probabilities[components[:, self.groups[column]]], axis=1)
            picks = (rng.random((count, 1)) * cumulative[:, -1:] > cumulative).sum(axis=1)
            drawn[:, column] = np.minimum(picks, probabilities.shape[1] - 1)
        return drawn

    def log_pdf(self, x: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        """Log density of each group at each row of ``x`` (c, k): shape (c, G).

        With ``active`` (c, k), each row's density is over its active columns only (the
        marginal), which is what a joint group needs to score rows of different branches.
        """
        count = len(x)
        per_column = np.zeros((count, self._log_group_weights.shape[0], len(self.groups)))
        if self._numeric.size:
            z = (x[:, None, self._numeric] - self._mus[None]) / self._sigmas[None]
            per_column[:, :, self._numeric] = (
                -0.5 * z**2 - _LOG_SQRT_2PI - np.log(self._sigmas)[None] - self._log_mass[None]
            )
        for probabilities, column in zip(
            self._choice_probabilities, self._categorical, strict=True
        ):
            picks = np.clip(np.round(x[:, column]).astype(int), 0, probabilities.shape[1] - 1)
            per_column[:, :, column] = _log(probabilities[:, picks].T)
        if active is not None:
            per_column = np.where(active[:, None, :], per_column, 0.0)
        per_group = per_column @ self._indicator  # (c, m + 1, G)
        return _logsumexp_components(per_group + self._log_group_weights[None])


def _neighbour_bandwidths(mus: np.ndarray) -> np.ndarray:
    """The "magic clip" neighbour rule (Hyperopt; Optuna without endpoints), per column
    of ``mus`` (m, c): each kernel as wide as the larger gap to its sorted neighbours;
    the outermost kernels look inward only. The range ends count as neighbours when
    there is a single observation."""
    if mus.shape[0] == 0:
        return mus
    order = np.argsort(mus, axis=0, kind="stable")
    ends = np.zeros((1, mus.shape[1]))
    padded = np.vstack([ends, np.take_along_axis(mus, order, axis=0), ends + 1.0])
    gaps = np.diff(padded, axis=0)
    widths_sorted = np.maximum(gaps[:-1], gaps[1:])
    if mus.shape[0] >= 2:
        widths_sorted[0], widths_sorted[-1] = gaps[1], gaps[-2]
    widths = np.empty_like(mus)
    np.put_along_axis(widths, order, widths_sorted, axis=0)
    return widths


def _logsumexp_components(terms: np.ndarray) -> np.ndarray:
    """log(sum(exp(terms))) over axis 1; plain numpy, several times faster than scipy's
    array-API version on these small arrays."""
    peak = terms.max(axis=1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(terms - peak).sum(axis=1)) + peak[:, 0]


def _log(values: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(values)
