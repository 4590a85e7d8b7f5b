"""Random-forest surrogate in the SMAC tradition.

Regression trees from scikit-learn, each grown on a bootstrap resample with a fraction
of the features considered per split. The predictive mean is the average of the trees'
leaf means; the variance is the spread of those means across trees, plus (law of total
variance, optional) the average variance of the targets inside the leaves. Trees are
grown and queried directly (not through ``RandomForestRegressor``) so that fitting a
thousand points and scoring thousands of candidates costs milliseconds: the forest's
parallel-dispatch layer dominates at these sizes.

With ``log_targets`` the trees model ``log(y - shift)`` (shift below the best target by
its distance to the 5th percentile, as SMAC's log-scaled encoder) and the prediction is
mapped back through the log-normal moments, so acquisitions still see the original
scale (the incumbent they compare against is an original-scale target).

The trees fit standardized targets (see :mod:`~ensembo.plugins.surrogates.scaling`), so
rescaling the targets rescales the predictions and changes nothing else: on targets of
order 1e-13 the trees had stopped splitting (scikit-learn deems a node pure below an
absolute impurity of 2e-16) and the variance floor swamped every prediction.
"""

from __future__ import annotations

import attrs
import numpy as np
import sklearn
from sklearn.tree import DecisionTreeRegressor

from ensembo.hookspecs import declares_options
from ensembo.plugins.option_checks import attrs_validator, flag, share, whole
from ensembo.plugins.surrogates.scaling import standardize
from ensembo.spaces import EncodedBatch

MIN_VARIANCE = 1e-10
"""Floor on the predictive variance in standardized units (acquisitions divide by its
square root)."""


def _count(minimum: int):
    """An integer option: sklearn read a float leaf size as a fraction of the data
    (1.5 grew stumps) and a float tree count failed mid-run."""
    return attrs_validator("rf", whole, minimum)


def _switch():
    """A true/false option: the string "false" counted as true."""
    return attrs_validator("rf", flag)


@attrs.frozen(kw_only=True)
class ForestSettings:
    """Options of the ``rf`` surrogate.

    Tree count, feature fraction, leaf and split sizes and bootstrapping are SMAC3's
    HPO-facade values (``HyperparameterOptimizationFacade.get_model``; SMAC's depth
    limit of 2**20 is no limit). Two defaults differ from SMAC3. ``log_targets`` is off:
    SMAC log-scales the costs, which did worse here on Hartmann3 and Levy-5.
    ``within_leaf_variance`` is on: SMAC3 sets pyrfr's
    ``compute_law_of_total_variance = False``, so its variance is the spread across
    trees alone. With leaves of one point the within-leaf term is non-zero only where
    the trees cannot split points with different targets (a configuration evaluated
    twice with different results, points closer than float32 resolution), and there
    it keeps the forest from claiming certainty; no benchmark in docs/benchmarks.md
    compares the two settings.
    """

    n_trees: int = attrs.field(default=10, validator=_count(1))
    feature_fraction: float = attrs.field(default=1.0, validator=attrs_validator("rf", share))
    min_samples_leaf: int = attrs.field(default=1, validator=_count(1))
    min_samples_split: int = attrs.field(default=2, validator=_count(2))
    # None: no limit; a depth of 0 or less made every tree a single leaf
    max_depth: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_count(1))
    )
    bootstrap: bool = attrs.field(default=True, validator=_switch())
    within_leaf_variance: bool = attrs.field(default=True, validator=_switch())
    log_targets: bool = attrs.field(default=False, validator=_switch())


@declares_options(ForestSettings)
class RandomForestSurrogate:
    """Mean and variance from an ensemble of bootstrapped regression trees."""

    def __init__(self, **options):
        self.settings = ForestSettings(**options)
        self._trees: list[DecisionTreeRegressor] = []
        self._shift = 0.0
        self._location, self._scale = 0.0, 1.0  # of the (transformed) targets

    def fit(self, batch: EncodedBatch, y: np.ndarray, rng: np.random.Generator) -> None:
        x = _features(batch)
        y = np.asarray(y, dtype=float).ravel()
        if len(y) != len(x) or len(y) == 0:
            raise ValueError(f"rf: need one target per configuration, got {len(y)} for {len(x)}")
        y, self._location, self._scale = standardize(self._transform(y))
        settings = self.settings
        n = len(y)
        seeds = rng.integers(2**31 - 1, size=settings.n_trees)
        self._trees = []
        # Options are validated once by ForestSettings; sklearn's per-fit validation
        # would otherwise cost as much as growing a small tree.
        with sklearn.config_context(skip_parameter_validation=True, assume_finite=True):
            for seed in seeds:
                tree = DecisionTreeRegressor(
                    # a float: sklearn reads an int as a count, and 1 as one feature
                    max_features=float(settings.feature_fraction),
                    min_samples_leaf=settings.min_samples_leaf,
                    min_samples_split=settings.min_samples_split,
                    max_depth=settings.max_depth,
                    random_state=int(seed),
                )
                rows = (
                    np.random.default_rng(int(seed)).integers(n, size=n)
                    if settings.bootstrap
                    else slice(None)
                )
                tree.fit(x[rows], y[rows], check_input=False)
                self._trees.append(tree)

    def predict(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        if not self._trees:
            raise RuntimeError("rf: predict called before fit")
        x = _features(batch)
        leaf_means = np.empty((len(self._trees), len(x)))
        leaf_variances = np.zeros_like(leaf_means)
        for index, tree in enumerate(self._trees):
            leaves = tree.tree_.apply(x)
            leaf_means[index] = tree.tree_.value[leaves, 0, 0]
            if self.settings.within_leaf_variance:
                leaf_variances[index] = tree.tree_.impurity[leaves]
        variance = leaf_means.var(axis=0) + leaf_variances.mean(axis=0)
        mean = leaf_means.mean(axis=0) * self._scale + self._location
        variance = np.maximum(variance, MIN_VARIANCE) * self._scale**2
        if self.settings.log_targets:
            return self._from_log(mean, variance)
        return mean, variance

    # --- log-transformed targets ---------------------------------------------------------

    def _transform(self, y: np.ndarray) -> np.ndarray:
        if not self.settings.log_targets:
            return y
        # SMAC's log-scaled encoder: the best target sits as far above the shift as the
        # 5th percentile sits above the best, so it is a finite log without becoming an
        # outlier of the transformed targets.
        best = float(y.min())
        gap = float(np.percentile(y, 5)) - best
        if gap <= 0:
            spread = float(np.ptp(y))
            gap = 1e-3 * spread if spread > 0 else 1.0
        self._shift = best - gap
        return np.log(y - self._shift)

    def _from_log(self, mean: np.ndarray, variance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Moments of ``exp(Z) + shift`` for ``Z ~ N(mean, variance)`` (log-normal).

        They saturate at the largest float: after a loss of 1e300 the variance of the
        log-normal is no float, and an infinite one broke every later ask."""
        variance = np.minimum(variance, 50.0)
        with np.errstate(over="ignore"):
            original_mean = np.exp(mean + variance / 2) + self._shift
            original_variance = np.expm1(variance) * np.exp(2 * mean + variance)
        largest = np.finfo(float).max
        return (
            np.minimum(original_mean, largest),
            np.clip(original_variance, np.finfo(float).tiny, largest),
        )


INACTIVE = -1.0
"""Feature value of an inactive hyperparameter left missing (imputation rule ``none``):
outside the [0, 1] of every encoded value, so one split separates "inactive" from all
active values (SMAC's treatment of inactive hyperparameters)."""


def _features(batch: EncodedBatch) -> np.ndarray:
    """Trees split float32 features; convert once, contiguously.

    NaN (rule ``none``) becomes :data:`INACTIVE`: the trees are grown with
    ``check_input=False``, which skips scikit-learn's missing-value handling, and its
    splitter then sorted NaN as an ordinary number, so trees did not even fit their own
    training points.
    """
    features = np.ascontiguousarray(batch.values, dtype=np.float32)
    missing = np.isnan(features)
    if missing.any():  # a new array: the batch's own values may be these float32s
        features = np.where(missing, np.float32(INACTIVE), features)
    return features
