"""Posterior probability that each model is the best one, from its per-example losses.

Lacoste's Agnostic Bayes (thesis ch. 6, App. A): with a loss matrix L (m examples ×
d models), sample risk vectors r from p(r | L), and weight model h by how often it has
the lowest sampled risk (ties broken uniformly at random). Rows are resampled
*jointly*, so correlated models share their wins — duplicating a model does not double
its weight (Table 6.1). Three ways to sample r:

* ``bootstrap`` — resample ⌈ρm⌉ rows with replacement (L1387, L1452);
* ``dirichlet`` — Bayesian bootstrap weights Dir(ρ,…,ρ) over the rows, mixed when α̃ > 0
  with a stick-breaking prior of mass α̃·2^d over the 2^d right/wrong patterns, capped
  at the data's mass ρm (L1375–1383; zero-one losses only, see :func:`prior_mass`);
* ``student-t`` — the Normal–Wishart posterior's multivariate Student t (Eq. 6.4–6.5)
  with the thesis's fixed prior r₀ = ½, T₀ = ¼I, κ₀ = 1, ν₀ = d (L1413), m → ρm (L1456).

ρ is the effective-sample ratio of the K-fold variant (1 for a single holdout).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ensembo.errors import ComponentOptionError

SAMPLERS = ("bootstrap", "dirichlet", "student-t")
TIE_TOLERANCE = 1e-12  # risks this close to the lowest one tie for it


def _bootstrap(losses: np.ndarray, n: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    m = len(losses)
    draws = max(1, math.ceil(rho * m))
    return resample_counts(m, draws, n, rng) @ losses / draws


RESAMPLE_BLOCK = 2**20
"""Entries drawn and counted at once (8 MiB of int64 each) by :func:`resample_counts`."""


def resample_counts(m: int, draws: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, m) multiplicities of ``n`` resamples of ``draws`` rows out of ``m``, with
    replacement, in the smallest unsigned integer type that holds them.

    A multiplicity is rarely above 10, so it fits in a byte: ``agnostic-bayes`` tuning ρ
    keeps 20 of these tables for the whole study (as float64 weights, 1.5 GiB at
    m = 10,000). Drawn a block of resamples at a time, the same numbers as all at once,
    so the int64 temporaries stay small too.
    """
    rows = max(1, RESAMPLE_BLOCK // max(draws, m))
    blocks = []
    for start in range(0, n, rows):
        size = min(rows, n - start)
        picks = rng.integers(0, m, size=(size, draws)) + m * np.arange(size)[:, None]
        counts = np.bincount(picks.ravel(), minlength=size * m).reshape(size, m)
        blocks.append(counts.astype(np.min_scalar_type(counts.max())))
    return np.concatenate(blocks)  # in the widest block's type


def _stick_breaking(concentration: float, atoms: int, rng: np.random.Generator) -> np.ndarray:
    breaks = rng.beta(1.0, concentration, size=atoms)
    remaining = np.concatenate([[1.0], np.cumprod(1.0 - breaks[:-1])])
    weights = breaks * remaining
    return weights / weights.sum()


def prior_mass(alpha: float, d: int, effective: float) -> float:
    """The Dirichlet prior's total mass α̃N (N = 2^d states), capped at the data's mass.

    The thesis draws θ ~ Beta(α̃N, m) and, since "α̃N > m yields too much importance to
    the prior", assumes α̃N ≤ m (L1383). A study's pool grows, so a fixed α̃ would pass m
    within a few trials, drown the data and cost 10·α̃N atoms a sample; an α̃ past m/N is
    used as m/N. The data's mass is m' = ρm under the K-fold adaptation (L1454).
    """
    if alpha <= 0:
        return 0.0
    if d >= math.log2(effective / alpha):
        return effective
    return alpha * 2.0**d


def require_zero_one(losses: np.ndarray) -> None:
    """Refuse losses outside {0, 1}: the prior's states are right/wrong patterns (L1377)."""
    other = losses[(losses != 0) & (losses != 1)]
    if other.size:
        raise ComponentOptionError(
            "agnostic-bayes: sampler 'dirichlet' with alpha > 0 needs zero-one losses (its "
            f"prior is over the 2^d right/wrong patterns), but its loss scores a prediction "
            f"{other[0]:g}, not 0 or 1; use "
            "loss: zero-one, alpha: 0 (the Bayesian bootstrap, any loss) or sampler: student-t"
        )


def _random_states(atoms: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """(atoms, d) states drawn uniformly from {0,1}^d, eight bits per random byte."""
    packed = rng.integers(0, 256, size=(atoms, -(-d // 8)), dtype=np.uint8)
    return np.unpackbits(packed, axis=1, count=d)


def _prior_risks(mass: float, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of G·Dir(α̃1_N): 10·α̃N stick-breaking atoms at uniform states (L1383).

    ``einsum`` rather than ``@``: matmul would first copy the bits into a float array.
    """
    atoms = max(1, int(10 * mass))
    return np.stack([
        np.einsum("a,ad->d", _stick_breaking(mass, atoms, rng), _random_states(atoms, d, rng))
        for _ in range(n)
    ])


def _dirichlet(
    losses: np.ndarray, n: int, rho: float, alpha: float, rng: np.random.Generator
) -> np.ndarray:
    """θ·prior + (1−θ)·data with θ ~ Beta(α̃N, ρm) (L1383, L1454); O(m·d) a sample at the cap."""
    m, d = losses.shape
    risks = rng.dirichlet(np.full(m, rho), size=n) @ losses
    if alpha <= 0:
        return risks
    require_zero_one(losses)
    mass = prior_mass(alpha, d, rho * m)
    theta = rng.beta(mass, rho * m, size=(n, 1))
    return theta * _prior_risks(mass, n, d, rng) + (1.0 - theta) * risks


LOSS_SPAN = 1e6
"""Per-example losses more than this many times the best model's mean loss count as
that much in the Student-t sampler, which squares them (its scatter matrix): a regression
trial 1e100 from its targets, whose mse is 1e200, overflowed it, and every later ensemble
was empty; with a cap of 1e100 the spread lost positive-definiteness to rounding. Such a
model is the worst either way."""


def _student_t(losses: np.ndarray, n: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    best_mean = float(losses.mean(axis=0).min()) if losses.size else 0.0
    losses = np.minimum(losses, LOSS_SPAN * max(best_mean, 1.0))
    m, d = losses.shape
    effective = rho * m
    r0, t0, k0, nu0 = np.full(d, 0.5), 0.25 * np.eye(d), 1.0, float(d)
    mean = losses.mean(axis=0)
    centred = losses - mean
    scatter = centred.T @ centred / m
    kappa = k0 + effective
    nu = nu0 + effective
    location = (k0 * r0 + effective * mean) / kappa
    spread = t0 + effective * scatter + effective * (k0 / kappa) * np.outer(r0 - mean, r0 - mean)
    dof = nu - d + 1.0
    z = rng.multivariate_normal(np.zeros(d), spread / (kappa * dof), size=n, method="cholesky")
    xi = rng.chisquare(dof, size=n)
    return location + z * np.sqrt(dof / xi)[:, None]


def sample_risks(
    losses: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
    *,
    sampler: str = "bootstrap",
    rho: float = 1.0,
    alpha: float = 0.0,
) -> np.ndarray:
    """``n_samples`` risk vectors (n_samples, d) from p(r | L) for a loss matrix (m, d)."""
    losses = np.asarray(losses, dtype=float)
    if sampler == "bootstrap":
        return _bootstrap(losses, n_samples, rho, rng)
    if sampler == "dirichlet":
        return _dirichlet(losses, n_samples, rho, alpha, rng)
    if sampler == "student-t":
        return _student_t(losses, n_samples, rho, rng)
    raise ValueError(f"unknown Agnostic Bayes sampler {sampler!r}; valid: {', '.join(SAMPLERS)}")


def win_shares(risks: np.ndarray) -> np.ndarray:
    """Fraction of risk samples (s, d) in which each model is the argmin.

    A tie splits the sample's unit equally between the tied models — the expectation of
    the thesis's uniform random tie-breaking, without its noise.
    """
    risks = np.atleast_2d(risks)
    winners = risks <= risks.min(axis=1, keepdims=True) + TIE_TOLERANCE
    return (winners / winners.sum(axis=1, keepdims=True)).mean(axis=0)


def exact_bootstrap_posterior(losses: np.ndarray) -> np.ndarray:
    """Pr(h is best) under the bootstrap, by enumerating every resample of the rows.

    Each multiset of m rows drawn with replacement has multinomial probability; ties
    split evenly. Exact, so usable for small m only (C(2m−1, m) multisets).
    """
    losses = np.asarray(losses, dtype=float)
    m, d = losses.shape
    shares = np.zeros(d)
    for chosen in itertools.combinations_with_replacement(range(m), m):
        counts = np.bincount(chosen, minlength=m)
        probability = math.factorial(m) / np.prod([math.factorial(c) for c in counts]) / m**m
        shares += probability * win_shares(counts @ losses / m)
    return shares
