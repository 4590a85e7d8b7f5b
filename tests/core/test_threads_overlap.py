"""limited_threads blocks that overlap (in several threads) leave the pools as they
found them: threadpoolctl's limits are process-wide."""

from __future__ import annotations

import contextlib

import numpy  # noqa: F401 - loads a BLAS for the real-pool test
import pytest

from ensembo import threads


class FakePool:
    def __init__(self, user_api: str, size: int):
        self.user_api, self.num_threads = user_api, size

    def set_num_threads(self, size: int) -> None:
        self.num_threads = size


class FakeController:
    """threadpoolctl's behaviour: ``limit`` applies at once and restores on exit what
    it saw when made."""

    def __init__(self):
        self.lib_controllers = [FakePool("blas", 8), FakePool("openmp", 8)]

    def limit(self, *, limits, user_api=None):
        pools = [p for p in self.lib_controllers if user_api in (None, p.user_api)]
        saved = [(p, p.num_threads) for p in pools]
        for pool in pools:
            pool.set_num_threads(limits)

        @contextlib.contextmanager
        def restoring():
            try:
                yield
            finally:
                for pool, size in saved:
                    pool.set_num_threads(size)

        return restoring()


@pytest.fixture
def fake(monkeypatch):
    controller = FakeController()
    monkeypatch.setattr(threads, "_controller", lambda: controller)
    return controller


def sizes(controller):
    return [p.num_threads for p in controller.lib_controllers]


def test_overlapping_blocks_restore_the_pools_when_the_last_ends(fake):
    first, second = threads.limited_threads(1), threads.limited_threads(2, user_api="blas")
    first.__enter__()
    second.__enter__()  # another thread's block: starts inside the first, ends after it
    assert sizes(fake) == [2, 1]
    first.__exit__(None, None, None)
    assert sizes(fake) == [2, 8]  # the second block still holds its limit
    second.__exit__(None, None, None)
    assert sizes(fake) == [8, 8]


def test_nested_blocks_restore_the_outer_limit(fake):
    with threads.limited_threads(2):
        with threads.limited_threads(1, user_api="openmp"):
            assert sizes(fake) == [2, 1]
        assert sizes(fake) == [2, 2]
    assert sizes(fake) == [8, 8]


def test_overlapping_blocks_restore_a_real_blas_pool():
    blas = [p for p in threads._controller().lib_controllers if p.user_api == "blas"]
    if not blas:
        pytest.skip("no BLAS pool found")
    with threads.limited_threads(3, user_api="blas"):  # a known size to come back to
        before = [p.num_threads for p in blas]
        first, second = threads.limited_threads(1), threads.limited_threads(1)
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        second.__exit__(None, None, None)
        assert [p.num_threads for p in blas] == before
