"""``ensembo bench ensembles``: the ensemble strategies against the seeds' baselines.

The experiments (which searches run per block, which methods read them) are in
:mod:`ensembo.bench.ensembles_experiments`; this module runs blocks and scores them.

Protocol: a stratified test split of 30% is held out; the rest is split into training
and a fixed validation holdout (0.4 / 0.3 / 0.3 overall, as Lacoste et al.). Models are
trained once on the training rows (no retraining unless the experiment says ``refit``),
and an ensemble's test error is its members' test predictions combined as on validation
— weighted majority vote for the zero-one loss, a tied vote going to the class with the
highest mean probability as the fitted ensemble predicts it; weighted mean for
regression (targets standardized by the training rows). Runs are spawned processes
writing one JSON record each; finished records are not run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ensembo import environment
from ensembo.bench.ensembles_data import REGRESSION_SPACES, load_data, load_named, source_of
from ensembo.bench.ensembles_experiments import (
    EXPERIMENTS,
    Experiment,
    Search,
    method_ensembles,
    search_of_method,
)
from ensembo.bench.provenance import system_description
from ensembo.bench.seeds import seed_list
from ensembo.bench.standalone_runs import (
    SuiteRun,
    check_libraries,
    chosen_datasets,
    other_size_note,
    report_suite,
    run_and_collect,
    write_record,
)
from ensembo.bench.suite import UnknownSuiteError


@attrs.frozen(kw_only=True)
class Block:
    """One (experiment, dataset, space, seed): every search of the experiment on it."""

    experiment: str
    dataset: str
    space: str
    seed: int
    budget: int
    path: str


@attrs.define
class PredictionsOnTest:
    """Test predictions of one search's trials, made when a method first asks for them:
    refitting costs a fit, so only the trials some method picks are refitted."""

    task: Any
    history: Any
    store: Any
    refit: bool
    _made: dict[int, np.ndarray] = attrs.field(factory=dict)

    def __getitem__(self, number: int) -> np.ndarray:
        if number not in self._made:
            model = (self.task.fit(dict(self.history[number].config)) if self.refit
                     else self.store.get(number))
            self._made[number] = self.task.predict(model, self.task.X_test)
        return self._made[number]


def evaluate(
    ensemble: Any,
    history: Any,
    test_predictions: Mapping[int, np.ndarray] | PredictionsOnTest,
    y_val: np.ndarray,
    y_test: np.ndarray,
    loss: Any,
    classification: bool,
) -> dict[str, Any]:
    """Validation loss of ``ensemble`` as its strategy scored it, and the test error of
    what the fitted ensemble predicts: :meth:`FittedEnsemble.predict` breaks a tied vote
    by the members' mean probability, where the vote losses count a tie as an error."""
    from ensembo.ml.fitted_ensemble import break_vote_ties, leading_votes
    from ensembo.plugins.losses.ensemble_loss import weighted_ensemble_loss

    weights = np.asarray(ensemble.weights)
    val = np.stack([history[n].predictions for n in ensemble.members])
    test = np.stack([test_predictions[n] for n in ensemble.members])
    result: dict[str, Any] = {
        "validation_loss": weighted_ensemble_loss(loss, y_val, val, weights),
        "size": len(ensemble.members),
        "members": list(ensemble.members),
        "weights": [round(w, 6) for w in ensemble.weights],
    }
    if classification:
        votes = np.tensordot(weights, np.stack([loss.contributions(p) for p in test]), axes=1)
        tied = leading_votes(votes).sum(axis=1) > 1
        wrong = break_vote_ties(votes, np.tensordot(weights, test, axes=1)) != y_test
        result.update(test_loss=float(np.mean(wrong)), test_ties=int(np.sum(tied)),
                      test_wrong="".join("1" if w else "0" for w in wrong))
    else:
        result["test_loss"] = weighted_ensemble_loss(loss, y_test, test, weights)
    return result


def experiment_task(experiment: Experiment, dataset: str, space: str, seed: int) -> Any:
    """The ``Task`` every search of an (experiment, dataset, space, seed) block runs on."""
    from ensembo import spaces
    from ensembo.ml import Task

    X_train, X_test, y_train, y_test, categorical = load_data(experiment, dataset, seed)
    return Task(X_train, y_train, task=experiment.task,
                space=spaces.load(REGRESSION_SPACES.get(space, space)),
                validation=experiment.validation(),
                loss="zero-one" if experiment.task == "classification" else "mse",
                categorical_features=categorical, seed=seed, X_test=X_test, y_test=y_test)


def search_study(task: Any, search: Search, seed: int, budget: int) -> Any:
    """A fresh study for one of an experiment's searches on ``task``."""
    from ensembo.study import Study

    return Study(task.space, surrogate=search.surrogate, ensemble=search.ensemble, seed=seed,
                 acquisition_optimizer=search.acquisition_optimizer,
                 loss=task.loss_spec, task=task.task, budget=budget,
                 validation_targets=task.validation_targets())


def execute(block: Block) -> dict[str, Any]:
    """Run every search of ``block``, score every method, write the record."""
    from ensembo.ml import MemoryArtifactStore, run_task

    begin = time.perf_counter()
    experiment = EXPERIMENTS[block.experiment]
    record: dict[str, Any] = {**attrs.asdict(block), "status": "complete", "error": None,
                              "environment": environment.describe(),
                              "system": system_description(), "searches": {}, "methods": {}}
    try:
        task = experiment_task(experiment, block.dataset, block.space, block.seed)
        studies, test_predictions = {}, {}
        for name, search in experiment.searches.items():
            started = time.perf_counter()
            study = search_study(task, search, block.seed, block.budget)
            store = MemoryArtifactStore()
            run_task(study, task, block.budget, store=store)
            test_predictions[name] = PredictionsOnTest(task=task, history=study.history,
                                                     store=store, refit=experiment.refit)
            studies[name] = study
            record["searches"][name] = {
                "seconds": time.perf_counter() - started,
                "completed": len(study.history.completed()),
                "best_validation_loss": study.best_trial.loss,
            }
        loss = task.loss
        search_of = search_of_method(experiment.kind)

        def score(ensembles: dict[str, Any]) -> dict[str, dict[str, Any]]:
            return {method: evaluate(ensemble, studies[search_of[method]].history,
                                     test_predictions[search_of[method]],
                                     studies[search_of[method]].context.y_true, task.targets_test,
                                     loss, experiment.task == "classification")
                    for method, ensemble in ensembles.items()}

        record["methods"] = score(method_ensembles(experiment.kind, studies))
        first = max(1, block.budget - experiment.average_last + 1)
        for trials in range(first, block.budget + 1) if experiment.average_last else ():
            results = (record["methods"] if trials == block.budget  # the final ones, scored above
                       else score(method_ensembles(experiment.kind, studies, trials)))
            for method, result in results.items():
                record["methods"][method].setdefault("last", []).append(
                    {"trials": trials, "test_loss": result["test_loss"],
                     "test_wrong": result.get("test_wrong")})
    except Exception as error:  # a crashed block is a result, reported, not a harness crash
        record.update(status="failed", error=f"{type(error).__name__}: {error}"[-2000:])
    record["wall_seconds"] = time.perf_counter() - begin
    write_record(block.path, record)
    return record


def plan(out: Path, experiments: Sequence[str], seeds: Sequence[int], budget: int,
         limit: int | None = None, datasets: Collection[str] | None = None,
         spaces: Mapping[str, Collection[str]] | None = None) -> list[Block]:
    """Blocks interleaved across experiments and spaces (dataset i of each, then i + 1), so
    an interrupted run leaves every experiment with the same first datasets done.

    ``datasets`` keeps only those datasets (each experiment the ones it has); ``spaces``
    maps an experiment to the spaces it keeps (an experiment it does not name keeps all)."""
    queues = []
    for name in experiments:
        experiment = EXPERIMENTS[name]
        kept = [d for d in experiment.datasets[:limit] if datasets is None or d in datasets]
        kept_spaces = (spaces or {}).get(name, experiment.spaces)
        for space in (s for s in experiment.spaces if s in kept_spaces):
            queues.append([(name, d, space) for d in kept])
    blocks = []
    for position in range(max(map(len, queues), default=0)):
        for queue in queues:
            if position < len(queue):
                name, dataset, space = queue[position]
                for seed in seeds:
                    path = out / "ensembles" / name / space / dataset / f"seed-{seed}.json"
                    blocks.append(Block(experiment=name, dataset=dataset, space=space, seed=seed,
                                        budget=budget, path=str(path)))
    return blocks


def run_ensembles(
    *,
    experiments: Sequence[str] = tuple(EXPERIMENTS),
    seeds: int | Iterable[int] = 1,
    budget: int = 50,
    workers: int = 1,
    out: Path = Path("bench-results"),
    limit: int | None = None,
    datasets: Collection[str] | None = None,
    spaces: Mapping[str, Collection[str]] | None = None,
    command: str = "",
    progress: bool = True,
    run: bool = True,
    check: Callable[[Sequence[str]], None] | None = None,
) -> SuiteRun:
    """Run what is missing (unless ``run`` is false; ``check`` first sees the datasets it
    needs, :func:`run_and_collect`), then write ``out/ensembles/report.md``;
    returns its path and the blocks lost with their worker. Says how many blocks ran and
    how many were finished already, and (in the report too) how many records of another
    budget were left out."""
    from ensembo.bench.ensembles_report import render_report

    chosen_seeds = seed_list(seeds)
    blocks = plan(Path(out), experiments, chosen_seeds, budget, limit, datasets, spaces)
    collected = run_and_collect(blocks, execute, workers=workers, label="ensembles",
                                unit="block", progress=progress, run=run, check=check)
    note = other_size_note(collected, "ensembles")
    return report_suite(Path(out) / "ensembles" / "report.md", collected,
                        lambda: render_report(collected.records,
                                              command=command or "ensembo bench ensembles",
                                              budget=budget, seeds=len(chosen_seeds),
                                              notes=[note] if note else []),
                        "block")


def chosen_experiments(selectors: str | None) -> tuple[list[str], dict[str, set[str]]]:
    """The experiments named by ``--optimizers``, and the spaces kept for those named as
    ``experiment:space`` (``esmbo-large:random-forest`` runs that space alone); an unknown
    experiment or space stops the command before anything runs, naming it."""
    if not selectors:
        return list(EXPERIMENTS), {}
    experiments: list[str] = []
    spaces: dict[str, set[str]] = {}
    for selector in (s.strip() for s in selectors.split(",") if s.strip()):
        name, _, space = selector.partition(":")
        if name not in EXPERIMENTS:
            raise UnknownSuiteError(
                f"--optimizers: unknown ensembles experiment {name!r}; "
                f"valid: {', '.join(EXPERIMENTS)}"
            )
        if space and space not in EXPERIMENTS[name].spaces:
            raise UnknownSuiteError(
                f"--optimizers: {selector!r}: experiment {name!r} has no space {space!r}; "
                f"its spaces: {', '.join(EXPERIMENTS[name].spaces)}"
            )
        if name not in experiments:
            experiments.append(name)
        if space:
            spaces.setdefault(name, set()).add(space)
        else:
            spaces[name] = set(EXPERIMENTS[name].spaces)
    return experiments, spaces


def main(args: Any, command: str) -> int:
    """``ensembo bench ensembles [--optimizers E1,E2:SPACE] [--problems D1,D2] [--seeds N]
    [--budget N] [--workers N] [--out DIR] [--report-only]``.

    ``--optimizers`` selects experiments (``esmbo,esmbo-large,eo,eo-cv,eo-refit,eo-large,
    eo-ties,eo-matern,eo-mcmc,segor``; default all), ``experiment:space`` one of an
    experiment's spaces;
    ``--problems`` selects datasets among theirs.
    """
    chosen, spaces = chosen_experiments(args.optimizers)
    theirs = list(dict.fromkeys(d for name in chosen for d in EXPERIMENTS[name].datasets))
    datasets = chosen_datasets(args, theirs, allowed=theirs)
    suite = run_ensembles(experiments=chosen, seeds=args.seeds, budget=args.budget or 50,
                           workers=args.workers, out=args.out, datasets=datasets, spaces=spaces,
                           command=command, progress=not args.no_progress,
                           run=not getattr(args, "report_only", False),
                           check=lambda pending: check_libraries(
                               args, pending, load_named,
                               kind=lambda name: source_of(name).partition(":")[0]))
    return suite.finish()
