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
