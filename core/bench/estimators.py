"""``ensembo bench estimators``: EnsemboClassifier / EnsemboRegressor against tuned forests.

Per dataset and seed, a quarter of the rows is held out (stratified for
classification). On the rest:

* ``ensembo`` — ``EnsemboClassifier(space="cash-classification", n_trials=N)`` (or
  ``EnsemboRegressor(space="cash-regression")``) with its defaults (5-fold CV, posthoc
  ensemble); both the selected single model (``ensembo-best``) and the ensemble
  (``ensembo-ensemble``) are scored;
* ``rf-tuned`` / ``gb-tuned`` — scikit-learn's RandomizedSearchCV over a
  RandomForestClassifier / GradientBoostingRegressor with the same number of
  configurations and the same 5-fold CV, refitted on all training rows.

Classification reports test accuracy, regression test R². Categorical columns (KEEL)
are given to ensembo as such; the forests see their integer codes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ensembo.bench.seeds import seed_list
from ensembo.bench.standalone_runs import (
    SuiteRun,
    check_libraries,
    chosen_datasets,
    other_size_note,
    refuse_optimizers,
    report_suite,
    run_and_collect,
    write_record,
)

DATASETS = ("breast-cancer", "keel:crx", "keel:german", "diabetes")
ENTRIES = ("ensembo-best", "ensembo-ensemble", "tuned-forest")
TEST_FRACTION = 0.25
FOLDS = 5


@attrs.frozen(kw_only=True)
class EstimatorRun:
    dataset: str
    seed: int
    n_trials: int
    path: str


def _forest_search(task: str, n_trials: int, seed: int):
    from scipy.stats import loguniform, randint, uniform
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
    from sklearn.model_selection import RandomizedSearchCV

    if task == "classification":
        model = RandomForestClassifier(random_state=seed)
        space = {
            "n_estimators": randint(50, 500),
            "max_features": uniform(0.05, 0.95),
            "min_samples_leaf": randint(1, 20),
            "criterion": ["gini", "entropy"],
            "bootstrap": [True, False],
        }
    else:
        model = GradientBoostingRegressor(random_state=seed)
        space = {
            "n_estimators": randint(50, 500),
            "learning_rate": loguniform(1e-3, 1.0),
            "max_depth": randint(1, 10),
            "subsample": uniform(0.5, 0.5),
            "min_samples_leaf": randint(1, 20),
            "max_features": uniform(0.1, 0.9),
        }
    return RandomizedSearchCV(model, space, n_iter=n_trials, cv=FOLDS, random_state=seed)


def execute(run: EstimatorRun) -> dict[str, Any]:
    from ensembo.datasets import load_dataset
    from ensembo.ml.data_run import split_test
    from ensembo.sklearn import EnsemboClassifier, EnsemboRegressor

    record: dict[str, Any] = {
        **attrs.asdict(run),
        "status": "complete",
        "error": None,
        "scores": {},
        "seconds": {},
    }
    try:
        data = load_dataset(run.dataset)
        X_train, X_test, y_train, y_test = split_test(data, TEST_FRACTION, run.seed)
        record["task"] = data.task
        if data.task == "classification":
            ensembo = EnsemboClassifier(
                "cash-classification",
                n_trials=run.n_trials,
                seed=run.seed,
                categorical_features=list(data.categorical_features),
            )
        else:
            ensembo = EnsemboRegressor(
                "cash-regression",
                n_trials=run.n_trials,
                seed=run.seed,
                categorical_features=list(data.categorical_features),
            )
        begin = time.perf_counter()
        ensembo.fit(X_train, y_train)
        record["seconds"]["ensembo"] = time.perf_counter() - begin
        record["scores"]["ensembo-ensemble"] = float(ensembo.score(X_test, y_test))
        single = ensembo.best_estimator_.predict(X_test)
        record["scores"]["ensembo-best"] = _score(data.task, y_test, single)
        record["ensembo_failed_trials"] = int(ensembo.n_failed_)
        record["ensembo_best_params"] = ensembo.best_params_
        record["ensembo_ensemble_size"] = len(ensembo.ensemble_.members)
        begin = time.perf_counter()
        forest = _forest_search(data.task, run.n_trials, run.seed).fit(X_train, y_train)
        record["seconds"]["tuned-forest"] = time.perf_counter() - begin
        record["scores"]["tuned-forest"] = float(forest.score(X_test, y_test))
        record["forest_best_params"] = {k: str(v) for k, v in forest.best_params_.items()}
    except Exception as error:  # reported in the table, the other runs go on
        record.update(status="failed", error=f"{type(error).__name__}: {error}"[-2000:])
    write_record(run.path, record)
    return record


def _score(task: str, y_true: np.ndarray, predicted: np.ndarray) -> float:
    from sklearn.metrics import accuracy_score, r2_score

    return float(
        accuracy_score(y_true, predicted)
        if task == "classification"
        else r2_score(y_true, predicted)
    )


def render(
    records: Sequence[dict[str, Any]],
    *,
    command: str,
    n_trials: int,
    seeds: int,
    notes: Sequence[str] = (),
) -> str:
    lines = [
        "## `estimators` suite: EnsemboClassifier / EnsemboRegressor vs a tuned forest",
        "",
        f"Command: `{command}`",
        "",
        (
            f"{n_trials} configurations each, 5-fold CV, {seeds} seeds (each redraws the 25% "
            "test split). Test accuracy (classification) or R² (regression): mean ± std over "
            "seeds [min–max]; fit time is the median over seeds."
        ),
        "",
        *(line for note in notes for line in (note, "")),
        "| dataset | metric | " + " | ".join(ENTRIES) + " | ensembo fit (s) | forest fit (s) |",
        "|" + "---|" * (len(ENTRIES) + 4),
    ]
    failures = []
    for dataset in dict.fromkeys(r["dataset"] for r in records):
        done = [r for r in records if r["dataset"] == dataset and r.get("status") == "complete"]
        failures += [
            f"- {dataset} seed {r['seed']}: {r.get('error')}"
            for r in records
            if r["dataset"] == dataset and r.get("status") != "complete"
        ]
        if not done:
            continue
        cells = []
        for entry in ENTRIES:
            values = np.array([r["scores"][entry] for r in done])
            cells.append(
                f"{values.mean():.4f} ± {values.std():.4f} [{values.min():.4f}–{values.max():.4f}]"
            )
        metric = "accuracy" if done[0]["task"] == "classification" else "R²"
        times = [np.median([r["seconds"][k] for r in done]) for k in ("ensembo", "tuned-forest")]
        lines.append(
            f"| {dataset} ({len(done)} seeds) | {metric} | "
            + " | ".join(cells)
            + f" | {times[0]:.0f} | {times[1]:.0f} |"
        )
    if failures:
        lines += ["", "Runs not complete:", "", *failures]
    return "\n".join(lines) + "\n"


def run_estimators(
    *,
    datasets: Sequence[str] = DATASETS,
    seeds: int | Iterable[int] = 3,
    n_trials: int = 30,
    workers: int = 1,
    out: Path = Path("bench-results"),
    command: str = "",
    progress: bool = True,
    run: bool = True,
    check: Callable[[Sequence[str]], None] | None = None,
) -> SuiteRun:
    """Run what is missing (unless ``run`` is false; ``check`` first sees the datasets it
    needs, :func:`run_and_collect`), then write ``out/estimators/report.md``; returns its
    path and the runs lost with their worker."""
    chosen_seeds = seed_list(seeds)
    runs = [
        EstimatorRun(
            dataset=d,
            seed=s,
            n_trials=n_trials,
            path=str(Path(out) / "estimators" / d.replace(":", "_") / f"seed-{s}.json"),
        )
        for d in datasets
        for s in chosen_seeds
    ]
    collected = run_and_collect(runs, execute, workers=workers, label="estimators",
                                progress=progress, run=run, check=check)
    note = other_size_note(collected, "estimators")
    return report_suite(
        Path(out) / "estimators" / "report.md", collected,
        lambda: render(
            collected.records, command=command or "ensembo bench estimators",
            n_trials=n_trials, seeds=len(chosen_seeds), notes=[note] if note else [],
        ),
    )


def _load(name: str) -> Any:
    from ensembo.datasets import load_dataset

    return load_dataset(name)


def main(args: Any, command: str) -> int:
    """``ensembo bench estimators [--problems A,B] [--seeds N] [--budget N_TRIALS] [--workers N]
    [--out DIR] [--report-only]``: the datasets of :data:`DATASETS` or any other the
    dataset loader knows without a target column (``iris``, ``keel:NAME``); the entries
    are fixed, so ``--optimizers`` is refused."""
    refuse_optimizers(args, "estimators")
    datasets = chosen_datasets(args, DATASETS, load=_load)
    suite = run_estimators(
        check=lambda pending: check_libraries(args, pending, _load),
        datasets=datasets,
        seeds=args.seeds,
        n_trials=args.budget or 30,
        workers=args.workers,
        out=args.out,
        command=command,
        progress=not args.no_progress,
        run=not getattr(args, "report_only", False),
    )
    return suite.finish()
