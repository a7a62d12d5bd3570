"""Nested loops run inside one native driver: values against NumPy run step by step, and the
structure (no Python per iteration, the reason where a loop cannot run natively)."""
import zlib

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import jit, lax, vmap

from helpers import assert_same


def _loops(f, *args):
    from arrjit.backends.cpu.loops import LoopRun

    return [s for s in f.lower(*args)._entry.rendered.runs if isinstance(s, LoopRun)]


def _count_python_iterations(loop) -> list[int]:
    """Count calls of the loop's compiled condition and body plans (what a loop run from
    Python calls once per iteration)."""
    calls = [0]
    for executable in (loop.cond, loop.body):
        run = executable.run

        def counted(args, run=run):
            calls[0] += 1
            return run(args)
        executable.run = counted
    return calls


def crc32(ns, data):
    poly, one = np.uint32(0xEDB88320), np.uint32(1)

    def byte(i, crc):
        def bit(_, c):
            return ns.where((c & one) != 0, (c >> one) ^ poly, c >> one)
        return lax.fori_loop(0, 8, bit, crc ^ data[i].astype(np.uint32))
    return ~lax.fori_loop(0, data.shape[0], byte, np.uint32(0xFFFFFFFF))


def test_crc32_runs_as_one_native_driver_and_matches_zlib():
    data = np.random.default_rng(0).integers(0, 256, 300).astype(np.uint8)
    f = jit(lambda d: crc32(anp, d))
    (loop,) = _loops(f, data)
    assert loop.native is not None and f.lower(data).loops == [
        "natively, one compiled driver for every iteration"]
    (inner,) = [s for s in loop.body.runs if s.__class__ is loop.__class__]
    assert len(inner.native.extra.register_kernels) == 2      # the condition and the bit step
    assert inner.native.extra.array_calls == 0       # every value of the inner loop in registers
    calls = _count_python_iterations(loop)
    got = f(data)
    assert calls == [0]
    assert got.dtype == np.uint32 and int(got) == zlib.crc32(data.tobytes())


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.complex128, np.bool_])
def test_scalar_carries_of_every_dtype_stay_in_registers_and_match_numpy(dtype):
    """A 0-d carry of each dtype through kernels in their register form: the values are cast to
    the carry's dtype after every step, as NumPy's scalars are."""
    def step(i, c):
        x, flag = c
        y = x * x + x if dtype != np.bool_ else x ^ flag
        return y.astype(dtype), (i % 2 == 0) | flag

    def reference(x):
        x, flag = np.asarray(x), np.False_
        for i in range(5):
            with np.errstate(over="ignore"):
                y = x * x + x if dtype != np.bool_ else x ^ flag
            x, flag = np.asarray(y).astype(dtype), (i % 2 == 0) | flag
        return x, flag

    x0 = np.asarray(3, dtype) if dtype != np.complex128 else np.asarray(0.5 + 0.25j)
    f = jit(lambda x: lax.fori_loop(0, 5, step, (x, np.False_)))
    (loop,) = _loops(f, x0)
    assert loop.native.extra.array_calls == 0
    got = f(x0)
    want = reference(x0)
    assert_same(got[0], want[0])
    assert_same(got[1], np.asarray(want[1]))


def _row_sweeps(ns, a, sweeps):
    """Each outer step runs an inner loop over the rows, updating one row per inner step from
    the row before it; the outer carry is the matrix, the inner carry too."""
    def outer(k, m):
        def inner(i, m):
            return m.at[i].set(0.5 * m[i] + 0.25 * m[i - 1] + k)
        return lax.fori_loop(1, m.shape[0], inner, m)
    return lax.fori_loop(0, sweeps, outer, a)


def _row_sweeps_numpy(a, sweeps):
    m = a.copy()
    for k in range(sweeps):
        for i in range(1, m.shape[0]):
            m[i] = 0.5 * m[i] + 0.25 * m[i - 1] + k
    return m


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nested_loops_updating_rows_of_a_matrix_carry(dtype):
    a = np.random.default_rng(1).random((7, 5)).astype(dtype)
    f = jit(lambda a: _row_sweeps(anp, a, 4))
    (loop,) = _loops(f, a)
    assert loop.native is not None
    calls = _count_python_iterations(loop)
    got = f(a)
    assert calls == [0]
    np.testing.assert_allclose(got, _row_sweeps_numpy(a, 4),
                               rtol=1e-6 if dtype == np.float32 else 1e-14)
    assert got.dtype == dtype


def test_a_while_loop_nested_in_a_fori_loop_with_data_dependent_trip_counts():
    """Collatz steps of each value: the inner trip count depends on the data."""
    def steps(values):
        def one(i, counts):
            def more(c):
                return c[0] != 1

            def step(c):
                n, k = c
                return anp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1
            _, k = lax.while_loop(more, step, (values[i], np.int64(0)))
            return counts.at[i].set(k)
        return lax.fori_loop(0, values.shape[0], one, anp.zeros_like(values))

    def reference(values):
        out = []
        for n in values:
            k = 0
            while n != 1:
                n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
            out.append(k)
        return np.array(out)

    values = np.array([1, 2, 3, 6, 7, 27, 97])
    f = jit(steps)
    assert _loops(f, values)[0].native is not None
    assert_same(f(values), reference(values))


def test_three_levels_of_loops_and_an_inner_result_read_after_it_is_carried():
    def f(x):
        def middle(i, acc):
            def inner(j, v):
                def innermost(k, w):
                    return w * 0.5 + k
                return lax.fori_loop(0, 3, innermost, v + j)
            v = lax.fori_loop(0, 2, inner, acc)
            return v + anp.sum(v) * 1e-3     # the inner result, also read after the loop
        return lax.fori_loop(0, 4, middle, x)

    def reference(x):
        acc = x.copy()
        for i in range(4):
            v = acc.copy()
            for j in range(2):
                w = v + j
                for k in range(3):
                    w = w * 0.5 + k
                v = w
            acc = v + np.sum(v) * 1e-3
        return acc

    x = np.linspace(-1, 1, 6)
    g = jit(f)
    assert _loops(g, x)[0].native is not None
    np.testing.assert_allclose(g(x), reference(x), rtol=1e-14)


def test_a_nested_loop_in_a_while_loop_condition():
    def f(x):
        def cond(c):
            total = lax.fori_loop(0, c.shape[0], lambda i, s: s + c[i], 0.0)
            return total < 50.0
        return lax.while_loop(cond, lambda c: c * 1.5 + 1.0, x)

    x = np.array([0.5, 1.0, 2.0])
    ref = x.copy()
    while ref.sum() < 50.0:
        ref = ref * 1.5 + 1.0
    g = jit(f)
    assert _loops(g, x)[0].native is not None
    np.testing.assert_allclose(g(x), ref, rtol=1e-15)


def test_an_out_of_range_position_in_a_nested_loop_raises_numpy_s_index_error():
    def f(x, n):
        def outer(i, s):
            return lax.fori_loop(0, n, lambda j, t: t + x[j], s)
        return lax.fori_loop(0, 2, outer, 0.0)

    g = jit(f)
    x = np.arange(4.0)
    assert float(g(x, 4)) == 12.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        g(x, 10)
    assert float(g(x, 3)) == 6.0      # the next call is unaffected


def test_a_driver_raising_midway_leaves_its_operands_and_runs_again():
    """A driver that raises after updating its carries in place raises NumPy's error, leaves
    the operands as they were (the carries are copies), and the next call is right."""
    f = jit(lambda x, idx_: lax.fori_loop(0, 6, lambda i, x: x.at[i].set(
        x[i] * 2.0 + x[idx_[i]]), x))
    x = np.arange(8.0)
    bad = np.array([1, 2, 3, 0, 24, 5])
    with pytest.raises(IndexError, match="index 24 is out of bounds for axis 0 with size 8"):
        f(x, bad)
    assert_same(x, np.arange(8.0))
    good = np.array([7, 2, 3, 0, -1, 5])
    want = x.copy()
    for i in range(6):
        want[i] = want[i] * 2.0 + want[good[i]]
    assert_same(f(x, good), want)
    assert_same(f(x, good), want)


def test_nested_loops_under_vmap_and_grad():
    def f(w, x):
        x = anp.asarray(x)

        def outer(i, acc):
            return lax.fori_loop(0, 3, lambda j, a: a * w + x[j], acc)
        return lax.fori_loop(0, 2, outer, 0.0)

    def reference(w, x):
        acc = 0.0
        for _ in range(2):
            for j in range(3):
                acc = acc * w + x[j]
        return acc

    x = np.array([1.0, -2.0, 0.5])
    ws = np.array([0.5, 1.5, -1.0])
    np.testing.assert_allclose(jit(vmap(lambda w: f(w, x)))(ws),
                               [reference(w, x) for w in ws], rtol=1e-14)
    eps = 1e-6
    numeric = (reference(0.7 + eps, x) - reference(0.7 - eps, x)) / (2 * eps)
    np.testing.assert_allclose(float(arrjit.grad(f)(0.7, x)), numeric, rtol=1e-7)


def test_scratch_buffers_serve_one_run_after_another_and_never_a_result():
    """A native driver's temporaries (and the idle second buffer of a carry updated in its own
    buffer) come from a set of scratch buffers that a finished run gives back; runs on other
    threads at the same time take sets of their own, and a run that raises drops its set."""
    import threading

    def f(x, v, k):
        def body(i, acc):
            return acc.at[i % 4].add(anp.sum(acc * v) + x[i % 7])
        return lax.fori_loop(0, k, body, anp.zeros(4))

    def numpy_f(x, v, k):
        acc = np.zeros(4)
        for i in range(k):
            acc[i % 4] += np.sum(acc * v) + x[i % 7]
        return acc

    x, v = np.linspace(0.0, 1.0, 7), np.array([0.5, -0.25, 0.125, 0.0])
    jitted = arrjit.jit(f)
    (loop,) = _loops(jitted, x, v, 5)
    assert loop.native is not None and loop.native.scratch()
    first = jitted(x, v, 5)
    (spare,) = loop._spare
    second = jitted(x, v, 6)
    assert loop._spare == [spare]                     # the same set, given back again
    assert not any(np.shares_memory(out, buf) for out in (first, second) for buf in spare)
    assert_same(first, numpy_f(x, v, 5))
    assert_same(second, numpy_f(x, v, 6))

    results: dict[int, np.ndarray] = {}

    def call(k):
        for _ in range(20):
            results[k] = jitted(x, v, k)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(3, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, got in results.items():
        assert_same(got, numpy_f(x, v, k))

    def g(v, k):
        def body(i, acc):
            return acc.at[i].add(anp.sum(acc * v) + 1.0)
        return lax.fori_loop(0, k, body, anp.zeros(4))

    raising = arrjit.jit(g)
    (loop,) = _loops(raising, v, 3)
    assert loop.native is not None and loop.native.scratch()
    raising(v, 3)
    (spare,) = loop._spare
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        raising(v, 6)
    assert loop._spare == []                          # dropped with the failed run
    assert_same(raising(v, 2), np.array([1.0, 1.5, 0.0, 0.0]))
    assert len(loop._spare) == 1 and loop._spare[0] is not spare
