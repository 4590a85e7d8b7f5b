"""Stop a benchmark's process pool on Ctrl-C or SIGTERM: no further run starts, the
running ones are terminated, and no pool manager thread is left for the interpreter to
join forever at exit."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor


@contextlib.contextmanager
def stop_on_interrupt(pool: ProcessPoolExecutor) -> Iterator[None]:
    """On Ctrl-C, start no further run and stop the ones in progress, then re-raise.

    Leaving the pool's ``with`` block would otherwise wait for every queued run to be
    executed. A stopped run keeps its ``running`` marker, whose process is gone: the
    report lists it as interrupted and the next invocation runs it again; finished
    records are untouched.
    """
    try:
        yield
    except KeyboardInterrupt:
        _stop_pool(pool)
        raise


STOP_SECONDS = 10.0


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's workers until its manager thread has ended.

    With ``max_tasks_per_child=1`` the manager replaces a worker that exits after its
    run, so a one-off snapshot of the workers can miss the replacement, which then takes
    the next queued run; and a manager left waiting for a result no worker will send is
    joined forever at interpreter exit. So terminate whatever the live worker table holds,
    wake the manager, and repeat until it has ended (a terminated worker makes it wind the
    pool down), for at most ``STOP_SECONDS``.
    """
    manager = getattr(pool, "_executor_manager_thread", None)
    table = getattr(pool, "_processes", None)  # the live table the manager edits
    processes = table if table is not None else {}
    wakeup = getattr(pool, "_executor_manager_thread_wakeup", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if table is not None:
        # shutdown() drops the table, but the manager still replaces a worker that
        # exits after its run, and failed on the missing table (a TypeError traceback)
        pool._processes = processes
    deadline = time.monotonic() + STOP_SECONDS
    while True:
        for process in list(processes.values()):
            with contextlib.suppress(Exception):
                process.terminate()
        if manager is None or not manager.is_alive() or time.monotonic() > deadline:
            break
        with contextlib.suppress(Exception):
            wakeup.wakeup()
        manager.join(timeout=0.2)
    for process in list(processes.values()):
        with contextlib.suppress(Exception):
            process.join(timeout=5)


def pool_stuck() -> bool:
    """Whether a process pool's manager thread is still alive after :func:`_stop_pool`:
    the interpreter would join it forever when exiting."""
    import threading
    from concurrent.futures import process

    manager_type = getattr(process, "_ExecutorManagerThread", ())
    return any(isinstance(t, manager_type) and t.is_alive() for t in threading.enumerate())
