"""The buffer pool: outputs and intermediates reuse blocks, never one still referenced."""
import gc
import threading
import weakref

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.runtime import pool as buffers
from arrjit.runtime.pool import MIN_POOLED_BYTES, BufferPool, Lease, size_class

N = MIN_POOLED_BYTES // 8 * 4     # float64 elements: pooled


@pytest.fixture
def fresh_pool():
    buffers.pool().clear()
    gc.collect()
    yield buffers.pool()
    arrjit.config.update("pool_max_size", 1 << 30)


def test_size_classes_waste_at_most_a_quarter():
    for nbytes in [MIN_POOLED_BYTES, 300_001, 1 << 22, (1 << 22) + 1, 123_456_789]:
        size = size_class(nbytes)
        assert nbytes <= size <= nbytes * 1.25 + 4096
        assert size % 4096 == 0
    assert len({size_class(n) for n in range((1 << 20) + 1, (1 << 21) + 1, 4096)}) == 4


def test_output_block_is_reused_once_the_array_dies(fresh_pool):
    f = arrjit.jit(lambda a, b: a * b + 1.0)
    a, b = np.arange(N, dtype=np.float64), np.full(N, 2.0)
    lent = fresh_pool.lent
    y = f(a, b)
    assert isinstance(y.base, Lease)
    np.testing.assert_array_equal(y, a * b + 1.0)
    address = y.ctypes.data
    allocated = fresh_pool.allocated
    alive = weakref.ref(y)
    held = fresh_pool.held_bytes()
    del y
    assert alive() is None and fresh_pool.held_bytes() == held + size_class(N * 8)
    for _ in range(4):
        y = f(a, b)
        assert y.ctypes.data == address
        del y
    assert fresh_pool.allocated == allocated
    assert fresh_pool.lent == lent


def test_a_view_that_outlives_its_array_keeps_the_block(fresh_pool):
    f = arrjit.jit(lambda a: a + 1.0)
    a = np.zeros(N)
    view = f(a)[10:20]            # the full array dies at once; its view holds the lease
    gc.collect()
    expected = view.copy()
    others = [f(a + k) for k in range(1, 4)]
    for k, other in enumerate(others, 1):
        assert not np.shares_memory(other, view)
        np.testing.assert_array_equal(other, k + 1.0)
    np.testing.assert_array_equal(view, expected)
    lent = fresh_pool.lent
    del view
    assert fresh_pool.lent == lent - 1


def test_intermediates_are_reused_between_calls(fresh_pool):
    @arrjit.jit
    def f(x, w):
        h = anp.tanh(x * 2.0)           # an intermediate in front of a library call
        return anp.sum(h @ w, axis=1) + anp.sort(h, axis=1)[:, 0]

    x = np.random.default_rng(0).random((N // 64, 64))
    w = np.eye(64)
    first = f(x, w)
    del first
    allocated = fresh_pool.allocated
    for _ in range(3):
        out = f(x, w)
        h = np.tanh(x * 2.0)
        np.testing.assert_allclose(out, (h @ w).sum(1) + np.sort(h, 1)[:, 0])
        del out
    assert fresh_pool.allocated == allocated


def test_small_arrays_come_from_numpy(fresh_pool):
    lent = fresh_pool.lent
    y = arrjit.jit(lambda a: a * 2)(np.ones(100))
    assert y.base is None and y.flags.owndata
    assert fresh_pool.lent == lent


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.complex128, np.bool_])
def test_pooled_arrays_of_every_dtype(fresh_pool, dtype):
    pool = BufferPool()
    a = pool.empty((N // 4, 4), np.dtype(dtype))
    assert a.dtype == dtype and a.shape == (N // 4, 4) and a.flags.c_contiguous
    assert a.flags.writeable and a.flags.aligned
    a[...] = 1
    assert a.all()


def test_cap_frees_blocks_over_it(fresh_pool):
    arrjit.config.update("pool_max_size", 0)
    f = arrjit.jit(lambda a: a - 1.0)
    f(np.ones(N))
    assert fresh_pool.held_bytes() == 0
    arrjit.config.update("pool_max_size", 1 << 30)
    f(np.ones(N))
    assert fresh_pool.held_bytes() == size_class(N * 8)


def test_clear_caches_frees_the_pool(fresh_pool):
    f = arrjit.jit(lambda a: a - 1.0)
    f(np.ones(N))
    assert fresh_pool.held_bytes() > 0
    arrjit.clear_caches()
    assert fresh_pool.held_bytes() == 0


def test_arrays_dying_on_other_threads_give_blocks_back(fresh_pool):
    f = arrjit.jit(lambda a: a * 3.0)
    lent = fresh_pool.lent
    outs = [f(np.full(N, float(k))) for k in range(8)]
    threads = [threading.Thread(target=outs.pop) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fresh_pool.lent == lent
    assert fresh_pool.held_bytes() == 8 * size_class(N * 8)


def test_donated_output_is_the_input_not_a_pooled_block(fresh_pool):
    f = arrjit.jit(lambda a: a + 1.0, donate_argnums=0)
    a = np.zeros(N)
    lent = fresh_pool.lent
    y = f(a)
    assert np.shares_memory(y, a)
    assert fresh_pool.lent == lent


def test_pooled_arrays_and_loop_scratch_buffers_start_on_a_cache_line(fresh_pool):
    """Lent arrays and a loop's scratch buffers start on a multiple of ``ALIGNMENT`` bytes
    (``malloc`` hands out large blocks 16 bytes past one)."""
    from arrjit.backends.cpu.loops import LoopRun
    from arrjit.lax import fori_loop

    for shape in [(MIN_POOLED_BYTES // 8,), (300, 300), (7, 100_001)]:
        assert buffers.empty(shape, np.dtype(np.float64)).ctypes.data % buffers.ALIGNMENT == 0

    def columns(a):
        rows = anp.arange(a.shape[0])

        def column(j, low):
            s = a[:, j] - low @ anp.where(rows < j, low[j], 0.0)
            return low.at[:, j].set(anp.where(rows >= j, s / anp.sqrt(s[j]), 0.0))
        return fori_loop(0, a.shape[0], column, anp.zeros_like(a))

    a = np.eye(200) * 4.0 + 1.0
    jitted = arrjit.jit(columns)
    got = jitted(a)
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-12)
    (loop,) = [r for r in jitted.lower(a)._entry.rendered.runs if isinstance(r, LoopRun)]
    assert all(b.ctypes.data % buffers.ALIGNMENT == 0 for b in loop._spare[0])
    assert got.ctypes.data % buffers.ALIGNMENT == 0     # the carry's copy


@pytest.mark.parametrize("n", [64, 100, 300])
@pytest.mark.parametrize("steps", [1, 2])
def test_a_loops_carry_copies_of_a_page_or_more_start_on_a_cache_line(fresh_pool, n, steps):
    """A loop carry is copied before the driver updates it, and a carry the body replaces has a
    second buffer: each starts on a cache line from a page on, so an odd or even number of
    steps returns a lined-up array."""
    from arrjit.lax import fori_loop

    def smooth(a):
        return fori_loop(0, steps, lambda i, x: x * 0.5 + a, a)

    a = np.random.default_rng(n).random((n, n))
    got = arrjit.jit(smooth)(a)
    want = a.copy()
    for _ in range(steps):
        want = want * 0.5 + a
    np.testing.assert_array_equal(got, want)
    assert got.ctypes.data % buffers.ALIGNMENT == 0
