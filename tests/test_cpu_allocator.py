"""The CPU allocator's cache of freed large blocks (csrc/aten/cpu_allocator.c)."""
import os

import numpy as np
import pytest

import pyctorch as P

C = P._C
BIG = 1 << 18  # floats: 1 MiB, well inside the cached range


@pytest.fixture
def cache_on():
    """A known limit for the test, restored afterwards."""
    limit = C._cpu_cache_info()["limit_bytes"]
    C._cpu_empty_cache(256 << 20)
    yield
    C._cpu_empty_cache(limit)


def test_freed_block_is_reused_for_the_same_size_class(cache_on):
    a = P.ones(BIG)
    ptr = a.data_ptr()
    del a
    info = C._cpu_cache_info()
    assert info["cached_blocks"] >= 1 and info["cached_bytes"] >= BIG * 4
    hits = info["hits"]
    b = P.empty(BIG - 3)  # rounds into the same class
    assert b.data_ptr() == ptr and C._cpu_cache_info()["hits"] == hits + 1
    assert b.data_ptr() % 64 == 0


def test_reused_block_gives_correct_results(cache_on):
    for _ in range(5):
        x = P.arange(BIG, dtype=P.float32)
        y = P.zeros(BIG)
        np.testing.assert_array_equal((x + y).numpy(), np.arange(BIG, dtype=np.float32))
        assert float(P.zeros(BIG).abs().sum()) == 0.0


def test_small_blocks_are_not_cached(cache_on):
    before = C._cpu_cache_info()["cached_blocks"]
    a = P.ones(100)
    del a
    assert C._cpu_cache_info()["cached_blocks"] == before


def test_limit_bounds_what_the_cache_holds(cache_on):
    C._cpu_empty_cache(3 << 20)  # room for two 1 MiB blocks plus change
    xs = [P.ones(BIG) for _ in range(6)]
    del xs
    info = C._cpu_cache_info()
    assert info["cached_bytes"] <= 3 << 20 and info["cached_blocks"] <= 3


def test_empty_cache_and_zero_limit(cache_on):
    a = P.ones(BIG)
    del a
    C._cpu_empty_cache()
    assert C._cpu_cache_info()["cached_bytes"] == 0
    C._cpu_empty_cache(0)  # caching off
    a = P.ones(BIG)
    del a
    assert C._cpu_cache_info()["cached_blocks"] == 0


def test_fork_child_allocates_from_an_unlocked_cache(cache_on):
    a = P.ones(BIG)
    del a
    pid = os.fork()
    if pid == 0:  # the child: must not deadlock on the cache lock, and must compute right
        try:
            ok = float((P.ones(BIG) * 2).sum()) == 2.0 * BIG
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def test_live_memory_counter_ignores_cached_blocks(cache_on):
    live0, _ = C._cpu_memory_stats(True)
    a = P.ones(BIG)
    assert C._cpu_memory_stats()[0] - live0 == BIG * 4
    del a
    assert C._cpu_memory_stats()[0] == live0


def test_forked_child_runs_parallel_ops_on_one_thread():
    """libgomp's pool does not survive fork (real torch hangs here): the child gets one thread."""
    saved = P.get_num_threads()
    P.set_num_threads(2)
    try:
        x = P.ones(1 << 22)
        assert float((x * 2).sum()) == 2.0 * (1 << 22)  # the parent's pool is now started
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                import warnings
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    P.set_num_threads(2)
                ok = (P.get_num_threads() == 1 and len(caught) == 1
                      and float((P.ones(1 << 22) * 2).sum()) == 2.0 * (1 << 22)
                      and float((P.ones(256, 256) @ P.ones(256, 256)).sum()) == 256.0 ** 3)
                code = 0 if ok else 1
            finally:
                os.write(w, b"x")
                os._exit(code)
        os.close(w)
        import select
        ready, _, _ = select.select([r], [], [], 60)
        if not ready:
            os.kill(pid, 9)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        assert ready, "the forked child hung"
        assert os.WEXITSTATUS(status) == 0
    finally:
        P.set_num_threads(saved)
