"""The ``gp`` and ``gp-cond`` surrogates.

Targets are standardized (zero mean, unit variance) so that one set of hyperparameter
bounds and priors fits every problem. Hyperparameters come from ML-II (one posterior)
or from slice sampling (several posteriors; acquisitions are averaged over them via
:meth:`GaussianProcessSurrogate.predict_samples`).

Cost above a size: hyperparameters are fitted on at most ``fit_subset`` points (the
best half by target plus a random draw of the rest), while the posterior itself
always uses every point — the O(n^3) hyperparameter search, repeated for every
likelihood evaluation, is what grows fastest, and a few hundred points pin the
hyperparameters down well.

Every fit and prediction runs with at most ``blas_threads`` BLAS threads (see
:mod:`ensembo.threads`): the matrices are small, and parallel workers each running a GP would
otherwise oversubscribe the cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ensembo.errors import SpaceError
from ensembo.factory_refusals import signature_only
from ensembo.hookspecs import declares_options
from ensembo.plugins.option_checks import flag, positive, whole
from ensembo.plugins.surrogates.gp.hyperparameters import (
    NOISE_CEILING,
    NOISE_FLOOR,
    NOISE_FLOOR_MIN,
    Hyperparameters,
    vector_bounds,
)
from ensembo.plugins.surrogates.gp.kernels import KERNELS
from ensembo.plugins.surrogates.gp.mcmc import HyperparameterChain
from ensembo.plugins.surrogates.gp.ml2 import fit_ml2
from ensembo.plugins.surrogates.gp.posterior import Posterior, block_keys
from ensembo.plugins.surrogates.scaling import clip_upper_tail, standardize
from ensembo.spaces import EncodedBatch
from ensembo.threads import limited_threads

HYPERPARAMETER_METHODS = ("ml2", "mcmc")
MEAN_CHOICES = ("fit", "zero")


def fitting_rows(y: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
    """All rows up to ``limit``; above it the best half and a random sample of the rest."""
    n = len(y)
    if n <= limit:
        return np.arange(n)
    order = np.argsort(y, kind="stable")
    best = order[: limit // 2]
    rest = rng.choice(order[limit // 2 :], size=limit - len(best), replace=False)
    return np.sort(np.concatenate([best, rest]))


def _choice(plugin: str, option: str, value: Any, valid: Sequence[str]) -> str:
    """One of ``valid``; an unhashable value failed in the lookup with a TypeError."""
    if not isinstance(value, str) or value not in valid:
        raise ValueError(f"{plugin}: unknown {option} {value!r}; valid: {list(valid)}")
    return value


def _noise_floor(plugin: str, value: Any) -> float:
    """Below ``NOISE_FLOOR_MIN`` a floor is lost in rounding against the kernel's diagonal
    (the signal variance is at least 0.05), and the noise prior's gradient overflowed."""
    value = positive(plugin, "noise_floor", value)
    if not NOISE_FLOOR_MIN <= value < NOISE_CEILING:
        raise ValueError(f"{plugin}: noise_floor must be in [{NOISE_FLOOR_MIN}, "
                         f"{NOISE_CEILING}), got {value}")
    return value


class GaussianProcessSurrogate:
    """GP regression over encoded configurations.

    Options: ``kernel`` (``matern52`` or ``laplace`` on the Euclidean distance, or
    ``laplace-l1``, Lévesque's per-dimension L1 kernel), ``hyperparameters`` (``ml2`` |
    ``mcmc``), ``conditional`` (Lévesque's conditional kernel: no covariance between
    different condition signatures), ``restarts`` (ML-II starts of a cold fit),
    ``samples`` and ``burn_in`` (MCMC samples kept, sweeps of the first burn-in),
    ``fit_subset`` (largest training set for hyperparameter fitting), ``mean``
    (``fit``: a constant mean hyperparameter; ``zero``: the targets' average, which
    keeps unexplored regions and unexplored branches of a conditional space at an
    average rather than a pessimistic prior level), ``noise_floor`` (lowest noise
    variance sigma_n^2 the fit may choose, in standardized units; it keeps the kernel
    matrix well conditioned. It is not a floor on predictions: ``predict`` gives the
    latent function's variance, noise excluded, which at an observed point is below
    the noise variance, ``sigma_f^2 sigma_n^2 / (sigma_f^2 + sigma_n^2)`` for a lone
    observation, and can approach 0), ``blas_threads``
    (BLAS threads during fits and predictions; 0 leaves the BLAS pools as they are),
    ``clip_upper`` (targets above the median plus this many interquartile ranges are
    fitted as that bound, so a few huge losses do not blind the fit; off by default).
    ``plugin`` is the name option errors give (``gp-cond`` builds this class too).
    """

    def __init__(
        self,
        kernel: str = "matern52",
        hyperparameters: str = "ml2",
        conditional: bool = False,
        restarts: int = 2,
        samples: int = 10,
        burn_in: int = 20,
        fit_subset: int = 300,
        mean: str = "fit",
        noise_floor: float = NOISE_FLOOR,
        blas_threads: int = 1,
        clip_upper: float | None = None,
        plugin: str = "gp",
    ):
        self.plugin = plugin
        self.kernel = KERNELS[_choice(plugin, "kernel", kernel, sorted(KERNELS))]()
        self.method = _choice(plugin, "hyperparameters", hyperparameters, HYPERPARAMETER_METHODS)
        self.fit_mean = _choice(plugin, "mean", mean, MEAN_CHOICES) == "fit"
        # flag: bool("false") gave the conditional kernel
        self.conditional = flag(plugin, "conditional", conditional)
        self.restarts = whole(plugin, "restarts", restarts, 1)
        self.fit_subset = whole(plugin, "fit_subset", fit_subset, 2)
        self.noise_floor = _noise_floor(plugin, noise_floor)
        self.blas_threads = whole(plugin, "blas_threads", blas_threads, 0)  # 0: no limit
        self.clip_upper = None if clip_upper is None else positive(plugin, "clip_upper",
                                                                    clip_upper)
        samples = whole(plugin, "samples", samples, 1)
        burn_in = whole(plugin, "burn_in", burn_in, 0)  # -5 passed and acted as 0
        self._chain = (
            HyperparameterChain(samples=samples, burn_in=burn_in)
            if hyperparameters == "mcmc"
            else None
        )
        self._previous: Hyperparameters | None = None
        self.posteriors: list[Posterior] = []
        self._location, self._scale = 0.0, 1.0

    def state(self) -> dict[str, Any] | None:
        """What the next fit starts from: the last ML-II optimum (its warm start) or
        the chain's last sample; stored by the study so a resumed run repeats exactly."""
        if self._chain is not None:
            chain = self._chain.last_sample
            return None if chain is None else {"chain": chain.tolist()}
        if self._previous is None:
            return None
        hp = self._previous  # its fields, not its vector: exp/log would not round-trip
        return {"previous": {"lengthscales": hp.lengthscales.tolist(), "amplitude": hp.amplitude,
                             "noise": hp.noise, "mean": hp.mean}}

    def restore(self, state: dict[str, Any]) -> None:
        if self._chain is not None and "chain" in state:
            self._chain.last_sample = np.asarray(state["chain"], dtype=float)
        elif self._chain is None and "previous" in state:
            fields = state["previous"]
            self._previous = Hyperparameters(
                lengthscales=np.asarray(fields["lengthscales"], dtype=float),
                amplitude=float(fields["amplitude"]), noise=float(fields["noise"]),
                mean=float(fields["mean"]),
            )

    def _keys(self, batch: EncodedBatch) -> np.ndarray:
        return block_keys(batch.signature if self.conditional else None, len(batch))

    def fit(self, batch: EncodedBatch, y: np.ndarray, rng: np.random.Generator) -> None:
        refuse_missing_values(batch, self.plugin)
        with limited_threads(self.blas_threads, user_api="blas"):
            self._fit(batch, y, rng)

    def _fit(self, batch: EncodedBatch, y: np.ndarray, rng: np.random.Generator) -> None:
        x = np.asarray(batch.values, dtype=float)
        keys = self._keys(batch)
        if self.clip_upper is not None:
            y = clip_upper_tail(y, self.clip_upper)
        standardized, self._location, self._scale = standardize(y)
        rows = fitting_rows(standardized, self.fit_subset, rng)
        fit_x, fit_y, fit_keys = x[rows], standardized[rows], keys[rows]
        bounds = vector_bounds(x.shape[1], self.noise_floor, self.fit_mean)
        if self._chain is not None:
            samples = self._chain.sample(self.kernel, fit_x, fit_y, fit_keys, rng, bounds)
        else:
            samples = [
                fit_ml2(
                    self.kernel, fit_x, fit_y, fit_keys, rng, self._previous, self.restarts, bounds
                )
            ]
            self._previous = samples[0]
        self.posteriors = [Posterior(self.kernel, hp, x, standardized, keys) for hp in samples]
        self._observed = (x, standardized, keys)

    def conditioned(self, batch: EncodedBatch, y: np.ndarray) -> GaussianProcessSurrogate:
        """A copy that also observed ``y`` at ``batch``, with the same hyperparameters
        and target scaling: only the Cholesky factors are redone. This is how pending
        points take their fantasies (the driver's ask stays cheap while workers wait);
        ``self`` keeps its fit."""
        x, standardized, keys = self._observed
        x = np.vstack([x, np.asarray(batch.values, dtype=float)])
        believed = (np.asarray(y, dtype=float) - self._location) / self._scale
        standardized = np.concatenate([standardized, believed])
        keys = np.concatenate([keys, self._keys(batch)])
        copy = object.__new__(GaussianProcessSurrogate)
        copy.__dict__.update(self.__dict__)
        with limited_threads(self.blas_threads, user_api="blas"):
            copy.posteriors = [
                Posterior(self.kernel, p.hyperparameters, x, standardized, keys)
                for p in self.posteriors
            ]
        copy._observed = (x, standardized, keys)
        return copy

    @property
    def hyperparameters(self) -> list[Hyperparameters]:
        return [p.hyperparameters for p in self.posteriors]

    # --- per-sample predictions (integrated acquisition) --------------------------------

    def _standardized_samples(self, batch: EncodedBatch, gradients: bool) -> tuple:
        """Each sample's predictions in standardized units, stacked: (S, n) means and
        variances, and with ``gradients`` their (S, n, d) input gradients."""
        x, keys = np.asarray(batch.values, dtype=float), self._keys(batch)
        with limited_threads(self.blas_threads, user_api="blas"):
            if gradients:
                parts = [p.predict_with_gradients(x, keys) for p in self.posteriors]
            else:
                parts = [p.predict(x, keys) for p in self.posteriors]
        return tuple(np.stack(arrays) for arrays in zip(*parts, strict=True))

    def predict_samples(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance under each hyperparameter sample, shapes (S, n)."""
        means, variances = self._standardized_samples(batch, gradients=False)
        return means * self._scale + self._location, variances * self._scale**2

    def predict_samples_with_gradients(
        self, batch: EncodedBatch
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per-sample mean (S, n), variance (S, n), d mean/dx and d variance/dx (S, n, d)."""
        means, variances, d_means, d_variances = self._standardized_samples(batch, gradients=True)
        s, s2 = self._scale, self._scale**2
        return means * s + self._location, variances * s2, d_means * s, d_variances * s2

    # --- Surrogate / DifferentiableSurrogate: the mixture's first two moments ----------
    #
    # The mixture variance is the mean variance plus the variance of the means, taken
    # about the mixture mean in standardized units and scaled at the end. The textbook
    # ``mean(v + m^2) - mean(m)^2`` in target units cancelled catastrophically under a
    # target offset: with 1e9 + 0.1 sin(6x) every variance came out 0 (or 128).

    def predict(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        means, variances = self._standardized_samples(batch, gradients=False)
        mean = means.mean(0)
        variance = variances.mean(0) + ((means - mean) ** 2).mean(0)
        return mean * self._scale + self._location, variance * self._scale**2

    def predict_with_gradients(
        self, batch: EncodedBatch
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        means, variances, d_means, d_variances = self._standardized_samples(batch, gradients=True)
        mean, d_mean = means.mean(0), d_means.mean(0)
        spread, d_spread = means - mean, d_means - d_mean
        variance = variances.mean(0) + (spread**2).mean(0)
        d_variance = d_variances.mean(0) + 2.0 * (spread[..., None] * d_spread).mean(0)
        s, s2 = self._scale, self._scale**2
        return mean * s + self._location, variance * s2, d_mean * s, d_variance * s2


def refuse_missing_values(batch: EncodedBatch, plugin: str) -> None:
    """Refuse inactive hyperparameters left as NaN (imputation rule ``none``).

    The kernel's distances have no value for a missing coordinate: every prediction
    near such a configuration was NaN, which ``gp`` reported as its own broken contract
    a few trials in, and ``gp-cond`` passed on silently, never proposing those branches.
    """
    missing = np.isnan(np.asarray(batch.values, dtype=float))
    if not missing.any():
        return
    columns = ", ".join(str(int(c)) for c in np.flatnonzero(missing.any(axis=0)))
    raise SpaceError(
        "impute",
        f"surrogate {plugin!r} cannot use imputation rule 'none': inactive hyperparameters "
        f"left missing (NaN in encoded column(s) {columns}) have no kernel distance. Give "
        "them a value with another rule (midpoint, the default; lower, upper, default or "
        "a fixed value), or use a surrogate that accepts 'none': 'rf' or 'tpe'.",
    )


# Its signature alone: the class refuses bad options with ValueError, so its TypeError is a
# bug, which building it again would repeat and blame on the options.
@declares_options(signature_only(GaussianProcessSurrogate), without=("plugin",))
def gp(**options) -> GaussianProcessSurrogate:
    """Factory for ``gp``: imputed encoding, one kernel over every configuration."""
    return GaussianProcessSurrogate(plugin="gp", **options)


@declares_options(signature_only(GaussianProcessSurrogate), without=("conditional", "plugin"))
def gp_conditional(**options) -> GaussianProcessSurrogate:
    """Factory for ``gp-cond``: Lévesque's conditional kernel."""
    if "conditional" in options:
        raise ValueError("gp-cond: 'conditional' is implied; use 'gp' for the unconditional kernel")
    return GaussianProcessSurrogate(conditional=True, plugin="gp-cond", **options)
