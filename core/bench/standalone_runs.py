"""Execute the runs of a standalone benchmark (``overfitting``, ``estimators``, ``ensembles``).

Each run is a plain value with a ``path`` for its JSON record; ``execute(run)`` writes
the record. Runs whose record is final (and made with the same budget) are skipped, so an
interrupted benchmark resumes.
Workers are spawned with the harness's one-thread environment. A worker that dies (for
instance on an import error) loses its run, not the benchmark: the run stays pending for
the next invocation.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from ensembo.bench.runner import is_finished, read_record, stop_on_interrupt, worker_environment
from ensembo.bench.suite import UnknownSuiteError

logger = logging.getLogger(__name__)


def chosen_datasets(
    args: Any, default: Sequence[str], allowed: Collection[str] | None = None
) -> list[str]:
    """The datasets named by ``--problems a,b,...``, or ``default`` when none are given.

    With ``allowed``, a name outside it stops the command before anything runs, naming
    it; without, any name the dataset loader knows may be given."""
    chosen = getattr(args, "problems", None)
    if not chosen:
        return list(default)
    names = [d.strip() for d in chosen.split(",") if d.strip()]
    unknown = [n for n in names if allowed is not None and n not in allowed]
    if unknown:
        raise UnknownSuiteError(
            f"--problems: unknown dataset(s) {unknown}; this benchmark has: {', '.join(allowed)}"
        )
    return names


def run_and_collect(
    runs: Sequence[Any],
    execute: Callable[[Any], dict[str, Any]],
    *,
    workers: int,
    label: str,
    unit: str = "run",
    progress: bool = True,
    run: bool = True,
) -> list[dict[str, Any]]:
    """Run the runs without a final record (none when ``run`` is false, as for
    ``--report-only``), then return every final record, in the order of ``runs``."""
    if run:
        from tqdm import tqdm

        pending = [r for r in runs if not finished(r)]
        with tqdm(total=len(pending), desc=f"bench {label}", unit=unit,
                  disable=not progress) as bar:
            run_pending(pending, execute, workers, on_done=lambda record: bar.update())
    records = ((each, read_record(Path(each.path))) for each in runs)
    return [r for each, r in records if r is not None and _same_size(r, each)]


SIZE_FIELDS = ("budget", "n_trials")
"""Run fields that give a run's size; a record made with another size is not reused."""


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
    if not is_finished(Path(run.path)):
        return False
    record = read_record(Path(run.path))
    return record is not None and _same_size(record, run)


def write_record(path: str | Path, record: dict[str, Any]) -> None:
    """Write ``record`` as JSON atomically (a killed run never leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record, indent=1, default=str))
    os.replace(temporary, path)


def run_pending(
    runs: Sequence[Any],
    execute: Callable[[Any], dict[str, Any]],
    workers: int,
    on_done: Callable[[dict[str, Any] | None], None] | None = None,
) -> None:
    """Run every run without a final record, ``workers`` spawned processes at a time."""
    pending = [r for r in runs if not finished(r)]
    if not pending:
        return
    with (
        worker_environment(),
        ProcessPoolExecutor(
            max_workers=max(1, workers), mp_context=get_context("spawn"), max_tasks_per_child=1
        ) as pool,
    ):
        futures = {pool.submit(execute, r): r for r in pending}
        with stop_on_interrupt(pool):
            for future in as_completed(futures):
                try:
                    record = future.result()
                except Exception as error:  # the worker process died; the run stays pending
                    logger.warning("run %s lost its worker: %r", futures[future].path, error)
                    record = None
                if on_done is not None:
                    on_done(record)
