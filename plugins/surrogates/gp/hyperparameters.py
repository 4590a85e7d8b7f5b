"""GP hyperparameters, their log-space vector form, bounds and priors.

Inputs live in [0, 1] and targets are standardized before fitting, so one set of
bounds and priors suits every problem. Priors follow Lévesque ch. 5 (notes/003,
L1478) and Spearmint: log-normal(0, 1) on the length-scales and on the amplitude
``sigma_f``, a horseshoe on the noise variance. The horseshoe's scale is Spearmint's
(0.1, ``GPEIOptChooser.noise_scale``), not the thesis's (1): Lévesque states scale 1
but ran Spearmint's code. Spearmint applies 0.1 to unstandardized targets; here the
targets are standardized, so 0.1 is a tenth of their standard deviation. The vector
is ``[log l_1..log l_d, log sigma_f^2, log sigma_n^2, constant mean]``.
"""

from __future__ import annotations

import attrs
import numpy as np

LENGTHSCALE_BOUNDS = (5e-3, 50.0)
AMPLITUDE_BOUNDS = (5e-2, 20.0)  # signal variance, targets standardized to unit variance
NOISE_FLOOR = 1e-10  # default lowest noise variance (jitter escalation handles duplicates)
NOISE_FLOOR_MIN = 1e-16  # the lowest floor that still moves the diagonal (float64)
NOISE_CEILING = 1.0
MEAN_BOUNDS = (-5.0, 5.0)
HORSESHOE_SCALE = 0.1  # Spearmint's noise scale; Lévesque's thesis states 1 (see above)


@attrs.frozen(kw_only=True)
class Hyperparameters:
    lengthscales: np.ndarray = attrs.field(eq=False)
    amplitude: float  # signal variance sigma_f^2
    noise: float  # noise variance sigma_n^2
    mean: float  # constant prior mean (standardized units)

    @classmethod
    def initial(cls, dimension: int) -> Hyperparameters:
        """A neutral starting point: medium length-scales, little noise."""
        return cls(lengthscales=np.full(dimension, 0.5), amplitude=1.0, noise=1e-3, mean=0.0)

    def to_vector(self) -> np.ndarray:
        return np.concatenate(
            [np.log(self.lengthscales), [np.log(self.amplitude), np.log(self.noise), self.mean]]
        )

    @classmethod
    def from_vector(cls, vector: np.ndarray) -> Hyperparameters:
        vector = np.asarray(vector, dtype=float)
        return cls(
            lengthscales=np.exp(vector[:-3]),
            amplitude=float(np.exp(vector[-3])),
            noise=float(np.exp(vector[-2])),
            mean=float(vector[-1]),
        )


def vector_bounds(
    dimension: int, noise_floor: float = NOISE_FLOOR, fit_mean: bool = True
) -> np.ndarray:
    """(dimension + 3, 2) bounds of the log-space vector; equal bounds fix an entry
    (the mean at the targets' average when ``fit_mean`` is false)."""
    rows = [np.log(LENGTHSCALE_BOUNDS)] * dimension
    rows += [np.log(AMPLITUDE_BOUNDS), np.log([noise_floor, NOISE_CEILING])]
    rows += [np.array(MEAN_BOUNDS) if fit_mean else np.zeros(2)]
    return np.array(rows, dtype=float)


def sample_vector(dimension: int, rng: np.random.Generator) -> np.ndarray:
    """A random start for ML-II: length-scales and amplitude from their priors."""
    bounds = vector_bounds(dimension)
    vector = np.concatenate(
        [rng.normal(np.log(0.5), 1.0, dimension), [rng.normal(0.0, 1.0), np.log(1e-3), 0.0]]
    )
    return np.clip(vector, bounds[:, 0], bounds[:, 1])


def log_prior(vector: np.ndarray, jacobian: bool) -> tuple[float, np.ndarray]:
    """Log prior density and its gradient in the log-space vector.

    With ``jacobian`` the density is of the vector itself (what MCMC samples); without,
    it is the density of the natural parameters evaluated at them, the usual MAP
    penalty for ML-II (it keeps the horseshoe from pushing the noise up).
    """
    log_l, log_amp, log_noise = vector[:-3], vector[-3], vector[-2]
    gradient = np.zeros_like(vector)
    # log-normal(0, 1) on l: -(log l)^2/2 - log l; the Jacobian adds log l back.
    value = float(np.sum(-0.5 * log_l**2))
    gradient[:-3] = -log_l
    # log-normal(0, 1) on sigma_f, with log sigma_f = log_amp / 2.
    half = 0.5 * log_amp
    value += -0.5 * half**2
    gradient[-3] = -0.5 * half
    # Horseshoe on the noise variance x: log(log(1 + 3 (s/x)^2)) (Spearmint's form).
    ratio = 3.0 * HORSESHOE_SCALE**2 * np.exp(-2.0 * log_noise)
    inner = np.log1p(ratio)
    value += float(np.log(inner))
    gradient[-2] = -2.0 * ratio / (1.0 + ratio) / inner
    if not jacobian:
        value -= float(np.sum(log_l)) + half
        gradient[:-3] -= 1.0
        gradient[-3] -= 0.5
    else:
        value += float(log_noise)
        gradient[-2] += 1.0
    return value, gradient
