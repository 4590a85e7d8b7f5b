"""A cap on BLAS threads around the GP's linear algebra.

The GP's matrices are small (tens to a few hundred rows), where a multi-threaded BLAS
gains little; but when several workers on one machine (Dask or process workers) each
run a GP with a BLAS pool as wide as the machine, the threads oversubscribe the cores
and every fit and suggestion slows down (about 10x measured). threadpoolctl caps the
pools for the duration of one call and restores them after, so nothing outside the GP
changes.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    """Built once: finding the loaded BLAS libraries costs ~0.1 ms, limiting them ~10 us.

    Built on first use, after this package has imported numpy and scipy.linalg, so their
    BLAS libraries are among those found.
    """
    return ThreadpoolController()


@contextlib.contextmanager
def blas_threads(limit: int) -> Iterator[None]:
    """At most ``limit`` BLAS threads inside the block; ``0`` leaves the pools alone."""
    if limit == 0:
        yield
        return
    with _controller().limit(limits=limit, user_api="blas"):
        yield
