"""Plan and execute benchmark runs: one independent process per (problem, optimizer, seed).

Each run writes one JSON file; a file whose status is final (complete) is not run
again, so an interrupted benchmark resumes where it stopped. A run skipped for a missing
library is not final: once the library is installed the same command runs it (a rerun
without it only re-checks the import). A run is claimed before it starts
(:mod:`ensembo.bench.run_claims`), so invocations sharing an output directory never
run it twice. Workers are
spawned (fresh interpreters) with ``PYTHONHASHSEED=0`` (SMAC's results depend on it)
and one thread each, so every optimizer's overhead is measured under the same rules.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import platform
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import attrs

from ensembo import environment
from ensembo.bench import metrics
from ensembo.bench.optimizers import make_optimizer
from ensembo.bench.pool_stopping import pool_stuck, stop_on_interrupt  # noqa: F401 (its API)
from ensembo.bench.provenance import system_description
from ensembo.bench.record_stamps import RecordStamp, stamps
from ensembo.bench.recorder import Recorder, clocks
from ensembo.bench.run_claims import claim
from ensembo.bench.run_ownership import Outcome, elsewhere, stale_marker, written_by
from ensembo.bench.seed_coverage import OTHER_BUDGET
from ensembo.bench.skips import SKIPPED, missing_fields
from ensembo.bench.suite import UnknownSuiteError, get_suite
from ensembo.errors import ExperimentError, MissingDependencyError

RECORD_FORMAT = 1
FINAL_STATES = ("complete",)  # "skipped" is not: its reason (a missing library) may be gone
WORKER_ENVIRONMENT = {
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "LOKY_MAX_CPU_COUNT": "1",
}
VERSIONED = (
    "ensembo",
    "smac",
    "optuna",
    "hyperopt",
    "scikit-optimize",
    "ConfigSpace",
    "numpy",
    "scikit-learn",
    "torch",
)


@attrs.frozen(kw_only=True)
class RunSpec:
    """Everything a worker needs; plain values so it crosses process boundaries."""

    suite: str
    problem: str
    optimizer: str
    seed: int
    budget: int | None  # resolved by plan(); None (older specs): the problem's own budget
    path: str


def run_path(out: Path, suite: str, problem: str, optimizer: str, seed: int) -> Path:
    return out / suite / problem / optimizer.replace(":", "_") / f"seed-{seed}.json"


def out_directory(run: RunSpec) -> Path:
    """The ``out`` that :func:`run_path` placed ``run`` under."""
    return Path(run.path).parents[3]


def read_record(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def is_finished(path: Path, budget: int | None = None) -> bool:
    """A final record exists (and, if ``budget`` is given, was made with that budget:
    a record from a ``--budget 10`` trial run must not stand in for a full run)."""
    record = read_record(path)
    if not _is_final(record):
        return False
    return budget is None or record.get("budget") == budget


def _is_final(record: dict[str, Any] | None) -> bool:
    return record is not None and record.get("status") in FINAL_STATES


def refuse_replacing_other_budgets(runs: Sequence[RunSpec]) -> None:
    """Refuse, before any run starts, runs whose file holds a final record made with
    another budget: the path has no budget, so running them would replace that record
    (perhaps hours of runs) with one of the budget asked for now."""
    stored = ((run, read_record(Path(run.path))) for run in runs)
    clashes = [
        (run, record)
        for run, record in stored
        if _is_final(record) and run.budget is not None
        and record.get("budget") not in (None, run.budget)  # None: made before budgets were kept
    ]
    if not clashes:
        return
    run, record = clashes[0]
    raise ExperimentError(
        "--out",
        f"{out_directory(run)} already holds {len(clashes)} complete record(s) of these "
        f"runs made with another budget, e.g. {run.path} (budget {record.get('budget')}; "
        f"this command: budget {run.budget}); running would replace them, so nothing was "
        f"run: use another --out for budget {run.budget}",
    )


def plan(
    suite: str,
    optimizers: Sequence[str],
    seeds: Sequence[int],
    budget: int | None,
    out: Path,
    problems: Sequence[str] | None = None,
) -> list[RunSpec]:
    """Every run of the benchmark, problems in suite order, then optimizers, then seeds.

    ``problems`` keeps only the named problems (all when ``None``).
    """
    chosen = get_suite(suite)
    available = [p for p in chosen.problems()]
    unknown = set(problems or ()) - {p.name for p in available}
    if unknown:
        raise UnknownSuiteError(
            f"suite {suite!r} has no problem {sorted(unknown)}; "
            f"problems: {', '.join(p.name for p in available)}"
        )
    runs = []
    for problem in (p for p in available if problems is None or p.name in problems):
        for optimizer in optimizers:
            for seed in seeds:
                path = run_path(out, suite, problem.name, optimizer, seed)
                runs.append(
                    RunSpec(
                        suite=suite,
                        problem=problem.name,
                        optimizer=optimizer,
                        seed=seed,
                        budget=budget or problem.budget,
                        path=str(path),
                    )
                )
    return runs


def execute(spec: RunSpec) -> dict[str, Any]:
    """Run one benchmark run in this process and write its record (see :func:`attempt`)."""
    return attempt(spec).record


def attempt(spec: RunSpec, seen: RecordStamp | None = None) -> Outcome:
    """Run one benchmark run in this process and write its record.

    The run is claimed first (:mod:`ensembo.bench.run_claims`), so of two invocations
    sharing the output directory that start it together only one runs it. If another
    process holds the claim, or the file holds a final record (another invocation
    finished the run meanwhile, or one of another budget, which is never replaced), that
    record (or, before the holder wrote its marker, a "running" one) is returned and
    nothing is run or written. A "running" marker is stale once the claim is held (its
    process would hold the claim); only where the claim is no lock does a marker of a
    live process on this host keep the run from being run again. A record (failed,
    skipped) of this budget written since the invocation saw the file as ``seen`` is
    another invocation's result of the same round, left alone too
    (:mod:`ensembo.bench.record_stamps`); one of another budget is no result of this run,
    which is run.
    """
    with claim(Path(spec.path)) as taken:
        existing = read_record(Path(spec.path))
        outcome = elsewhere(spec, existing, taken, seen, _is_final, _of_budget(spec))
        if outcome is not None:
            return outcome
        return Outcome(record=_run_claimed(spec, seen.invocation if seen else None),
                       ran_here=True)


def _of_budget(spec: RunSpec) -> Callable[[dict[str, Any]], bool]:
    """Whether a record was made with ``spec``'s budget (a record or spec without one:
    made before budgets were kept, taken as of it, as :func:`load_records` takes it)."""
    return lambda record: (spec.budget is None
                           or record.get("budget", spec.budget) == spec.budget)


def _run_claimed(spec: RunSpec, invocation: str | None = None) -> dict[str, Any]:
    """Run ``spec``, whose claim this process holds, writing its marker and record
    (which name the ``invocation`` that ran it)."""
    problem = get_suite(spec.suite).problem(spec.problem)
    budget = spec.budget or problem.budget
    marker = {
        **attrs.asdict(spec),
        "status": "running",
        "pid": os.getpid(),
        "host": platform.node(),
    }
    _write_atomically(Path(spec.path), marker)
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        **attrs.asdict(spec),
        "budget": budget,
        "optimum": problem.optimum,
        "versions": environment.package_versions(VERSIONED),
        "blas": environment.blas_libraries(),
        "host": platform.node(),
        "environment": {key: os.environ.get(key) for key in WORKER_ENVIRONMENT},
        "system": system_description(),
        "status": "complete",
        "error": None,
        "invocation": invocation,
    }
    recorder = None
    try:
        optimizer = make_optimizer(spec.optimizer)
        optimizer.prepare()
        recorder = Recorder(problem, budget)
        record["load_average_start"] = _load_average()
        begin, begin_cpu = clocks()
        optimizer.minimize(problem, recorder, budget, spec.seed)
        end, end_cpu = clocks()
        record.update(wall_seconds=end - begin, cpu_seconds=end_cpu - begin_cpu)
        record["load_average_end"] = _load_average()
        if len(recorder.evaluations) != budget:
            raise RuntimeError(
                f"{spec.optimizer} made {len(recorder.evaluations)} of {budget} evaluations"
            )
    except MissingDependencyError as error:
        record.update(status=SKIPPED, error=str(error), **missing_fields(error))
    except Exception as error:  # a crashing optimizer is a result, not a harness crash
        record.update(status="failed", error="".join(traceback.format_exception(error))[-4000:])
    if recorder is not None:
        record.update(
            metrics.summarize(
                recorder.evaluations,
                problem.optimum,
                record.get("wall_seconds"),
                record.get("cpu_seconds"),
            )
        )
    _write_atomically(Path(spec.path), record)
    return record


def _load_average() -> float | None:
    """The 1-minute load average, so a report can tell runs made under different load."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return None


def _write_atomically(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record, indent=1, default=str))
    os.replace(temporary, path)


@contextlib.contextmanager
def worker_environment() -> Iterator[None]:
    """Set the variables spawned workers must start with; restore them afterwards."""
    saved = {key: os.environ.get(key) for key in WORKER_ENVIRONMENT}
    os.environ.update(WORKER_ENVIRONMENT)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


POOL_ATTEMPTS = 3
LOST_RUNS = "not finished (their worker process died; rerun to run them)"
POOL_RETRY_PAUSE = 5.0


def run_counts(unit: str, executed: int, already_finished: int, left_to_others: int,
               lost: int, skipped: int = 0) -> str:
    """``"3 runs executed, 20 already finished, 1 finished or running in another
    invocation sharing --out"``: the summary every suite prints, in one wording.
    ``skipped`` of the ``executed`` runs found a library missing: they are said apart
    ("2 runs executed, 6 skipped for a missing library"), as they ran nothing."""
    text = f"{executed - skipped} {unit}s executed"
    if skipped:
        text += f", {skipped} skipped for a missing library"
    text += f", {already_finished} already finished"
    if left_to_others:
        text += f", {left_to_others} finished or running in another invocation sharing --out"
    if lost:
        text += f", {lost} {LOST_RUNS}"
    return text


def run_all(
    runs: Sequence[RunSpec],
    workers: int = 1,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    on_lost: Callable[[RunSpec], None] | None = None,
    seen: dict[str, RecordStamp] | None = None,
) -> list[dict[str, Any]]:
    """Execute the runs not finished yet, each in a fresh spawned process; return the
    records of the runs this call executed (not those another invocation sharing the
    output directory finished or is running: ``on_done`` sees those too).

    If a worker process dies (killed, or it could not even import the code, e.g. while
    the tree is being edited), the pool breaks: the run that was inside the dead worker
    is recorded as failed, runs that never started are left untouched, and the rest is
    retried with a new pool (up to ``POOL_ATTEMPTS`` pools). Each run is attempted at
    most once per call. Runs that never started at the end, their worker having died
    in every pool tried, are lost: ``on_lost`` is told each (neither executed nor
    another invocation's; the next invocation runs them). Runs that would replace a
    final record made with another budget are refused before any run starts.
    ``seen``: the record files as the caller found them before it chose ``runs``
    (:func:`ensembo.bench.record_stamps.pending_runs`); stamped here when not given.
    """
    if seen is None:
        seen = stamps(runs, uuid.uuid4().hex)
    refuse_replacing_other_budgets(runs)
    records: list[dict[str, Any]] = []
    attempted: set[str] = set()
    tried: set[str] = set()
    for attempt in range(POOL_ATTEMPTS):
        pending = [
            run
            for run in runs
            if run.path not in attempted and not is_finished(Path(run.path), run.budget)
        ]
        if not pending:
            break
        if attempt:
            time.sleep(POOL_RETRY_PAUSE)
        tried.update(run.path for run in pending)
        if not _one_pool(pending, workers, records, attempted, on_done, seen):
            break
    for run in runs:
        if (on_lost is not None and run.path in tried and run.path not in attempted
                and not is_finished(Path(run.path), run.budget)):
            on_lost(run)
    return records


def _one_pool(pending, workers, records, attempted, on_done, seen=None) -> bool:
    """Run ``pending`` in one pool; True when the pool broke and a retry makes sense."""
    broken = False
    context = multiprocessing.get_context("spawn")
    with (
        worker_environment(),
        ProcessPoolExecutor(
            max_workers=max(1, workers), mp_context=context, max_tasks_per_child=1
        ) as pool,
    ):
        seen = seen or {}
        futures = {pool.submit(attempt, run, seen.get(run.path)): run for run in pending}
        with stop_on_interrupt(pool):
            for future in as_completed(futures):
                run = futures[future]
                try:
                    outcome = future.result()
                except Exception as error:  # the worker process itself died
                    broken = True
                    outcome = _after_worker_death(run, error, seen.get(run.path))
                    if outcome is None:
                        continue  # never started: a later pool may run it, or it is lost
                attempted.add(run.path)
                if outcome.ran_here:
                    records.append(outcome.record)
                if on_done is not None:
                    on_done(outcome.record)
    return broken


def _after_worker_death(
    run: RunSpec, error: BaseException, seen: RecordStamp | None = None
) -> Outcome | None:
    """What became of a run whose worker died: recorded as failed here if the worker
    died inside it (its marker is stale); another invocation's if that one holds its
    claim or finished it; None if it never started (it stays pending).

    The run is claimed first: another invocation may have taken it up since the worker
    died (its lock went with the worker), and its run must not be marked failed."""
    with claim(Path(run.path)) as taken:
        existing = read_record(Path(run.path))
        outcome = elsewhere(run, existing, taken, seen, _is_final, _of_budget(run))
        if outcome is not None:
            return outcome
        if written_by(existing, seen):  # its worker finished it; the result was lost
            return Outcome(record=existing, ran_here=True)
        if existing is None or existing.get("status") != "running":
            return None
        record = {**attrs.asdict(run), "status": "failed", "error": repr(error)}
        _write_atomically(Path(run.path), record)
        return Outcome(record=record, ran_here=True)


def load_records(runs: Sequence[RunSpec]) -> list[dict[str, Any]]:
    """The stored record of every planned run that has one, as the report should see it.

    A record made with another budget than the one asked for is not a result of this
    benchmark (a ``--budget 5`` trial run must not be ranked as a full run), and a
    ``running`` marker whose process is gone is an interrupted run: both are reported as
    not completed, saying why, rather than mixed in.
    """
    records = []
    for run in runs:
        record = read_record(Path(run.path))
        if record is None:
            continue
        if run.budget is not None and record.get("budget", run.budget) != run.budget:
            record = {
                **record,
                "status": OTHER_BUDGET,
                "error": (
                    f"{run.path} was made with budget {record.get('budget')}, not "
                    f"{run.budget}; pass --budget {record.get('budget')} to report it, or "
                    f"run budget {run.budget} into another --out"
                ),
            }
        elif record.get("status") == "running" and stale_marker(run, record):
            record = {
                **record,
                "status": "interrupted",
                "error": "its process is gone; rerun the command to run it again",
            }
        records.append(record)
    return records
