"""Conformance of the search parts: acquisitions, acquisition optimizers and initial
designs."""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo import components, spaces
from ensembo.conformance.check_run import CheckRun, require
from ensembo.conformance.synthetic import CONDITIONAL_SPACE, FLAT_SPACE, synthetic_problem
from ensembo.proposal import SurrogateAcquisition
from ensembo.protocols import Acquisition, AcquisitionOptimizer, InitialDesign
from ensembo.registry import Registry
from ensembo.trials import History, Trial, TrialState

_SPACES = (("flat", FLAT_SPACE), ("conditional", CONDITIONAL_SPACE))


def check_acquisition(
    acquisition: Any, *, seed: int = 0, registry: Registry | None = None
) -> list[str]:
    """Check an acquisition on posteriors around an incumbent, including zero variance
    (a configuration the surrogate has seen). Returns the names of the checks passed;
    raises :class:`~ensembo.conformance.ConformanceError` listing every failed one."""
    checks = CheckRun("acquisition", acquisition, registry)
    first = checks.first(Acquisition, "has no __call__(mean, variance, best) and gradient")
    if first is None:
        return checks.done()
    rng = np.random.default_rng(seed)
    mean, variance, best = rng.normal(size=9), rng.uniform(0.01, 2.0, 9), 0.0
    with checks.check("one finite value per point"):
        values = np.asarray(first(mean, variance, best))
        require(values.shape == (9,), f"shape {values.shape}, expected (9,)")
        require(bool(np.all(np.isfinite(values))), "non-finite values")
    with checks.check("zero variance gives finite values and gradients"):
        flat = np.zeros(9)
        finite = [np.asarray(first(mean, flat, best)), *map(np.asarray,
                                                            first.gradient(mean, flat, best))]
        require(all(np.all(np.isfinite(v)) for v in finite), "non-finite at variance 0")
    with checks.check("a lower mean is at least as good"):
        lower = np.asarray(first(mean - 0.5, variance, best))
        require(bool(np.all(lower >= np.asarray(first(mean, variance, best)) - 1e-12)),
                "targets are minimized, but a lower predicted mean scored worse")
    with checks.check("the same values point by point"):
        alone = [float(first(mean[i:i + 1], variance[i:i + 1], best)[0]) for i in range(9)]
        require(np.allclose(values, alone, equal_nan=True),  # NaN: the first check's finding
                "values depend on the other points of the batch")
    with checks.check("gradients match finite differences"):
        by_mean, by_variance = map(np.asarray, first.gradient(mean, variance, best))
        step = 1e-6
        numeric_mean = (first(mean + step, variance, best) - first(mean - step, variance, best))
        numeric_variance = (first(mean, variance + step, best)
                            - first(mean, variance - step, best))
        for name, analytic, numeric in (("mean", by_mean, numeric_mean / (2 * step)),
                                        ("variance", by_variance, numeric_variance / (2 * step))):
            require(np.allclose(analytic, numeric, rtol=1e-3, atol=1e-6),
                    f"d/d {name} differs from finite differences: {np.round(analytic, 5)} vs "
                    f"{np.round(numeric, 5)}")
    return checks.done()


def _surface(space: spaces.Space, seed: int) -> tuple[SurrogateAcquisition, History]:
    """Expected improvement of a GP fit to 12 trials of a synthetic problem, over the
    worst of them: over the best, it was zero (to float precision) on a quarter of the
    flat space and half the conditional one, so the lowest-scoring configurations tied
    with the best and an optimizer returning them passed."""
    configs, batch, y = synthetic_problem(space, 12, seed)
    surrogate = components.build("surrogate", "gp")
    surrogate.fit(batch, y, np.random.default_rng(seed))
    history = History([Trial(number=i, config=c, state=TrialState.COMPLETE, loss=float(v))
                       for i, (c, v) in enumerate(zip(configs, y, strict=True))])
    return SurrogateAcquisition(surrogate, components.build("acquisition", "ei"),
                                float(y.max())), history


PRIOR_SAMPLE = 64
"""How many seeded random configurations the first one returned is compared with."""

PRIOR_QUANTILE = 0.1
"""The quality bar: the first configuration must score at least this quantile of the
random ones. Low, so that a correct optimizer with a small budget (the best of 3 random
configurations falls below it with probability 0.1**3, 0.1%) passes, while one
returning the lowest-scoring configurations still fails; the median failed the best of
3 random on 5 of 20 seeds."""


def _prior_bar(surface: SurrogateAcquisition, space: spaces.Space, seed: int) -> float:
    """The ``PRIOR_QUANTILE`` score of a seeded random sample of the space: what an
    optimizer's best configuration must reach, whatever its order."""
    sample = space.sample(PRIOR_SAMPLE, np.random.default_rng([seed, PRIOR_SAMPLE]))
    return float(np.quantile(surface.score(space.encode(sample)), PRIOR_QUANTILE))


def check_acquisition_optimizer(
    optimizer: Any, *, seed: int = 0, registry: Registry | None = None
) -> list[str]:
    """Check an acquisition optimizer on a GP's expected improvement over a flat and a
    conditional space. Returns the names of the checks passed; raises
    :class:`~ensembo.conformance.ConformanceError` listing every failed one."""
    checks = CheckRun("acquisition_optimizer", optimizer, registry)
    lacking = "has no maximize(surface, space, history, n, rng)"
    if checks.first(AcquisitionOptimizer, lacking) is None:
        return checks.done()
    for label, source in _SPACES:
        space = spaces.load(source)
        surface, history = _surface(space, seed)
        arguments = (surface, space, history, 3)
        with checks.check(f"up to n distinct valid configurations, best first, {label} space"):
            found = checks.fresh().maximize(*arguments, np.random.default_rng(seed))
            require_some_distinct_valid(found, space, 3, "maximize")
            scores = surface.score(space.encode(found))
            require(bool(np.all(scores[0] >= scores[1:] - 1e-9)),
                    f"the first is not the best: scores {np.round(scores, 6)}")
            bar = _prior_bar(surface, space, seed)
            require(scores[0] >= bar,
                    f"the first scores {scores[0]:.6g}, below {bar:.6g}, the "
                    f"{PRIOR_QUANTILE * 100:.0f}th percentile of {PRIOR_SAMPLE} random "
                    "configurations: the best an optimizer returns should beat the worst "
                    "tenth of random sampling")
        with checks.check(f"same seed, same configurations, {label} space"):
            one = checks.fresh().maximize(*arguments, np.random.default_rng(seed))
            two = checks.fresh().maximize(*arguments, np.random.default_rng(seed))
            require(one == two, "two runs with the same seed differ")
    return checks.done()


def require_some_distinct_valid(found: Any, space: spaces.Space, n: int, method: str) -> None:
    """Fewer than ``n`` configurations is allowed (the study draws the rest), none at all
    is not: the study warns of it and falls back on a random configuration."""
    found = list(found)
    require(found, f"{method} returned no configuration when asked for {n}")
    require(len(found) <= n, f"{method} returned {len(found)} configurations when asked for {n}")
    for config in found:
        space.validate(config)
    require(len({repr(sorted(c.items())) for c in found}) == len(found),
            f"{method} returned repeated configurations")


def check_initial_design(
    design: Any, *, seed: int = 0, registry: Registry | None = None
) -> list[str]:
    """Check an initial design on a flat and a conditional space. Returns the names of
    the checks passed; raises :class:`~ensembo.conformance.ConformanceError` listing
    every failed one."""
    checks = CheckRun("initial_design", design, registry)
    if checks.first(InitialDesign, "has no configs(space, n, rng)") is None:
        return checks.done()
    for label, source in _SPACES:
        space = spaces.load(source)
        for n in (0, 1, 9):
            with checks.check(f"{n} valid configuration(s), {label} space"):
                found = checks.fresh().configs(space, n, np.random.default_rng(seed))
                require(len(found) == n, f"asked for {n}, got {len(found)}")
                for config in found:
                    space.validate(config)
        with checks.check(f"same seed, same design, {label} space"):
            one, two = (checks.fresh().configs(space, 9, np.random.default_rng(seed))
                        for _ in range(2))
            require(one == two, "two designs with the same seed differ")
    return checks.done()
