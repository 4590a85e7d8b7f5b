"""From ``Study.optimize(n_jobs=..., executor=...)`` to a :class:`Backend`."""

from __future__ import annotations

import concurrent.futures
from typing import Any

from ensembo.errors import ExecutionError
from ensembo.execution.backend import Backend, InlineBackend, usable_cpus
from ensembo.execution.dask_cluster import DaskBackend, is_dask_client
from ensembo.execution.futures import ExecutorBackend, ProcessBackend


def resolve_jobs(n_jobs: int | None) -> int | None:
    """``-1`` means one per CPU this process may use; ``None`` means "not said"."""
    if n_jobs is None:
        return None
    if n_jobs == -1:
        return usable_cpus()
    if not isinstance(n_jobs, int) or isinstance(n_jobs, bool) or n_jobs < 1:
        raise ExecutionError(
            f"n_jobs must be a positive integer or -1 (one per CPU), got {n_jobs!r}"
        )
    return n_jobs


def resolve_backend(n_jobs: int | None = None, executor: Any = None) -> tuple[Backend, bool]:
    """The backend to run on, and whether the caller must close it (it was made here).

    * nothing, or ``n_jobs=1``: serial, in this process;
    * ``n_jobs=k``: ``k`` local processes (one forked process per evaluation);
    * ``executor=`` a ``dask.distributed.Client`` or a ``concurrent.futures.Executor``:
      evaluations go there, at most ``n_jobs`` at once if given, else one per worker;
    * ``executor=`` a :class:`Backend`: used as is.
    """
    jobs = resolve_jobs(n_jobs)
    if executor is None:
        if jobs is None or jobs == 1:
            return InlineBackend(), True
        return ProcessBackend(jobs), True
    if is_dask_client(executor):
        return DaskBackend(executor, max_slots=jobs), True
    if isinstance(executor, concurrent.futures.Executor):
        return ExecutorBackend(executor, slots=jobs), True
    if isinstance(executor, Backend):
        return executor, False
    raise ExecutionError(
        f"executor must be a dask.distributed.Client, a concurrent.futures.Executor or an "
        f"ensembo.execution.Backend; got {type(executor).__name__}"
    )
