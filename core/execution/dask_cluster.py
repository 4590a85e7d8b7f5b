"""Dask distributed: evaluate trials on a cluster the user already runs, or on a
``LocalCluster`` started for the run.

Dask schedules, ships the objective (cloudpickle) and watches its workers; ensembo only
keeps ``slots`` tasks in flight (one per worker thread) so each new suggestion sees the
latest results. A task whose worker died comes back as ``KilledWorker`` and becomes a
``LOST`` outcome: the trial is marked interrupted and re-queued by the study, up to
``max_retries``. On a cluster started here the scheduler's ``allowed-failures`` is 0 so
that this happens at the first lost worker and every retry is recorded in the study; a
cluster the user brings keeps its own policy and ensembo sees only the final failure.

On the cluster ensembo starts itself (``ensembo run`` with ``backend: dask`` and no
``address``) every evaluation runs in a process forked for it inside the worker
(``isolate=True``): an objective that crashes (``os._exit``, a segfault) fails its trial
as ``CRASHED``, retried up to ``max_retries``, and the worker lives on. Killing the
worker instead, a crash while the nanny was still restarting it after an earlier one left
the cluster without workers, which stopped the run. ``isolate: false`` in the experiment's
``execution:`` runs the objective in the worker's own process instead, unless limits are
set. A client the user brings runs the objective in the worker's own process unless
limits are set or ``DaskBackend(client, isolate=True)`` asks for the fork. In the fork
the objective's own dask computations run locally, on the threaded scheduler, and it has
no worker: ``worker_client()`` raises (:mod:`ensembo.execution.dask_in_child`).

``distributed`` is optional (the ``distributed`` extra) and imported on first use.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from typing import Any

from ensembo.errors import ExecutionError, MissingDependencyError
from ensembo.execution.backend import Objective, check_serializable
from ensembo.execution.child import TrialLimits, evaluate, evaluate_in_child
from ensembo.execution.dask_in_child import WithoutWorker
from ensembo.execution.outcome import Outcome, OutcomeKind, describe_exception

_POLL_SECONDS = 2.0


def import_distributed():
    try:
        import distributed
    except ImportError:
        raise MissingDependencyError("Dask execution", "distributed", "distributed") from None
    return distributed


def is_dask_client(candidate: Any) -> bool:
    """True for a ``distributed.Client``, without importing dask when it is not loaded."""
    return any(
        cls.__name__ == "Client" and cls.__module__.startswith("distributed")
        for cls in type(candidate).__mro__
    )


def start_local_cluster(n_workers: int, *, memory_limit: str | int | None = "auto"):
    """A loopback ``LocalCluster`` (processes, one thread each) and a client on it."""
    distributed = import_distributed()
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit=memory_limit,
        )
    return distributed.Client(cluster)


def connect(address: str):
    """A client on the scheduler at ``address`` (``tcp://host:port``)."""
    return import_distributed().Client(address)


class DaskBackend:
    """Evaluations as Dask tasks, at most one per worker thread (and ``max_slots``).

    ``owns_client``: closing the backend closes the client and its cluster too. The
    objective is shipped with cloudpickle: functions of modules the workers cannot
    import must be registered by value (``cloudpickle.register_pickle_by_value``) or
    uploaded (``client.upload_file``); a ``LocalCluster`` inherits the driver's
    ``sys.path``. ``isolate``: every evaluation runs in a process forked for it inside
    the worker, so that a crash fails its trial instead of killing the worker (a fork per
    trial: 25-40 ms measured on a loaded 2-CPU machine); there the objective's dask
    computations run locally and ``worker_client()`` raises.
    """

    def __init__(
        self,
        client: Any,
        *,
        max_slots: int | None = None,
        owns_client: bool = False,
        no_worker_timeout: float = 60.0,
        isolate: bool = False,
    ):
        self._distributed = import_distributed()
        self.client = client
        self.max_slots = max_slots
        self.no_worker_timeout = no_worker_timeout
        self.owns_client = owns_client
        self.isolate = isolate
        self._live: set[Any] = set()
        self._fetched: dict[Any, Outcome] = {}

    @property
    def slots(self) -> int:
        threads = max(sum(self.client.nthreads().values()), 1)
        return threads if self.max_slots is None else min(threads, self.max_slots)

    def check_objective(self, objective: Objective) -> None:
        """Dask ships the objective with cloudpickle when the first task is submitted; one
        it cannot serialize would stop the run then, with a trial already handed out."""
        import cloudpickle

        check_serializable(
            objective, cloudpickle.dumps, "the Dask workers, which need it serializable by "
            "cloudpickle", "Keep what cannot be pickled (locks, open files, connections) out "
            "of its closure and create it inside the objective, or use n_jobs=k (forked "
            "processes, no pickling).",
        )

    def submit(self, objective: Objective, config: dict[str, Any], limits: TrialLimits) -> Any:
        future = self.client.submit(
            evaluate_on_worker, objective, config, limits, self.isolate, pure=False
        )
        self._live.add(future)
        return future

    def wait(self, handles: Collection[Any], timeout: float | None = None) -> list[Any]:
        """The ended tasks; raises :class:`ExecutionError` when the cluster has had no
        worker for ``no_worker_timeout`` seconds (tasks would wait forever)."""
        workers_seen = time.monotonic()
        give_up = None if timeout is None else time.monotonic() + timeout
        while True:
            # Checked first because ``distributed.wait`` with a zero timeout gives up
            # before looking: a poll (``timeout=0``) must still see what has ended.
            done = {future for future in handles if future.done()}
            if not done:
                poll = (
                    _POLL_SECONDS
                    if give_up is None
                    else max(min(_POLL_SECONDS, give_up - time.monotonic()), 0.0)
                )
                try:
                    done, _ = self._distributed.wait(
                        list(handles), timeout=poll, return_when="FIRST_COMPLETED"
                    )
                except TimeoutError:
                    done = set()
            if done or (give_up is not None and time.monotonic() >= give_up):
                self._fetch([future for future in done if future.status == "finished"])
                return list(done)
            if self.client.nthreads():
                workers_seen = time.monotonic()
            elif time.monotonic() - workers_seen > self.no_worker_timeout:
                raise ExecutionError(
                    f"the Dask cluster at {self.client.scheduler.address} has had no worker for "
                    f"{self.no_worker_timeout:g} s; {len(handles)} evaluations cannot run"
                )

    def _fetch(self, finished: list[Any]) -> None:
        """Results of several ended tasks in one round trip (one by one is a round trip
        each, which adds up when the driver is busy)."""
        if len(finished) < 2:
            return
        try:
            values = self.client.gather(finished)
        except Exception:  # a result went missing in between: outcome() reads them one by one
            return
        self._fetched.update(zip(finished, values, strict=True))

    def outcome(self, handle: Any) -> Outcome:
        self._live.discard(handle)
        if handle in self._fetched:
            return self._fetched.pop(handle)
        if handle.status == "finished":
            return _read(handle)
        if handle.cancelled():
            return Outcome(kind=OutcomeKind.LOST, message="lost: the Dask task was cancelled")
        error = handle.exception()
        if isinstance(error, self._lost_worker_errors()):
            return Outcome(kind=OutcomeKind.LOST, message=f"lost: {describe_exception(error)}")
        raise error

    def _lost_worker_errors(self) -> tuple[type[BaseException], ...]:
        from distributed.comm.core import CommClosedError
        from distributed.scheduler import KilledWorker

        return (KilledWorker, CommClosedError, asyncio.CancelledError)

    def close(self, *, interrupted: bool = False) -> None:
        if interrupted and self._live:
            self.client.cancel(list(self._live), force=True)
        self._live.clear()
        self._fetched.clear()
        if self.owns_client:
            cluster = getattr(self.client, "cluster", None)
            self.client.close()
            if cluster is not None:
                cluster.close()


def evaluate_on_worker(
    objective: Objective, config: dict[str, Any], limits: TrialLimits, isolate: bool
) -> Outcome:
    """The task of a :class:`DaskBackend`. Isolated, or under limits, ``objective(config)``
    runs in a process forked inside the worker, whose crash is the trial's ``CRASHED``
    outcome and not the worker's death, and whose dask computations run there
    (:class:`~ensembo.execution.dask_in_child.WithoutWorker`), not through the worker's
    client, which cannot work in a fork. The outcome comes back from the child already
    portable."""
    if isolate or limits.any:
        return evaluate_in_child(WithoutWorker(objective), config, limits)
    return evaluate(objective, config, limits, ship=True)


def _read(future: Any) -> Outcome:
    """A finished task's outcome; one the client cannot load fails its trial, not the run."""
    try:
        return future.result()
    except Exception as error:  # deserialization raises whatever the payload's code raises
        return Outcome(
            kind=OutcomeKind.RAISED,
            message=f"the result could not be read: {describe_exception(error)}",
        )
