"""``ensembo bench ensembles``: the ensemble strategies against the seeds' baselines.

Three experiments, each a set of searches per (dataset, space, seed) whose histories
several methods are read from, so one search serves every method that shares it:

* ``esmbo`` (Lacoste et al., Tables 8.2–8.3): KEEL datasets, ``svm`` and
  ``random-forest`` spaces. Searches: random search (→ RS = its best, ERS = the
  bootstrap Agnostic Bayes ensemble of it, N = ⌊budget/2⌋), GP-EI with the single best
  (→ SMBO), GP-EI under the ``esmbo`` strategy (→ ESMBO). Each method is also scored after each
  of the last 15 trials, which Lacoste et al. average "for more stable results" (L1882).
  ``esmbo-large`` is the same on the KEEL sets of at least 800 rows, made binary by merging
  classes and capped at 3,000 rows, closer to Lacoste's 39 binarised sets (Adult, MNIST
  and Letter pairs, Ringnorm, ...): their test sets of 250–900 rows decide each dataset's
  comparison more firmly than the 45-row test sets of ``iris`` or ``tae``.
* ``eo`` (Lévesque thesis Table 4.6): KEEL datasets, ``cash-levesque``. Searches: BO
  (→ BO-best, and BO-post = forward greedy selection from the 3 best), EO
  (→ EO, the ensemble held at the end, and EO-post = forward greedy over its pool) and
  EO with the sigmoid-margin loss (→ EO-sig; the default loss is the squared margin).
  ``eo-cv`` is the same with Lévesque's 5-fold cross-validation in place of the holdout
  (five fits per trial), and ``eo-refit`` adds his retraining: the members are refitted
  on every non-test row before they predict the test set. ``eo-large`` runs ``eo-refit``
  on the KEEL sets of at least 800 rows (classes kept, capped at 3,000 rows).
  ``eo-ties`` is an ablation of ``eo-large`` on its two-class sets, where a vote of 12
  ties often: EO with 11 members (EO-11), and EO whose zero-one refill charges a tie half
  an error, the expected loss of Lévesque's random tie-break (EO-half), against BO.
  ``eo-matern`` is ``eo-large`` with Lévesque's ch. 4 surrogate for every search:
  Matérn-5/2 on imputed inactive values with local-search acquisition (his GP-matern-ls)
  instead of ensembo's conditional kernel with L-BFGS.
  ``eo-mcmc`` is ``eo-matern`` with its GP hyperparameters slice-sampled, as his were,
  instead of fitted by maximum marginal likelihood.
* ``segor`` (Roschewitz et al., Table 2): regression datasets, decision-tree and MLP
  spaces. Searches: BO (→ s-m single best, s-m-ph = forward greedy with mse),
  SEGOR fixed (→ f-m) and SEGOR dynamic (→ d-m).

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
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ensembo.bench.ensembles_data import (
    KEEL_LARGE,
    KEEL_LARGE_BINARY,
    KEEL_SMALL,
    REGRESSION,
    REGRESSION_SPACES,
    VALIDATION_FRACTION,
    load_data,
)
from ensembo.bench.seeds import seed_list
from ensembo.bench.standalone_runs import chosen_datasets, run_and_collect, write_record
from ensembo.bench.suite import UnknownSuiteError


@attrs.frozen(kw_only=True)
class Search:
    surrogate: str | dict[str, Any] | None  # None: random search; "auto": the study default
    ensemble: Any = "best"
    acquisition_optimizer: str = "auto"  # "auto": the study default for the surrogate


@attrs.frozen(kw_only=True)
class Experiment:
    name: str
    task: str
    datasets: tuple[str, ...]
    spaces: tuple[str, ...]
    searches: dict[str, Search]
    methods: tuple[str, ...]
    average_last: int = 0  # also score the methods after each of the last k trials
    protocol: str = ""  # whose searches and methods it runs; default its own name
    binary: bool = False  # merge the classes into two groups of near-equal size
    max_rows: int | None = None  # stratified subsample of the dataset (per seed) above this
    folds: int | None = None  # k-fold CV on the 70% that is not test, instead of the holdout
    refit: bool = False  # members predict the test set retrained on every non-test row

    def validation(self) -> Any:
        """What trials are scored on: Lacoste's fixed holdout, or Lévesque's k-fold CV
        (out-of-fold predictions of every non-test row; the test prediction is the mean
        of the k fold models)."""
        from ensembo.ml import CrossValidation, Holdout

        if self.folds is None:
            return Holdout(ratio=VALIDATION_FRACTION)
        return CrossValidation(folds=self.folds)

    @property
    def kind(self) -> str:
        return self.protocol or self.name


EXPERIMENTS = {
    "esmbo": Experiment(
        name="esmbo",
        task="classification",
        datasets=KEEL_SMALL[:22],
        spaces=("svm", "random-forest"),
        searches={
            "rs": Search(surrogate=None),
            "smbo": Search(surrogate="auto"),
            "esmbo": Search(surrogate="auto", ensemble="esmbo"),
        },
        methods=("ESMBO", "SMBO", "RS", "ERS"),
        average_last=15,  # "we average the values obtained during the last 15 iterations" (L1882)
    ),
    "eo": Experiment(
        name="eo",
        task="classification",
        datasets=KEEL_SMALL[:16],
        spaces=("cash-levesque",),
        searches={
            "bo": Search(surrogate="auto"),
            "eo": Search(surrogate="auto", ensemble="eo"),
            "eo-sig": Search(surrogate="auto", ensemble={"name": "eo", "loss": "sigmoid-margin"}),
        },
        methods=("EO", "EO-sig", "EO-post", "BO-post", "BO-best"),
    ),
    "segor": Experiment(
        name="segor",
        task="regression",
        datasets=tuple(REGRESSION),
        spaces=tuple(REGRESSION_SPACES),
        searches={
            "bo": Search(surrogate="auto"),
            "segor-fixed": Search(surrogate="auto", ensemble={"name": "segor", "size": "fixed"}),
            "segor-dynamic": Search(
                surrogate="auto", ensemble={"name": "segor", "size": "dynamic"}
            ),
        },
        methods=("f-m", "d-m", "s-m-ph", "s-m"),
    ),
}
EXPERIMENTS["esmbo-large"] = attrs.evolve(
    EXPERIMENTS["esmbo"], name="esmbo-large", protocol="esmbo", datasets=KEEL_LARGE,
    binary=True, max_rows=3000,
)
EXPERIMENTS["eo-cv"] = attrs.evolve(EXPERIMENTS["eo"], name="eo-cv", protocol="eo", folds=5)
# Lévesque's whole protocol: "final models are retrained on train + validation" (L1091).
EXPERIMENTS["eo-refit"] = attrs.evolve(EXPERIMENTS["eo-cv"], name="eo-refit", refit=True)
# ... on the larger KEEL sets (classes kept), nearer his 18 UCI sets (Adult, Letter, Magic, ...).
EXPERIMENTS["eo-large"] = attrs.evolve(
    EXPERIMENTS["eo-refit"], name="eo-large", datasets=KEEL_LARGE, max_rows=3000
)
# An ablation, not a paper's table: on two classes a 12-member vote ties often, and the
# zero-one refill counts a tie as an error where Lévesque's vote draws the winner at random.
EXPERIMENTS["eo-ties"] = attrs.evolve(
    EXPERIMENTS["eo-large"], name="eo-ties", protocol="eo-ties", datasets=KEEL_LARGE_BINARY,
    searches={
        "bo": Search(surrogate="auto"),
        "eo-11": Search(surrogate="auto", ensemble={"name": "eo", "size": 11}),
        "eo-half": Search(surrogate="auto", ensemble={
            "name": "eo", "refill_loss": {"name": "zero-one", "tie": "half"}}),
    },
    methods=("EO-11", "EO-half", "BO-post", "BO-best"),
)
# Lévesque's ch. 4 surrogate (inactive hyperparameters imputed, thesis L1169; Table 4.6's
# BO-best row is his GP-matern-ls row of Table 5.2): Matérn-5/2 on imputed values and
# local-search acquisition, in place of ensembo's conditional kernel and L-BFGS, with
# ML-II hyperparameters.
EXPERIMENTS["eo-matern"] = attrs.evolve(
    EXPERIMENTS["eo-large"], name="eo-matern",
    searches={name: attrs.evolve(search, surrogate="gp", acquisition_optimizer="local-search")
              for name, search in EXPERIMENTS["eo-large"].searches.items()},
)
# ... and with his hyperparameters slice-sampled (10 samples, the acquisition averaged over
# them): about 10 times the proposal CPU (76 s against 7.5 s per 200-trial search).
EXPERIMENTS["eo-mcmc"] = attrs.evolve(
    EXPERIMENTS["eo-matern"], name="eo-mcmc",
    searches={name: attrs.evolve(search, surrogate={"name": "gp", "hyperparameters": "mcmc"})
              for name, search in EXPERIMENTS["eo-matern"].searches.items()},
)


def method_ensembles(kind: str, studies: dict[str, Any],
                     trials: int | None = None) -> dict[str, Any]:
    """Method name -> the :class:`~ensembo.Ensemble` it returns for an experiment of
    ``kind`` (its protocol), from the finished searches,
    or, given ``trials``, from the searches as they stood after their first ``trials``
    trials (only for ``esmbo``, whose strategies are pure functions of the history)."""
    from ensembo.plugins.ensembles.best import BestSingle
    from ensembo.plugins.ensembles.eo import EnsembleOptimization
    from ensembo.plugins.ensembles.esmbo import ESMBO
    from ensembo.plugins.ensembles.posthoc import PostHocSelection
    from ensembo.trials import History

    def read(search: str, strategy: Any) -> Any:
        study = studies[search]
        history = study.history if trials is None else History(list(study.history)[:trials])
        return strategy.ensemble(history, study.context)

    if kind == "esmbo":
        esmbo = studies["esmbo"].ensemble if trials is None else read("esmbo", ESMBO())
        return {"ESMBO": esmbo, "SMBO": read("smbo", BestSingle()),
                "RS": read("rs", BestSingle()), "ERS": read("rs", ESMBO())}
    if trials is not None:
        raise ValueError(f"scoring earlier iterations is not supported for {kind!r}")
    def bo() -> dict[str, Any]:
        return {"BO-post": read("bo", PostHocSelection()), "BO-best": read("bo", BestSingle())}

    if kind == "eo":
        return {"EO": studies["eo"].ensemble, "EO-sig": studies["eo-sig"].ensemble,
                "EO-post": read("eo", EnsembleOptimization(post=True)), **bo()}
    if kind == "eo-ties":
        return {"EO-11": studies["eo-11"].ensemble, "EO-half": studies["eo-half"].ensemble,
                **bo()}
    return {"f-m": studies["segor-fixed"].ensemble, "d-m": studies["segor-dynamic"].ensemble,
            "s-m-ph": read("bo", PostHocSelection(loss="mse")), "s-m": read("bo", BestSingle())}


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
                              "searches": {}, "methods": {}}
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
        search_of = _search_of_method(experiment.kind)

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


def _search_of_method(kind: str) -> dict[str, str]:
    return {
        "esmbo": {"ESMBO": "esmbo", "SMBO": "smbo", "RS": "rs", "ERS": "rs"},
        "eo": {"EO": "eo", "EO-sig": "eo-sig", "EO-post": "eo", "BO-post": "bo", "BO-best": "bo"},
        "eo-ties": {"EO-11": "eo-11", "EO-half": "eo-half", "BO-post": "bo", "BO-best": "bo"},
        "segor": {"f-m": "segor-fixed", "d-m": "segor-dynamic", "s-m-ph": "bo", "s-m": "bo"},
    }[kind]


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
) -> Path:
    """Run what is missing (unless ``run`` is false), then write ``out/ensembles/report.md``;
    returns its path."""
    from ensembo.bench.ensembles_report import render_report

    chosen_seeds = seed_list(seeds)
    blocks = plan(Path(out), experiments, chosen_seeds, budget, limit, datasets, spaces)
    records = run_and_collect(blocks, execute, workers=workers, label="ensembles",
                              unit="block", progress=progress, run=run)
    report = Path(out) / "ensembles" / "report.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(render_report(records, command=command or "ensembo bench ensembles",
                                    budget=budget, seeds=len(chosen_seeds)))
    return report


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
    report = run_ensembles(experiments=chosen, seeds=args.seeds, budget=args.budget or 50,
                           workers=args.workers, out=args.out, datasets=datasets, spaces=spaces,
                           command=command, progress=not args.no_progress,
                           run=not getattr(args, "report_only", False))
    print(f"report: {report}")
    return 0
