"""The ``tpe`` plugin: Tree-structured Parzen Estimator (Bergstra et al. 2011).

TPE does not fit "regression surrogate + acquisition": it models ``l(x)``, the density
of the best ``gamma`` fraction of the trials, and ``g(x)``, that of the rest, draws
candidates from ``l`` and keeps the one maximizing ``l(x) / g(x)`` (equivalent to EI
under its model). So the plugin is a :class:`~ensembo.protocols.Proposer`.

Behaviour follows what Optuna's ``TPESampler`` and Hyperopt's ``tpe.suggest`` users
know: the split keeps ``min(ceil(gamma * n), 25)`` trials below (Optuna's default
gamma), 24 candidates per suggestion, prior weight 1, recency weights that fade trials
older than the last 25 (Optuna's ``default_weights``, Hyperopt's linear forgetting),
pending trials counted among the bad ones (Optuna's ``constant_liar``). Each
hyperparameter is modelled on the trials where it was active.

Two defaults differ from Optuna 5, each chosen by controlled runs (docs/benchmarks.md,
issue 6): kernels may narrow to ``max((1 + kernels) ** -2, 0.03)`` of the range instead
of Optuna's ``1 / (1 + kernels)`` (``floor_exponent``, ``min_bandwidth``), which lets
TPE converge instead of sampling around the optimum at a fixed width; and on a
conditional space all hyperparameters form one joint group (``joint``), so a branch's
hyperparameters stay tied to the shared ones and to the choice that opened the branch,
where Optuna's ``group=True`` models the shared part and each branch independently.
``joint=False`` groups hyperparameters that are always active together (Optuna's
``multivariate`` + ``group``); ``multivariate=False`` models each alone.

Because groups are independent, every group is sampled and scored at once and the
values that turn out inactive are dropped when the conditions are applied — the same
configurations a walk down the tree would give, without the walk.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    IntegerHyperparameter,
    OrdinalHyperparameter,
)

from ensembo.errors import SpaceError
from ensembo.hookspecs import declares_options
from ensembo.plugins.option_checks import attrs_validator, flag, fraction, positive, whole
from ensembo.plugins.surrogates.tpe.parzen import ColumnKinds, ParzenEstimator
from ensembo.spaces import Space
from ensembo.spaces.activity import deactivate
from ensembo.trial_vectors import TrialVectors
from ensembo.trials import History


def _checked(check, *args: Any) -> Any:
    """An attrs validator running the shared option ``check`` for plugin ``tpe``."""
    return attrs_validator("tpe", check, *args)


@attrs.frozen(kw_only=True)
class TPESettings:
    """Options of ``tpe``: Optuna 5's defaults except the bandwidth floor and ``joint``.

    Each is type-checked: ``multivariate: "false"`` read as true, and ``n_candidates:
    2.5`` or ``gamma: "0.2"`` failed only at the first model-based ask."""

    gamma: float = attrs.field(default=0.1, validator=_checked(fraction))
    max_below: int = attrs.field(default=25, validator=_checked(whole, 1))
    n_candidates: int = attrs.field(default=24, validator=_checked(whole, 1))
    prior_weight: float = attrs.field(default=1.0, validator=_checked(positive))
    recency_window: int = attrs.field(default=25, validator=_checked(whole, 1))
    multivariate: bool = attrs.field(default=True, validator=_checked(flag))
    joint: bool = attrs.field(default=True, validator=_checked(flag))
    floor_exponent: float = attrs.field(default=2.0, validator=_checked(positive))
    min_bandwidth: float = attrs.field(default=0.03, validator=_checked(fraction))


def recency_weights(count: int, window: int) -> np.ndarray:
    """Weight 1 for the last ``window`` observations, a ramp from 1/count before them."""
    if count <= window:
        return np.ones(count)
    return np.concatenate([np.linspace(1.0 / count, 1.0, count - window), np.ones(window)])


class _UnitScale:
    """ConfigSpace vectors <-> TPE's unit scale, and snapping onto legal values.

    Numeric columns live in [0, 1] (ordinal indices divided by their count - 1);
    categorical columns keep the choice index.
    """

    def __init__(self, space: Space):
        hyperparameters = [space.hyperparameter(name) for name in space.names]
        sizes, spread, floor = [], [], []
        self._integers, self._ordinals = [], []
        for column, hp in enumerate(hyperparameters):
            if isinstance(hp, CategoricalHyperparameter | Constant):
                sizes.append(hp.size), spread.append(1.0), floor.append(0.0)
                continue
            sizes.append(0)
            if isinstance(hp, OrdinalHyperparameter):
                self._ordinals.append(column)
                spread.append(float(max(hp.size - 1, 1)))
            else:
                spread.append(1.0)
            if isinstance(hp, IntegerHyperparameter):
                self._integers.append((column, hp))
            # A kernel narrower than half a grid step puts all its mass on one value.
            grid = (
                hp.size - 1 if isinstance(hp, IntegerHyperparameter | OrdinalHyperparameter) else 0
            )
            floor.append(0.5 / grid if grid > 0 else 0.0)
        self.kinds = ColumnKinds(sizes=np.array(sizes, dtype=int), min_bandwidth=np.array(floor))
        self._spread = np.array(spread)

    def to_unit(self, vectors: np.ndarray) -> np.ndarray:
        return vectors / self._spread

    def to_vectors(self, unit: np.ndarray) -> np.ndarray:
        return unit * self._spread

    def snap(self, unit: np.ndarray) -> np.ndarray:
        """Integers and ordinals moved onto their grid (in place), so they are scored
        where they will be evaluated."""
        for column, hp in self._integers:
            unit[:, column] = np.asarray(hp.to_vector(hp.to_value(unit[:, column])), dtype=float)
        for column in self._ordinals:
            spread = self._spread[column]
            unit[:, column] = np.round(unit[:, column] * spread) / spread
        return unit


@declares_options(TPESettings)
class TreeParzenProposer:
    """TPE as a :class:`~ensembo.protocols.Proposer` (registry name ``tpe``)."""

    def __init__(self, **options):
        self.settings = TPESettings(**options)
        self._space: Space | None = None
        self._scale: _UnitScale | None = None
        self._vectors = TrialVectors()

    def propose(
        self,
        space: Space,
        history: History,
        targets: np.ndarray,
        n: int,
        rng: np.random.Generator,
    ) -> list[dict[str, Any]]:
        settings = self.settings
        completed, pending = history.completed(), history.pending()
        targets = np.asarray(targets, dtype=float)
        if targets.shape != (len(completed),):
            raise ValueError(f"tpe: {len(completed)} completed trials but {targets.shape} targets")
        scale = self._scale_for(space)
        unit = scale.to_unit(self._vectors(space, completed + pending))
        below, above = self._split(targets, len(pending))
        groups = self._groups(~np.isnan(unit))
        numbers = np.array([t.number for t in completed + pending])
        estimators = [
            ParzenEstimator(
                unit[rows],
                recency_weights(len(rows), settings.recency_window)[
                    np.argsort(np.argsort(numbers[rows]))
                ],
                scale.kinds,
                groups,
                prior_weight=settings.prior_weight,
                floor_exponent=settings.floor_exponent,
                min_bandwidth=settings.min_bandwidth,
            )
            for rows in (below, above)
        ]
        return self._best_candidates(space, history, scale, estimators, groups, n, rng)

    # --- pieces --------------------------------------------------------------------------

    def _scale_for(self, space: Space) -> _UnitScale:
        if space is not self._space:
            self._space, self._scale = space, _UnitScale(space)
        return self._scale

    def _split(self, targets: np.ndarray, n_pending: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the best trials and of the others (pending ones count as bad)."""
        count = len(targets)
        n_below = min(math.ceil(self.settings.gamma * count), self.settings.max_below)
        n_below = max(1, min(n_below, count - 1)) if count > 1 else count
        order = np.argsort(targets, kind="stable")
        above = np.concatenate([order[n_below:], np.arange(count, count + n_pending)])
        return np.sort(order[:n_below]), np.sort(above).astype(int)

    def _groups(self, active: np.ndarray) -> np.ndarray:
        """Group id per column: one each (univariate) or by shared activity pattern."""
        columns = active.shape[1]
        if not self.settings.multivariate or active.shape[0] == 0:
            return np.arange(columns)
        if self.settings.joint:
            return np.zeros(columns, dtype=int)
        ids: dict[bytes, int] = {}
        return np.array([ids.setdefault(column.tobytes(), len(ids)) for column in active.T])

    def _best_candidates(
        self, space, history, scale, estimators, groups, n, rng
    ) -> list[dict[str, Any]]:
        below, above = estimators
        count = self.settings.n_candidates
        candidates = scale.snap(below.sample(n * count, rng))
        # A joint group scores each candidate on the columns its own branch activates;
        # with groups by activity, a group's best value is kept whatever the others do.
        active = (
            ~np.isnan(deactivate(space.configspace, scale.to_vectors(candidates)))
            if self.settings.joint
            else None
        )
        ratio = below.log_pdf(candidates, active) - above.log_pdf(candidates, active)
        ratio = ratio.reshape(n, count, -1)  # (n, count, G)
        candidates = candidates.reshape(n, count, -1)
        configs = []
        for row_candidates, row_ratio in zip(candidates, ratio, strict=True):
            ranked = _ranked(row_candidates, row_ratio, groups)
            allowed = _first_allowed(space, scale, ranked, history)
            # a forbidden clause may refuse every candidate: fall back on the prior
            configs.extend(allowed if allowed is not None else space.sample(1, rng))
        return configs


def _ranked(candidates: np.ndarray, ratio: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """One suggestion's candidates (count, d), best first: with several groups, each
    group's best value combined; then whole candidates by their summed log-ratio."""
    order = np.argsort(-ratio.sum(axis=1), kind="stable")
    if len(np.unique(groups)) == 1:
        return candidates[order]
    best = np.argmax(ratio, axis=0)  # (G,): each group keeps its own best candidate
    combined = candidates[best[groups], np.arange(len(groups))]
    return np.vstack([combined[None, :], candidates[order]])


def _first_allowed(
    space: Space, scale: _UnitScale, ranked: np.ndarray, history: History
) -> list[dict[str, Any]] | None:
    """The first candidate that is a valid configuration (forbidden clauses refuse
    some) held by no trial of ``history``, as a one-element list; the first valid one
    when every valid one is held (the caller refuses it, as it does an acquisition
    optimizer's seen fill); None if there is no valid one.

    The next-best scored candidate, not a prior draw, replaces a forbidden or seen one:
    when a clause cuts through the region TPE favours, a prior draw lands far from it;
    on a discrete space TPE's favourite is often a trial already run, and the caller
    replaced 33 of 55 such suggestions by prior draws."""
    first_valid = None
    for row in scale.to_vectors(ranked):
        try:
            config = space.from_vectors(row)
        except SpaceError:
            continue
        if not history.holds_config(config[0]):
            return config
        first_valid = first_valid or config
    return first_valid
