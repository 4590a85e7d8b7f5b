"""What ensemble bookkeeping costs per iteration, next to fitting the surrogate.

At a given history size n, one iteration of a study costs the strategy
``targets`` + ``update`` + ``ensemble`` and the proposer a surrogate fit (plus the
acquisition optimization). This times both on a synthetic pool: n trials with stored
class probabilities for ``m`` validation examples (later trials are better on average,
as in a search that makes progress, so they keep entering the ensembles), and the
surrogate fit to n configurations of a ``dimension``-D box, warm-started from a fit on
n − 1 as in a study.

Strategies keep state between iterations, so each repeat starts fresh strategies that
have absorbed the first n − ``arrivals`` trials (not timed) and times the iterations
that absorb the last ``arrivals`` trials one by one: their mean is the cost per
iteration (occasional full recomputations included), their maximum the worst one. The
cold column is one iteration of a fresh strategy on all n trials: everything computed
from scratch, as after resuming a study (and the old cost of every iteration).
Medians over ``repeats`` interleaved repetitions, in CPU time. ``in_a_study`` (``python
-m ensembo.bench.ensemble_overhead study DATASET BUDGET``) totals both over a real search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
from ConfigSpace import ConfigurationSpace

from ensembo import components, defaults, spaces
from ensembo.ensemble import EnsembleContext
from ensembo.proposal import ModelBasedProposer
from ensembo.trials import History, Trial, TrialState

STRATEGIES = ("best", "posthoc", "agnostic-bayes", "esmbo", "eo")


@attrs.frozen(kw_only=True)
class OverheadRow:
    strategy: str
    bookkeeping_seconds: float
    worst_seconds: float
    cold_seconds: float
    surrogate_fit_seconds: float
    proposal_seconds: float

    @property
    def ratio(self) -> float:
        """Bookkeeping over the surrogate fit alone."""
        return self.bookkeeping_seconds / self.surrogate_fit_seconds


def synthetic_history(n: int, m: int, classes: int, rng: np.random.Generator,
                      space) -> tuple[History, np.ndarray]:
    y = rng.integers(0, classes, size=m)
    history = History()
    for number, config in enumerate(space.sample(n, rng)):
        skill = rng.uniform(0.5, 1.5 + 1.5 * number / n)
        logits = skill * np.eye(classes)[y] + rng.normal(size=(m, classes))
        probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        loss = float(np.mean(probabilities.argmax(axis=1) != y))
        history.put(Trial(number=number, config=config, state=TrialState.COMPLETE, loss=loss,
                          predictions=probabilities, finished_at=float(number)))
    return history, y


def _seconds(action, *args) -> float:
    """CPU seconds of ``action(*args)``: on a shared machine, wall time mostly measures
    the neighbours (run single-threaded, OMP_NUM_THREADS=1, so CPU time is the work)."""
    begin = time.process_time()
    action(*args)
    return time.process_time() - begin


def _iteration(strategy: Any, history: History, context: EnsembleContext) -> None:
    strategy.targets(history, context)
    strategy.update(history, history[-1], context)
    strategy.ensemble(history, context)


def _absorbing(strategy_name: str, history: History, context: EnsembleContext,
               arrivals: int) -> list[float]:
    """Seconds of each iteration that absorbs one of the last ``arrivals`` trials."""
    strategy = components.build("ensemble_strategy", strategy_name)
    first = len(history) - arrivals
    strategy.ensemble(History(history[:first]), context)  # the study so far, not timed
    seconds = []
    for size in range(first + 1, len(history) + 1):
        seconds.append(_seconds(_iteration, strategy, History(history[:size]), context))
    return seconds


def measure(n_trials: int = 200, m: int = 300, classes: int = 2, dimension: int = 2,
            surrogate: Any = "gp", strategies: Sequence[str] = STRATEGIES, repeats: int = 7,
            arrivals: int = 20, seed: int = 0) -> list[OverheadRow]:
    """Repeats interleave one surrogate fit, one proposal (fit + acquisition
    optimization) and the last ``arrivals`` iterations of every strategy, so machine
    load hits all of them alike; each column is a median over repeats."""
    rng = np.random.default_rng(seed)
    space = spaces.load(ConfigurationSpace(
        space={f"x{i}": (0.0, 1.0) for i in range(dimension)}, seed=seed))
    history, y = synthetic_history(n_trials, m, classes, rng, space)
    context = EnsembleContext(y_true=y, loss="zero-one", task="classification",
                              classes=np.arange(classes), budget=n_trials, seed=seed)
    batch = space.encode([t.config for t in history])
    fits, proposals = [], []
    means: dict[str, list[float]] = {name: [] for name in strategies}
    worst: dict[str, list[float]] = {name: [] for name in strategies}
    cold: dict[str, list[float]] = {name: [] for name in strategies}
    previous = space.encode([t.config for t in history[:-1]])
    for repeat in range(repeats):
        # As in a study: the surrogate was fit at the previous iteration (n − 1 trials),
        # so this iteration's fit is warm-started from those hyperparameters.
        model = components.build("surrogate", surrogate)
        model.fit(previous, history.losses()[:-1], np.random.default_rng(repeat))
        rng = np.random.default_rng(repeat)
        fits.append(_seconds(model.fit, batch, history.losses(), rng))
        optimizer = defaults.default_acquisition_optimizer(model)
        proposer = ModelBasedProposer(model, components.build("acquisition", "ei"),
                                      components.build("acquisition_optimizer", optimizer))
        model.fit(previous, history.losses()[:-1], np.random.default_rng(repeat))
        proposals.append(_seconds(proposer.propose, space, history, history.losses(), 1,
                                  np.random.default_rng(repeat)))
        for name in strategies:
            seconds = _absorbing(name, history, context, arrivals)
            means[name].append(float(np.mean(seconds)))
            worst[name].append(float(np.max(seconds)))
            fresh = components.build("ensemble_strategy", name)
            cold[name].append(_seconds(_iteration, fresh, history, context))
    return [
        OverheadRow(strategy=name, bookkeeping_seconds=float(np.median(means[name])),
                    worst_seconds=float(np.median(worst[name])),
                    cold_seconds=float(np.median(cold[name])),
                    surrogate_fit_seconds=float(np.median(fits)),
                    proposal_seconds=float(np.median(proposals)))
        for name in strategies
    ]


def render(rows: Sequence[OverheadRow]) -> str:
    header = (
        "| strategy | bookkeeping / iteration (s) | worst iteration (s) | cold (s) "
        "| surrogate fit (s) | ratio to fit | worst to fit | cold to fit "
        "| fit + acquisition optimization (s) | ratio to proposal |"
    )
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        fit, proposal = row.surrogate_fit_seconds, row.proposal_seconds
        lines.append(
            f"| {row.strategy} | {row.bookkeeping_seconds:.4f} | {row.worst_seconds:.4f} "
            f"| {row.cold_seconds:.4f} | {fit:.3f} | {row.ratio:.1%} "
            f"| {row.worst_seconds / fit:.1%} | {row.cold_seconds / fit:.1%} "
            f"| {proposal:.3f} | {row.bookkeeping_seconds / proposal:.1%} |")
    return "\n".join(lines)


class _Timed:
    """Forwards calls to ``inner`` and adds their CPU seconds to ``clock[key]``."""

    def __init__(self, inner: Any, clock: dict[str, float], key: str):
        self._inner, self._clock, self._key = inner, clock, key

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if not callable(method):  # a declared attribute (needs_predictions, ...) as it is
            return method

        def timed(*args: Any, **kwargs: Any) -> Any:
            begin = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                self._clock[self._key] += time.process_time() - begin
        return timed


def in_a_study(dataset: str = "german", strategy: str = "posthoc", budget: int = 200,
               space: str = "random-forest", seed: int = 0) -> dict[str, float]:
    """CPU seconds of the strategy and of the proposals over a whole search on a KEEL
    dataset (the ensembles suite's protocol: 30% test held out, 0.4/0.3 train/validation)."""
    from ensembo.bench.ensembles_data import VALIDATION_FRACTION, load_data
    from ensembo.bench.ensembles_experiments import EXPERIMENTS
    from ensembo.ml import Holdout, MemoryArtifactStore, Task, run_task
    from ensembo.study import Study

    X_train, _, y_train, _, categorical = load_data(EXPERIMENTS["esmbo"], dataset, seed)
    loaded = spaces.load(space)
    task = Task(X_train, y_train, task="classification", space=loaded,
                validation=Holdout(ratio=VALIDATION_FRACTION), loss="zero-one",
                categorical_features=categorical, seed=seed)
    clock = {"strategy": 0.0, "proposals": 0.0}
    timed_strategy = _Timed(components.build("ensemble_strategy", strategy), clock, "strategy")
    study = Study(loaded, ensemble=timed_strategy, seed=seed, loss="zero-one",
                  task="classification", budget=budget,
                  validation_targets=task.validation_targets())
    study.suggester.proposer = _Timed(study.proposer, clock, "proposals")
    run_task(study, task, budget, store=MemoryArtifactStore())
    return {**clock, "validation_rows": float(len(task.validation_targets()))}


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["study"]:
        dataset, budget = sys.argv[2], int(sys.argv[3])
        for name in STRATEGIES:
            result = in_a_study(dataset, name, budget)
            print(f"| {name} | {result['strategy']:.3f} | {result['proposals']:.3f} "
                  f"| {result['strategy'] / result['proposals']:.1%} |")
    else:
        print(render(measure()))
