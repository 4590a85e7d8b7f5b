"""Dask inside a process forked from a Dask worker's task: computed there, locally.

A forked process has only the thread that forked, not the worker's event-loop thread.
Dask still found the worker (a context variable of the task's thread) and sent a
computation the objective made (``da.ones(100, chunks=10).sum().compute()``, dask-ml,
``xgboost.dask``, ``dask.dataframe``) through the worker's client, whose loop no longer
runs: it waited until the trial timed out, or for ever. In the child the objective runs
without the worker: ``get_worker()`` and ``worker_client()`` raise ``ValueError: No worker
found``, ``get_client()`` finds no client, and dask collections
compute with the threaded scheduler in the child (a local scheduler chosen in dask's
configuration is kept). Thread pools dask's threaded scheduler started before the fork,
whose threads the child does not have, are forgotten.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any

import attrs

_CLUSTER_SCHEDULERS = ("distributed", "dask.distributed")


@attrs.frozen
class WithoutWorker:
    """``objective`` as called in a child forked from a Dask worker: with no worker, no
    inherited thread pool, and a local dask scheduler."""

    objective: Callable[[dict[str, Any]], Any]

    def __call__(self, config: dict[str, Any]) -> Any:
        import dask
        from distributed.worker import thread_state

        thread_state.__dict__.clear()  # the task's key, start time and executor: the worker's
        _forget_inherited_thread_pools()
        with dask.config.set(scheduler=_local_scheduler(dask.config.get("scheduler", None))):
            # an empty context: the worker's context variable is what get_worker() reads
            return contextvars.Context().run(self.objective, config)


def _local_scheduler(chosen: Any) -> Any:
    """The scheduler configured, unless it is none (dask then asks the worker's client)
    or the cluster's: then the threaded one."""
    if chosen is None or (isinstance(chosen, str) and chosen.lower() in _CLUSTER_SCHEDULERS):
        return "threads"
    if any(cls.__name__ == "Client" for cls in type(chosen).__mro__):
        return "threads"
    return chosen


def _forget_inherited_thread_pools() -> None:
    """A pool of dask's threaded scheduler made before the fork has no threads here:
    work submitted to it would wait for ever. Dask makes new ones when asked."""
    import dask.threaded

    dask.threaded.pools_lock = threading.Lock()  # possibly held by a thread left behind
    dask.threaded.pools.clear()
    dask.threaded.default_pool = None
