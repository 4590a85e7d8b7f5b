"""One benchmark invocation: plan the runs, execute the missing ones, write the report."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
from tqdm import tqdm

from ensembo.bench import plots, report, runner
from ensembo.bench.optimizers import make_optimizer
from ensembo.bench.optimizers.ensembo_optimizer import EnsemboOptimizer
from ensembo.bench.record_stamps import pending_runs
from ensembo.bench.report_file import write_report
from ensembo.bench.report_only import keeps_report
from ensembo.bench.seeds import seed_list
from ensembo.bench.skips import library_count, missing_libraries, skipped_records
from ensembo.bench.suite import get_suite
from ensembo.progress import is_terminal


@attrs.frozen(kw_only=True)
class BenchmarkResult:
    """What one invocation did. ``executed`` counts the runs this invocation ran itself;
    ``skipped_as_finished`` the planned runs it did not run: finished before it started,
    or ``left_to_others`` (runs that another invocation sharing ``--out`` had finished
    meanwhile or was running); ``lost`` the runs it meant to run whose worker process
    died before they started. With ``--report-only`` the rest was not run."""

    report_path: Path
    executed: int
    skipped_as_finished: int
    tables: report.Tables
    planned: int = 0
    failed: int = 0  # runs executed now that failed (their errors are in the report)
    other_budgets: dict[int, int] = attrs.field(factory=dict)  # budget -> runs not run, by record
    left_to_others: int = 0  # in skipped_as_finished: run by another invocation on --out
    lost: int = 0  # their worker process died before they started: not finished
    skipped: int = 0  # of the executed runs, those skipped for a missing library
    missing_libraries: str = ""  # what they lacked: "smac, optuna (pip install ...)"
    missing_library_count: int = 0  # how many libraries missing_libraries names
    # False when --report-only found records of other budgets only: report.md was kept
    report_written: bool = True

    def counts(self) -> str:
        """``"1 runs executed, 2 already finished, 1 run by another invocation ..."``."""
        before = self.skipped_as_finished - self.left_to_others
        return runner.run_counts("run", self.executed, before, self.left_to_others, self.lost,
                                 skipped=self.skipped)


def check_optimizers(optimizers: Sequence[str]) -> None:
    """Unknown names and unregistered ensembo plugins fail before anything runs."""
    for spec in optimizers:
        optimizer = make_optimizer(spec)
        if isinstance(optimizer, EnsemboOptimizer):
            optimizer.check_registered()


def run_benchmark(
    suite: str,
    *,
    optimizers: Sequence[str] | None = None,
    seeds: int | Iterable[int] = 3,
    budget: int | None = None,
    problems: Sequence[str] | None = None,
    workers: int = 1,
    out: Path = Path("bench-results"),
    command: str = "",
    progress: bool = True,
    execute: bool = True,
) -> BenchmarkResult:
    """Run the missing runs (unless ``execute`` is false), then report on every record.

    The result's ``report_written`` is false when, not executing, no planned run has a
    record of ``budget`` but some have one of another: ``report.md`` is then left as it
    was (or, where there was none, none is written) rather than replaced by an empty
    one; the command line says so and exits 2."""
    chosen = get_suite(suite)
    if optimizers is not None and not len(optimizers):  # None means the suite's defaults
        raise ValueError("optimizers: the list names nothing; give None for the suite's own")
    optimizers = list(optimizers or chosen.default_optimizers)
    check_optimizers(optimizers)
    planned_seeds = seed_list(seeds)
    runs = runner.plan(suite, optimizers, planned_seeds, budget, Path(out), problems)
    decided = pending_runs(runs, lambda run: runner.is_finished(Path(run.path), run.budget))
    missing = decided.runs
    pending = missing if execute else []
    drawn = progress and is_terminal(sys.stderr)  # no \r-drawn bars in a log file
    lost: list[runner.RunSpec] = []
    with tqdm(total=len(pending), desc=f"bench {suite}", unit="run", disable=not drawn) as bar:
        done = runner.run_all(pending, workers, on_done=lambda record: bar.update(),
                              on_lost=lost.append, seen=decided.seen)
    records = runner.load_records(runs)
    problems = list(dict.fromkeys(run.problem for run in runs))
    computed = report.tables(records, optimizers, problems, seeds=planned_seeds)
    suite_dir = Path(out) / suite
    # of the runs not run (--report-only): a run this invocation left to another, or
    # lost, is counted so already, whatever budget its record has
    other_budgets = _other_budgets(runner.load_records(missing if not execute else []))
    counted = dict(executed=len(done), planned=len(runs), tables=computed,
                   other_budgets=other_budgets)
    if keeps_report(report_only=not execute, of_this_budget=_any_of_this_budget(records),
                    of_other_budgets=bool(other_budgets)):
        # --report-only without the runs' --budget: an empty report would replace theirs
        return BenchmarkResult(report_path=suite_dir / "report.md", report_written=False,
                               skipped_as_finished=len(runs) - len(missing), **counted)
    figures = plots.convergence_plots(records, optimizers, problems, suite_dir / "plots")
    text = report.render(
        computed,
        title=f"`{suite}` suite: {chosen.description}",
        command=command or f"ensembo bench {suite}",
        plots=figures,
    )
    report_path = write_report(suite_dir / "report.md", text)
    left_to_others = len(pending) - len(done) - len(lost)
    skipped = skipped_records(done)
    return BenchmarkResult(
        report_path=report_path,
        skipped_as_finished=len(runs) - len(missing) + left_to_others,
        left_to_others=left_to_others,
        failed=sum(record.get("status") == "failed" for record in done),
        lost=len(lost),
        skipped=len(skipped),
        missing_libraries=missing_libraries(skipped),
        missing_library_count=library_count(skipped),
        **counted,
    )


def _any_of_this_budget(records: Sequence[dict]) -> bool:
    return any(record.get("status") != runner.OTHER_BUDGET for record in records)


def _other_budgets(records: Sequence[dict]) -> dict[int, int]:
    """How many records were made with each budget other than the one asked for."""
    counts: dict[int, int] = {}
    for record in records:
        if record.get("status") == runner.OTHER_BUDGET:
            counts[record.get("budget")] = counts.get(record.get("budget"), 0) + 1
    return counts
