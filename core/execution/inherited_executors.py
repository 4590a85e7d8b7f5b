"""Let a forked evaluation start its own joblib/loky workers instead of the driver's.

joblib keeps one reusable loky executor per process, in module globals. A child forked
from a process that already ran ``joblib.Parallel`` (a data run with ``n_jobs``, a
notebook, scikit-learn's ``n_jobs``) inherits that executor object, but not the threads
that manage it nor the worker processes, which are the parent's: the objective's next
``joblib.Parallel`` would submit to it and wait for ever. In the child, the executor is
dropped from loky's globals, so the next call starts workers of the child's own; it is
not shut down, as that would stop the parent's workers. It stays referenced (in
``_LEFT_TO_THE_PARENT``) until the child exits with ``os._exit``, because collecting it
would write to a wake-up pipe that the parent's manager thread reads.

Only joblib's and loky's reusable executor is handled, because only it is reused
implicitly through module state. A pool the objective itself keeps from the driver (a
``concurrent.futures.ProcessPoolExecutor`` or ``multiprocessing.Pool`` in a global) is
just as unusable in the child and is not detected: create pools inside the objective.
"""

from __future__ import annotations

import gc
import os
import sys
import threading

_LOKY_MODULES = ("joblib.externals.loky.reusable_executor", "loky.reusable_executor")
"""loky vendored in joblib, and loky installed on its own: each has its own executor."""

_LEFT_TO_THE_PARENT: list[object] = []
"""Executors inherited at the fork, kept alive so that they are never collected here."""


def forget_inherited_executors() -> None:
    """In a forked child: make joblib and loky create a new executor on their next use.

    Modules that are not imported are not imported: a child whose driver never used
    joblib pays nothing. Their locks are replaced too, as another thread of the parent
    may have held one at the fork, which no thread of the child would ever release.
    """
    for name in _LOKY_MODULES:
        module = sys.modules.get(name)
        if module is None or not hasattr(module, "_executor"):
            continue
        if module._executor is not None:
            _LEFT_TO_THE_PARENT.append(module._executor)
        module._executor = None
        module._executor_kwargs = None
        if hasattr(module, "_executor_lock"):
            module._executor_lock = threading.RLock()
    joblib_executor = sys.modules.get("joblib.executor")
    if joblib_executor is not None and hasattr(joblib_executor, "_executor_args"):
        # the arguments of the parent's executor, compared to decide on reusing it
        joblib_executor._executor_args = None


SHUTDOWN_SECONDS = 10.0
"""How long a child waits for its own executor to shut down before leaving anyway."""


def own_executors() -> list[object]:
    """In a forked child: the joblib/loky executors it started itself (not inherited)."""
    own = []
    for name in _LOKY_MODULES:
        module = sys.modules.get(name)
        executor = getattr(module, "_executor", None) if module is not None else None
        if executor is not None and not any(executor is kept for kept in _LEFT_TO_THE_PARENT):
            own.append(executor)
    return own


def shut_down(executors: list[object]) -> None:
    """In a forked child about to exit: shut down the executors it started itself
    (:func:`own_executors`), then unlink the loky semaphores it created that are left.

    The child ends with ``os._exit``, which skips loky's shutdown: the semaphores and
    memmapping folder its executor registered (with the resource tracker inherited from
    the driver) stayed in ``/dev/shm`` until the driver exited, 8 semaphores and a
    folder per trial, and a driver that never used loky printed "leaked semlock
    objects" warnings per trial. The shutdown runs in a thread given
    :data:`SHUTDOWN_SECONDS`, as nothing else bounds it under a memory limit alone.
    After it, some semaphores are still held by reference cycles (queues, the manager
    thread), whose finalizers only a collection runs: ``gc.collect`` frees most of them,
    and :func:`unlink_own_semaphores` the rest (2 semaphores in 1 of 18 trials measured).
    """
    if executors:
        _stop_within_the_shutdown_time(executors)
        gc.collect()
    unlink_own_semaphores()


def _stop_within_the_shutdown_time(executors: list[object]) -> None:
    def stop_all() -> None:
        for executor in executors:
            try:  # joblib's terminate also removes its memmapping folder
                stop = getattr(executor, "terminate", None)
                if stop is not None:
                    stop(kill_workers=True)
                else:
                    executor.shutdown(wait=True, kill_workers=True)
            except Exception:  # leaving anyway: a failed cleanup must not lose the result
                pass

    stopping = threading.Thread(target=stop_all, daemon=True)
    stopping.start()
    stopping.join(SHUTDOWN_SECONDS)


def unlink_own_semaphores() -> list[str]:
    """Run now the exit-time finalizers of the loky semaphores this process created and
    still holds, as a normal interpreter exit would; their names.

    Each loky ``SemLock`` registers a ``multiprocessing.util.Finalize`` that unlinks its
    name and tells the resource tracker it did; ``os._exit`` never runs them. Only the
    semaphores named after this process (``/loky-<pid>-...``) are unlinked: the registry
    also holds, copied at the fork, the finalizers of the driver's semaphores, which the
    driver still uses. Unlinking only removes the name, so workers still stopping keep
    theirs working.
    """
    util = sys.modules.get("multiprocessing.util")
    registry = getattr(util, "_finalizer_registry", None)
    if not registry:
        return []
    prefix = f"/loky-{os.getpid()}-"
    unlinked = []
    for finalizer in list(registry.values()):
        callback = getattr(finalizer, "_callback", None)
        args = getattr(finalizer, "_args", None) or ()
        if (
            getattr(callback, "__qualname__", "") == "SemLock._cleanup"
            and getattr(callback, "__module__", "").endswith("loky.backend.synchronize")
            and args
            and isinstance(args[0], str)
            and args[0].startswith(prefix)
        ):
            try:
                finalizer()
            except Exception:  # leaving anyway: a failed cleanup must not lose the result
                continue
            unlinked.append(args[0])
    return unlinked
