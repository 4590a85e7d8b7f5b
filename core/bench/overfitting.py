"""``ensembo bench overfitting``: Lévesque's controls against overfitting the validation set.

On KEEL datasets, the ``svm`` space is tuned with the GP for ``budget`` trials, then the
selected configuration is retrained on training + validation rows and scored on a test
third never seen before. Two searches per (dataset, seed):

* ``gp``   — one fixed stratified holdout split for every trial;
* ``gp-r`` — the holdout split is redrawn at every trial (reshuffling, thesis ch. 3);

and two final selections of each search: ``argmin`` of the validation losses and the
GP ``posterior-mean`` (``-pm``). That gives the four methods of the thesis' Table 3.4,
``gp``, ``gp-pm``, ``gp-r``, ``gp-pm-r``, from two searches. Each seed redraws the test
split too (the thesis' repetitions). Methods are ranked per dataset on the mean test
error over seeds; pairs are compared with the Wilcoxon signed-rank test over datasets.

Runs are independent spawned processes (one thread each) writing one JSON record;
finished records are not run again, so an interrupted benchmark resumes.
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
from ensembo.stats import average_ranks, wilcoxon_signed_rank, win_frequency

DATASETS = (
    "australian",
    "bands",
    "breast",
    "bupa",
    "contraceptive",
    "crx",
    "german",
    "hayes-roth",
    "heart",
    "housevotes",
    "ionosphere",
    "iris",
    "led7digit",
    "mammographic",
    "monk-2",
    "pima",
    "saheart",
    "sonar",
    "tae",
    "tic-tac-toe",
    "vehicle",
    "wdbc",
    "wine",
    "wisconsin",
)
SEARCHES = {"gp": False, "gp-r": True}  # name -> reshuffle
SELECTIONS = {"argmin": "", "posterior-mean": "-pm"}
METHODS = ("gp", "gp-pm", "gp-r", "gp-pm-r")
TEST_FRACTION = 1 / 3
VALIDATION_FRACTION = 1 / 3


def method_name(search: str, selection: str) -> str:
    return search.replace("gp", "gp" + SELECTIONS[selection], 1)


@attrs.frozen(kw_only=True)
class OverfittingRun:
    dataset: str
    search: str
    seed: int
    budget: int
    space: str
    surrogate: str
    path: str


def execute(run: OverfittingRun) -> dict[str, Any]:
    """One search on one dataset, both final selections, test errors; writes the record."""
    from ensembo import spaces
    from ensembo.datasets import load_dataset
    from ensembo.ml import Holdout, MemoryArtifactStore, Task, run_task, select_trial
    from ensembo.ml.data_run import split_test
    from ensembo.study import Study

    begin = time.perf_counter()
    record: dict[str, Any] = {**attrs.asdict(run), "status": "complete", "error": None}
    try:
        data = load_dataset(f"keel:{run.dataset}")
        X_train, X_test, y_train, y_test = split_test(data, TEST_FRACTION, run.seed)
        space = spaces.load(run.space)
        task = Task(
            X_train,
            y_train,
            task="classification",
            space=space,
            validation=Holdout(ratio=VALIDATION_FRACTION, reshuffle=SEARCHES[run.search]),
            categorical_features=data.categorical_features,
            seed=run.seed,
            X_test=X_test,
            y_test=y_test,
        )
        study = Study(
            space,
            surrogate=run.surrogate,
            seed=run.seed,
            loss="zero-one",
            task="classification",
            validation_targets=task.validation_targets(),
            budget=run.budget,
        )
        run_task(study, task, run.budget, store=MemoryArtifactStore())
        trials = list(study.history)
        record["losses"] = [t.loss for t in trials]
        record["trial_test_losses"] = [t.info.get("test_loss") for t in trials]
        record["configs"] = [dict(t.config) for t in trials]
        record["failed"] = sum(t.loss is None for t in trials)
        record["selections"] = {}
        for selection in SELECTIONS:
            chosen = select_trial(
                study.history, space, selection, surrogate=run.surrogate, seed=run.seed
            )
            final = task.fit(dict(chosen.config))  # retrained on training + validation rows
            record["selections"][selection] = {
                "trial": chosen.number,
                "validation_loss": chosen.loss,
                "test_loss": task.loss_of(final, X_test, y_test),
            }
    except Exception as error:  # a crashed run is a result, reported, not a harness crash
        record.update(status="failed", error=f"{type(error).__name__}: {error}"[-2000:])
    record["wall_seconds"] = time.perf_counter() - begin
    write_record(run.path, record)
    return record


def plan(
    out: Path,
    datasets: Sequence[str],
    seeds: Sequence[int],
    budget: int,
    space: str,
    surrogate: str,
) -> list[OverfittingRun]:
    return [
        OverfittingRun(
            dataset=d,
            search=s,
            seed=seed,
            budget=budget,
            space=space,
            surrogate=surrogate,
            path=str(out / "overfitting" / d / s / f"seed-{seed}.json"),
        )
        for d in datasets
        for s in SEARCHES
        for seed in seeds
    ]


@attrs.frozen(kw_only=True)
class OverfittingTables:
    datasets: tuple[str, ...]
    test_error: dict[str, dict[str, float]]  # method -> dataset -> mean test error over seeds
    average_rank: dict[str, float]
    win_rate: dict[str, float]  # mean pairwise win frequency against the other methods
    wilcoxon: dict[tuple[str, str], tuple[int, int, float]]  # (a, b) -> wins a, wins b, p
    incomplete: tuple[str, ...]


def tables(records: Sequence[dict[str, Any]], seeds: Sequence[int]) -> OverfittingTables:
    """Per method and dataset, the mean test error over seeds; ranks and tests over the
    datasets on which every method has every seed."""
    errors: dict[tuple[str, str], list[float]] = {}
    incomplete = []
    for record in records:
        if record.get("status") != "complete":
            incomplete.append(
                f"{record['dataset']} / {record['search']} / seed {record['seed']}: "
                f"{record.get('status')} — {record.get('error')}"
            )
            continue
        for selection, chosen in record["selections"].items():
            key = (method_name(record["search"], selection), record["dataset"])
            errors.setdefault(key, []).append(chosen["test_loss"])
    datasets = tuple(
        sorted(
            {
                d
                for _, d in errors
                if all(len(errors.get((m, d), [])) == len(seeds) for m in METHODS)
            }
        )
    )
    test_error = {m: {d: float(np.mean(errors[(m, d)])) for d in datasets} for m in METHODS}
    matrix = np.array([[test_error[m][d] for m in METHODS] for d in datasets])
    ranks = average_ranks(matrix) if len(datasets) else np.full(len(METHODS), np.nan)
    wins = win_frequency(matrix) if len(datasets) else np.full((len(METHODS),) * 2, np.nan)
    wilcoxon = {}
    for i, a in enumerate(METHODS):
        for j, b in enumerate(METHODS):
            if i < j and len(datasets):
                result = wilcoxon_signed_rank(matrix[:, i], matrix[:, j])
                wilcoxon[(a, b)] = (
                    int(np.sum(matrix[:, i] < matrix[:, j])),
                    int(np.sum(matrix[:, j] < matrix[:, i])),
                    result.p_value,
                )
    win_rate = {m: float((wins[i].sum() - 0.5) / (len(METHODS) - 1)) for i, m in enumerate(METHODS)}
    return OverfittingTables(
        datasets=datasets,
        test_error=test_error,
        average_rank=dict(zip(METHODS, map(float, ranks), strict=True)),
        win_rate=win_rate,
        wilcoxon=wilcoxon,
        incomplete=tuple(incomplete),
    )


def render(
    t: OverfittingTables,
    *,
    command: str,
    budget: int,
    seeds: int,
    space: str,
    notes: Sequence[str] = (),
) -> str:
    lines = [
        "## `overfitting` suite: reshuffling and posterior-mean selection (Lévesque ch. 3)",
        "",
        f"Command: `{command}`",
        "",
        (
            f"`{space}` space, GP, budget {budget}, {seeds} seeds (each seed redraws the test "
            f"third and the validation holdout), {len(t.datasets)} KEEL datasets with every run "
            "complete. Test error of the selected configuration retrained on training + "
            "validation rows."
        ),
        "",
        *(line for note in notes for line in (note, "")),
        "### Average rank on test error (lower is better) and win rate",
        "",
        "| method | average rank | win rate | median test error |",
        "|---|---|---|---|",
    ]
    for m in sorted(METHODS, key=lambda m: t.average_rank[m]):
        median = np.median(list(t.test_error[m].values())) if t.datasets else float("nan")
        lines.append(
            f"| {m} | {t.average_rank[m]:.2f} | {100 * t.win_rate[m]:.1f}% | {median:.4f} |"
        )
    lines += [
        "",
        "### Pairwise: datasets won by each side, Wilcoxon signed-rank p (two-sided)",
        "",
        "| A | B | A better | B better | p |",
        "|---|---|---|---|---|",
    ]
    for (a, b), (wins_a, wins_b, p) in t.wilcoxon.items():
        lines.append(f"| {a} | {b} | {wins_a} | {wins_b} | {p:.3g} |")
    lines += [
        "",
        "### Mean test error per dataset",
        "",
        "| dataset | " + " | ".join(METHODS) + " |",
        "|" + "---|" * (len(METHODS) + 1),
    ]
    for d in t.datasets:
        lines.append(f"| {d} | " + " | ".join(f"{t.test_error[m][d]:.4f}" for m in METHODS) + " |")
    if t.incomplete:
        lines += ["", "### Runs not complete", "", *(f"- {line}" for line in t.incomplete)]
    return "\n".join(lines) + "\n"


def run_overfitting(
    *,
    datasets: Sequence[str] = DATASETS,
    seeds: int | Iterable[int] = 3,
    budget: int = 50,
    workers: int = 1,
    out: Path = Path("bench-results"),
    space: str = "svm",
    surrogate: str = "gp",
    command: str = "",
    progress: bool = True,
    run: bool = True,
    check: Callable[[Sequence[str]], None] | None = None,
) -> SuiteRun:
    """Run what is missing (unless ``run`` is false; ``check`` first sees the datasets it
    needs, :func:`run_and_collect`), then write ``out/overfitting/report.md``; returns its
    path and the runs lost with their worker."""
    chosen_seeds = seed_list(seeds)
    runs = plan(Path(out), datasets, chosen_seeds, budget, space, surrogate)
    collected = run_and_collect(runs, execute, workers=workers, label="overfitting",
                                progress=progress, run=run, check=check)
    note = other_size_note(collected, "overfitting")
    return report_suite(
        Path(out) / "overfitting" / "report.md", collected,
        lambda: render(
            tables(collected.records, chosen_seeds),
            command=command or "ensembo bench overfitting",
            budget=budget,
            seeds=len(chosen_seeds),
            space=space,
            notes=[note] if note else [],
        ),
    )


def _load_keel(name: str) -> Any:
    from ensembo.datasets import load_dataset

    return load_dataset(f"keel:{name}")


def main(args: Any, command: str) -> int:
    """``ensembo bench overfitting [--problems A,B] [--seeds N] [--budget N] [--workers N]
    [--out DIR] [--report-only]``: the KEEL sets of :data:`DATASETS` or any other KEEL
    set by name; its four methods are fixed, so ``--optimizers`` is refused."""
    refuse_optimizers(args, "overfitting")
    datasets = chosen_datasets(args, DATASETS, load=_load_keel)
    suite = run_overfitting(
        check=lambda pending: check_libraries(args, pending, _load_keel),
        datasets=datasets,
        seeds=args.seeds,
        budget=args.budget or 50,
        workers=args.workers,
        out=args.out,
        command=command,
        progress=not args.no_progress,
        run=not getattr(args, "report_only", False),
    )
    return suite.finish()
