"""How the GP's cost grows with the number of observations (issue 5).

``python -m ensembo.bench.gp_cost`` prints a markdown table of fit and suggest times
at 50 to 1000 observations of a 10-D problem (Hartmann-6 on the first six inputs, four
irrelevant ones). *fit (cold)* is ML-II from scratch; *fit (warm)* is the refit after
one more observation, started from the previous hyperparameters as in a study;
*suggest* is one ``lbfgs`` maximization of EI. Each entry is the median of
``--repeats`` runs. ``--fit-subset`` compares the subset remedy with exact ML-II.
Times are the process's CPU seconds (run with one BLAS thread), so a busy machine
does not inflate them the way it inflates wall time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from ConfigSpace import ConfigurationSpace

from ensembo.bench.functions import TEST_FUNCTIONS
from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.proposal import SurrogateAcquisition
from ensembo.spaces import Space
from ensembo.trials import Evaluation, History, Trial

DIMENSION = 10
SIZES = (50, 100, 200, 500, 1000)


def _history(configs, losses) -> History:
    history = History()
    for number, (config, loss) in enumerate(zip(configs, losses, strict=True)):
        history.put(
            Trial(number=number, config=config).with_result(
                Evaluation(loss=float(loss)), finished_at=0.0
            )
        )
    return history


def measure(n: int, fit_subset: int, seed: int) -> tuple[float, float, float]:
    space = Space(ConfigurationSpace(space={f"x{i}": (0.0, 1.0) for i in range(DIMENSION)}))
    rng = np.random.default_rng(seed)
    configs = space.sample(n + 1, rng)
    hartmann = TEST_FUNCTIONS["hartmann6"]
    y = np.array([hartmann(np.array([c[f"x{i}"] for i in range(6)])) for c in configs])
    batch = space.encode(configs)
    surrogate = GaussianProcessSurrogate(fit_subset=fit_subset)
    start = time.process_time()
    surrogate.fit(batch.take(np.arange(n)), y[:n], rng)
    cold = time.process_time() - start
    start = time.process_time()
    surrogate.fit(batch, y, rng)
    warm = time.process_time() - start
    surface = SurrogateAcquisition(surrogate, ExpectedImprovement(), float(y.min()))
    start = time.process_time()
    LbfgsOptimizer().maximize(surface, space, _history(configs, y), 1, rng)
    suggest = time.process_time() - start
    return cold, warm, suggest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fit-subset", type=int, nargs="+", default=[300, 10**9])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args(argv)
    print(
        "| observations | fit_subset | fit (cold) CPU s | fit (warm) CPU s | suggest CPU s "
        "| warm fit + suggest CPU s |"
    )
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        for subset in args.fit_subset:
            if subset != args.fit_subset[0] and n <= args.fit_subset[0]:
                continue  # the first setting takes no subset at this size either
            runs = np.array([measure(n, subset, seed) for seed in range(args.repeats)])
            cold, warm, suggest = np.median(runs, axis=0)
            label = "all" if subset >= 10**9 else str(subset)
            print(
                f"| {n} | {label} | {cold:.3f} | {warm:.3f} | {suggest:.3f} "
                f"| {warm + suggest:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
