"""How far apart ML-II start policies end, fit by fit, along a real search (26 Nov).

``python -m ensembo.bench.ml2_starts --experiment esmbo --dataset pima --space svm
--search smbo`` runs one search of an ensembles experiment (``ensembo bench ensembles``)
and records the data of every GP fit it makes. Each start policy then replays the whole
sequence of fits, carrying its own previous optimum from fit to fit as a study does:

* ``previous`` — one L-BFGS-B run from the previous optimum (ensembo's warm fit);
* ``previous+neutral`` — that run and one from the neutral start;
* ``cold-2`` / ``cold-4`` — the neutral start and 1 or 3 draws from the priors.

For each policy the table counts the fits whose negative log posterior is more than
1 nat above the best any policy reached on that fit, gives the median gap, and the
median noise variance the policy settled on (standardized targets). On objectives with
plateaus (many trials with the same loss) the posterior has a mode with the noise at its
floor that interpolates the plateaus beside a noisier one; which is higher depends on
the trials and which a fit finds depends on its path, so "a better optimum on this
search" is not by itself a better policy. The search is steered by ensembo's own fits;
only the replays differ.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from scipy.optimize import minimize

from ensembo.bench.ensembles import EXPERIMENTS, experiment_task, search_study
from ensembo.plugins.surrogates.gp import surrogate as gp_surrogate
from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters, sample_vector
from ensembo.plugins.surrogates.gp.ml2 import negative_log_posterior
from ensembo.plugins.surrogates.gp.posterior import training_geometry

POLICIES = ("previous", "previous+neutral", "cold-2", "cold-4")


@contextlib.contextmanager
def recorded_fits() -> Iterator[list[tuple[Any, ...]]]:
    """Record (kernel, x, y, keys, bounds) of every ML-II fit made inside the block."""
    fits: list[tuple[Any, ...]] = []
    fit_ml2 = gp_surrogate.fit_ml2

    def recording(kernel, x, y, keys, rng, previous, restarts, bounds, *rest):
        fits.append((kernel, x, y, keys, bounds))
        return fit_ml2(kernel, x, y, keys, rng, previous, restarts, bounds, *rest)

    gp_surrogate.fit_ml2 = recording
    try:
        yield fits
    finally:
        gp_surrogate.fit_ml2 = fit_ml2


def _best_of(arguments: tuple[Any, ...], bounds: np.ndarray,
             starts: list[np.ndarray]) -> tuple[float, np.ndarray]:
    """Lowest negative log posterior over L-BFGS-B runs from ``starts``, and where."""
    best = (np.inf, starts[0])
    for start in starts:
        result = minimize(negative_log_posterior, np.clip(start, bounds[:, 0], bounds[:, 1]),
                          args=arguments, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": 200})
        if result.fun < best[0]:
            best = (float(result.fun), result.x)
    return best


def replay(fits: list[tuple[Any, ...]], seed: int = 0) -> dict[str, np.ndarray]:
    """Objective (lower is better) and noise variance each policy reaches at each fit,
    as arrays of shape (fits, 2)."""
    rng = np.random.default_rng(seed)
    reached: dict[str, list[tuple[float, float]]] = {policy: [] for policy in POLICIES}
    previous: dict[str, np.ndarray | None] = {"previous": None, "previous+neutral": None}
    for kernel, x, y, keys, bounds in fits:
        arguments = (kernel, x, y, keys, training_geometry(x, keys))  # shared by every run
        d = x.shape[1]
        neutral = Hyperparameters.initial(d).to_vector()
        draws = [sample_vector(d, rng) for _ in range(3)]
        for policy, last in previous.items():
            if last is None or len(last) != len(neutral):
                starts = [neutral, draws[0]]  # the first fit of a search is cold
            else:
                starts = [last] if policy == "previous" else [last, neutral]
            value, previous[policy] = _best_of(arguments, bounds, starts)
            reached[policy].append((value, _noise(previous[policy])))
        for policy, starts in (("cold-2", [neutral, draws[0]]), ("cold-4", [neutral, *draws])):
            value, vector = _best_of(arguments, bounds, starts)
            reached[policy].append((value, _noise(vector)))
    return {policy: np.array(values) for policy, values in reached.items()}


def _noise(vector: np.ndarray) -> float:
    return float(Hyperparameters.from_vector(vector).noise)


def table(reached: dict[str, np.ndarray]) -> str:
    best = np.min(np.vstack([values[:, 0] for values in reached.values()]), axis=0)
    header = ("| policy | fits | fits > 1 nat from the best | median gap (nats) | largest gap "
              "| median noise variance |")
    lines = [header, "|---|---|---|---|---|---|"]
    for policy, values in reached.items():
        gap = values[:, 0] - best
        lines.append(f"| {policy} | {len(gap)} | {int((gap > 1).sum())} | "
                     f"{np.median(gap):.2f} | {gap.max():.1f} | {np.median(values[:, 1]):.1e} |")
    return "\n".join(lines)


def run_search(experiment_name: str, dataset: str, space_name: str, search_name: str,
               seed: int, budget: int) -> None:
    """One search of an ensembles experiment, as ``ensembo bench ensembles`` runs it."""
    from ensembo.ml import run_task

    experiment = EXPERIMENTS[experiment_name]
    task = experiment_task(experiment, dataset, space_name, seed)
    run_task(search_study(task, experiment.searches[search_name], seed, budget), task, budget)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="esmbo", choices=sorted(EXPERIMENTS))
    parser.add_argument("--dataset", default="pima")
    parser.add_argument("--space", default="svm")
    parser.add_argument("--search", default="smbo", help="a search of the experiment")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=80)
    args = parser.parse_args(argv)
    searches = EXPERIMENTS[args.experiment].searches
    if args.search not in searches:
        parser.error(f"experiment {args.experiment!r} has no search {args.search!r}; "
                     f"valid: {', '.join(searches)}")
    with recorded_fits() as fits:
        run_search(args.experiment, args.dataset, args.space, args.search, args.seed,
                   args.budget)
    print(table(replay(fits, args.seed)))


if __name__ == "__main__":
    main()
