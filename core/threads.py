"""Caps on native thread pools (BLAS, OpenMP) around one call.

A GP's matrices are small, and so are most models a search trains: a pool as wide as the
machine gains little there, but when several searches, workers or neighbours share the
cores the pools oversubscribe them, and OpenMP and OpenBLAS threads spin while they
wait. Measured on 2 busy cores: GP asks about 10x slower under Dask workers, and the
README's main job 9 min instead of 37 s (its logistic regressions and gradient boosting
use OpenMP). threadpoolctl caps the pools for the duration of one call and restores
them after, so nothing outside that call changes.
"""

from __future__ import annotations

import contextlib
import functools
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


@contextlib.contextmanager
def limited_threads(limit: int, user_api: str | None = None) -> Iterator[None]:
    """At most ``limit`` threads per pool inside the block; ``0`` leaves the pools alone.

    ``user_api`` is ``"blas"`` or ``"openmp"`` to cap one kind only (default: both).
    """
    if limit == 0:
        yield
        return
    with _controller().limit(limits=limit, user_api=user_api):
        yield
