"""Caps on native thread pools (BLAS, OpenMP) around one call.

A GP's matrices are small, and so are most models a search trains: a pool as wide as the
machine gains little there, but when several searches, workers or neighbours share the
cores the pools oversubscribe them, and OpenMP and OpenBLAS threads spin while they
wait. Measured on 2 busy cores: GP asks about 10x slower under Dask workers, and the
README's main job 9 min instead of 37 s (its logistic regressions and gradient boosting
use OpenMP). threadpoolctl caps the pools for the duration of one call and restores
them after, so nothing outside that call changes.

The limits are process-wide, and blocks in several threads (two studies' GP fits,
``ml.Task`` fits on a thread pool) overlap: a block restoring what it saw on entry
would restore another block's cap. So the pools' sizes are saved when the first block
starts and restored when the last one ends; in between, the blocks still inside apply
their limits in the order they started.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    """Built once: finding the loaded libraries costs ~0.1 ms, limiting them ~10 us.

    Built on first use, after numpy, scipy and the learners are imported, so their
    libraries are among those found. (A library loaded later, such as an OpenMP runtime
    that only a model's first fit imports, is not capped.)
    """
    return ThreadpoolController()


_lock = threading.Lock()
_inside: list[tuple[int, str | None]] = []  # the blocks' limits, oldest first
_original: list[int] = []  # each pool's size before the first of them


@contextlib.contextmanager
def limited_threads(limit: int, user_api: str | None = None) -> Iterator[None]:
    """At most ``limit`` threads per pool inside the block; ``0`` leaves the pools alone.

    ``user_api`` is ``"blas"`` or ``"openmp"`` to cap one kind only (default: both).
    """
    if limit == 0:
        yield
        return
    block = (limit, user_api)
    _enter(block)
    try:
        yield
    finally:
        _leave(block)


def _enter(block: tuple[int, str | None]) -> None:
    with _lock:
        if not _inside:
            _original[:] = [pool.num_threads for pool in _controller().lib_controllers]
        _inside.append(block)
        _apply(block)


def _leave(block: tuple[int, str | None]) -> None:
    """Restore the sizes saved by the first block, then re-apply the blocks still inside
    (equal blocks are interchangeable, so removing the first equal one is right)."""
    with _lock:
        _inside.remove(block)
        for pool, size in zip(_controller().lib_controllers, _original, strict=True):
            pool.set_num_threads(size)
        for remaining in _inside:
            _apply(remaining)


def _apply(block: tuple[int, str | None]) -> None:
    limit, user_api = block
    _controller().limit(limits=limit, user_api=user_api)  # applied when made; never restored
