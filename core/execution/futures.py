"""Backends on ``concurrent.futures``: local processes, or an executor the user brings.

:class:`ProcessBackend` (``n_jobs=k``) runs each evaluation in its own forked process,
supervised by one driver thread per slot. Forking per trial means the objective need
not be picklable (lambdas and closures work), a crash or a killed evaluation takes down
only its own trial, and time/memory limits are enforced by killing that process.
:class:`ExecutorBackend` wraps any ``concurrent.futures.Executor``; the evaluation runs
wherever the executor puts it, inside a child process only when limits are set.
"""

from __future__ import annotations

import concurrent.futures
import functools
import pickle
import threading
from collections.abc import Collection
from typing import Any

from ensembo.errors import ExecutionError
from ensembo.execution.backend import Objective, check_serializable, usable_cpus
from ensembo.execution.child import TrialLimits, evaluate, evaluate_in_child
from ensembo.execution.outcome import Outcome, OutcomeKind, describe_exception
from ensembo.execution.process_group import kill_group


class _FuturesBackend:
    """Waiting on and reading ``concurrent.futures.Future`` handles."""

    def wait(
        self, handles: Collection[concurrent.futures.Future], timeout: float | None = None
    ) -> list[concurrent.futures.Future]:
        done, _ = concurrent.futures.wait(
            handles, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED
        )
        return list(done)

    def outcome(self, handle: concurrent.futures.Future) -> Outcome:
        if handle.cancelled():
            return Outcome(
                kind=OutcomeKind.LOST, message="lost: the executor cancelled the evaluation"
            )
        error = handle.exception()
        if error is None:
            return handle.result()
        if isinstance(error, concurrent.futures.BrokenExecutor):
            return Outcome(kind=OutcomeKind.LOST, message=f"lost: {describe_exception(error)}")
        raise error


class ForkedChildren:
    """The evaluation processes this process forked, killed (with their process groups)
    when a run is interrupted. Shared by the backends whose threads fork them."""

    def __init__(self) -> None:
        self._pids: set[int] = set()
        self._stopping = False  # kill_all() began: kill what starts now
        self._lock = threading.Lock()

    def evaluate(
        self, objective: Objective, config: dict[str, Any], limits: TrialLimits
    ) -> Outcome:
        """:func:`~ensembo.execution.child.evaluate_in_child`, its child tracked."""
        started: list[int] = []

        def track(pid: int) -> None:
            started.append(pid)
            with self._lock:
                self._pids.add(pid)
                stopping = self._stopping
            if stopping:  # forked while kill_all() was killing the others: not spared
                kill_group(pid)

        try:
            return evaluate_in_child(objective, config, limits, on_start=track)
        finally:
            with self._lock:
                self._pids.difference_update(started)

    def kill_all(self) -> None:
        with self._lock:
            self._stopping = True
            pids = list(self._pids)
        for pid in pids:
            kill_group(pid)


class ProcessBackend(_FuturesBackend):
    """``n_jobs`` evaluations at once on this machine, one forked process each."""

    def __init__(self, n_jobs: int):
        if n_jobs < 1:
            raise ValueError(f"n_jobs must be at least 1, got {n_jobs}")
        self.slots = n_jobs
        self._threads = concurrent.futures.ThreadPoolExecutor(
            n_jobs, thread_name_prefix="ensembo-trial"
        )
        self._children = ForkedChildren()

    def submit(
        self, objective: Objective, config: dict[str, Any], limits: TrialLimits
    ) -> concurrent.futures.Future:
        return self._threads.submit(self._children.evaluate, objective, config, limits)

    def close(self, *, interrupted: bool = False) -> None:
        if interrupted:
            self._children.kill_all()
        self._threads.shutdown(wait=True, cancel_futures=True)


class ExecutorBackend(_FuturesBackend):
    """Any ``concurrent.futures.Executor``; ``slots`` defaults to its worker count.

    For a process pool the objective must be picklable. A stdlib pool whose worker died
    is broken for good: its running evaluations are ``LOST`` (interrupted, re-run on the
    next ``optimize``), and the next submission stops the run with an error saying to
    create a new pool. The executor is the caller's and is never shut down here.
    """

    def __init__(self, executor: concurrent.futures.Executor, slots: int | None = None):
        self.executor = executor
        # _max_workers is how both stdlib pools store their size; other executors say it
        # through ``slots``.
        self.slots = int(slots or getattr(executor, "_max_workers", None) or usable_cpus())
        self._pending: set[concurrent.futures.Future] = set()
        # Only a thread pool runs evaluations in this process: its forked children (with
        # limits) are ours to kill; elsewhere the outcome is pickled back.
        self._in_process = isinstance(executor, concurrent.futures.ThreadPoolExecutor)
        self._children = ForkedChildren()

    def check_objective(self, objective: Objective) -> None:
        """A process pool pickles the objective for every task, and would otherwise
        fail only when the first result is due, naming a pickling detail."""
        if not isinstance(self.executor, concurrent.futures.ProcessPoolExecutor):
            return
        check_serializable(
            objective, pickle.dumps, "the ProcessPoolExecutor's workers, which need it "
            "picklable", "Define it at module level (not a lambda or closure), or use "
            "n_jobs=k (forked processes, no pickling) or a dask.distributed.Client "
            "(cloudpickle).",
        )

    def submit(
        self, objective: Objective, config: dict[str, Any], limits: TrialLimits
    ) -> concurrent.futures.Future:
        if self._in_process and limits.any:
            task = self._children.evaluate
        else:
            task = functools.partial(evaluate, ship=not self._in_process)
        try:
            future = self.executor.submit(task, objective, config, limits)
        except concurrent.futures.BrokenExecutor as error:
            raise ExecutionError(
                f"the {type(self.executor).__name__} is broken ({describe_exception(error)}): "
                "one of its workers died, and a stdlib pool cannot be used after that. The "
                "interrupted trials are re-run first by the next optimize() with a new pool; "
                "n_jobs=k retries crashed evaluations on its own."
            ) from error
        self._pending.add(future)
        return future

    def outcome(self, handle: concurrent.futures.Future) -> Outcome:
        self._pending.discard(handle)
        return super().outcome(handle)

    def close(self, *, interrupted: bool = False) -> None:
        """Cancel, when interrupted, the evaluations still queued in the executor, and
        kill the processes a thread pool forked for running ones (with limits); others
        running cannot be stopped. The executor itself belongs to the caller."""
        if interrupted:
            for future in self._pending:
                future.cancel()
            self._children.kill_all()
        self._pending.clear()
