"""Small values of a native loop live in registers: a 0-d value as a scalar, an array of up to
``REGISTER_ELEMENTS`` elements as the tuple of its elements. Values against NumPy run step by
step, and the structure: which kernels a driver calls in their register form."""
import numpy as np
import pytest

import arrjit.numpy as anp
from arrjit import jit, lax
from arrjit.backends.cpu import registers
from arrjit.backends.cpu.loops import LoopRun

from helpers import assert_same


def _loop(f, *args) -> LoopRun:
    (loop,) = [s for s in f.lower(*args)._entry.rendered.runs if isinstance(s, LoopRun)]
    assert loop.native is not None
    return loop


def _lorenz_rates(ns, v):
    x, y, z = v[0], v[1], v[2]
    return ns.stack([10.0 * (y - x), x * (28.0 - z) - y, x * y - (8.0 / 3.0) * z])


def _rk4_scan(ns, scan, start, steps, dt):
    def step(v, _):
        k1 = _lorenz_rates(ns, v)
        k2 = _lorenz_rates(ns, v + 0.5 * dt * k1)
        k3 = _lorenz_rates(ns, v + 0.5 * dt * k2)
        k4 = _lorenz_rates(ns, v + dt * k3)
        nxt = v + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return nxt, nxt
    return scan(step, start, None, steps)


def _numpy_scan(step, carry, steps):
    ys = []
    for _ in range(steps):
        carry, y = step(carry, None)
        ys.append(y)
    return carry, np.stack(ys)


def test_an_ode_state_vector_stays_in_registers_and_matches_numpy():
    start = np.array([1.0, 1.0, 1.0])
    f = jit(lambda s: _rk4_scan(anp, lax.scan, s, 300, 0.005))
    loop = _loop(f, start)
    # the condition, the counter and the whole RK4 step in registers; the stacked output
    # is the one array call (a row stored at the step's position)
    assert len(loop.native.extra.register_kernels) == 3
    assert loop.native.extra.array_calls == 1
    # their statements and the row store's are the driver's own: no function for numba to
    # compile on its own
    assert loop.native.extra.functions == {}
    final, path = f(start)
    want_final, want_path = _rk4_scan(
        np, lambda step, c, _, n: _numpy_scan(step, c, n), start, 300, 0.005)
    assert_same(final, want_final, rtol=1e-12)
    assert_same(path, want_path, rtol=1e-12)


def _register_sources(loop: LoopRun) -> list[str]:
    return [code.function().source for code in loop.native.extra.register_kernels]


def test_a_stack_of_scalars_in_registers_renders_its_pieces_without_selects():
    """``stack`` of scalars is a select over the element index; unrolled, each element's
    index is a literal, so the selects (and the comparisons choosing them) fold away and
    each element is its piece. A select on a run-time condition stays."""
    start = np.array([1.0, 1.0, 1.0])
    f = jit(lambda s: _rk4_scan(anp, lax.scan, s, 20, 0.005))
    (step,) = [src for src in _register_sources(_loop(f, start)) if "(r0, r1, P)" in src]
    assert "_M.select" not in step and "==" not in step
    g = jit(lambda s: lax.fori_loop(0, 5, lambda i, v: anp.stack(
        [anp.where(v[1] > 0, v[0], -v[0]), v[2] - 1.0, v[1] * 0.5]), s))
    assert any("_M.select" in src for src in _register_sources(_loop(g, start)))
    want = start.copy()
    for _ in range(5):
        want = np.stack([np.where(want[1] > 0, want[0], -want[0]), want[2] - 1.0,
                         want[1] * 0.5])
    assert_same(g(start), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.complex128, np.bool_])
def test_small_carries_of_every_dtype_and_shape_match_numpy(dtype):
    """A 2x2 and a 4-element carry of each dtype: NumPy's casts after every step."""
    m = np.array([[1, 0], [1, 1]]).astype(dtype)
    v = np.array([3, 1, 2, 0]).astype(dtype)

    def body(ns, i, carry):
        m, v = carry
        if m.dtype == np.bool_:
            return ns.logical_xor(m, m.T), ns.logical_not(v[::-1])
        return (m * 3 + m.T).astype(m.dtype), (v[::-1] * 2 + v).astype(v.dtype)

    f = jit(lambda m, v: lax.fori_loop(0, 5, lambda i, c: body(anp, i, c), (m, v)))
    loop = _loop(f, m, v)
    assert loop.native.extra.array_calls == 0
    want = (m, v)
    with np.errstate(over="ignore"):
        for i in range(5):
            want = body(np, i, want)
        got = f(m, v)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])


def test_a_traced_position_into_a_small_vector_reads_its_register():
    def body(i, carry):
        v, total = carry
        return v * 2.0, total + v[i % 3] + v[-1 - i % 2]

    f = jit(lambda v: lax.fori_loop(0, 7, body, (v, 0.0)))
    v = np.array([1.0, -2.0, 0.5])
    loop = _loop(f, v)
    assert loop.native.extra.array_calls == 0
    want_v, want_t = v.copy(), 0.0
    for i in range(7):
        want_v, want_t = want_v * 2.0, want_t + want_v[i % 3] + want_v[-1 - i % 2]
    got_v, got_t = f(v)
    assert_same(got_v, want_v)
    assert_same(got_t, np.float64(want_t))


def test_a_position_out_of_range_of_a_small_vector_raises_numpys_index_error():
    f = jit(lambda v: lax.fori_loop(0, 4, lambda i, t: t + v[i], 0.0))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        f(np.array([1.0, 2.0, 3.0]))
    # the same compiled driver answers correctly afterwards
    assert_same(f(np.arange(4.0)), np.float64(6.0))


@pytest.mark.parametrize("shift, axis", [(0, None), (2, None), (-7, 0), (9, 1)])
def test_positions_checked_together_raise_numpys_error_for_the_first_outside(shift, axis):
    """A point sweep reads four neighbours at traced positions: the driver's register kernel
    tests every position at once, before its first read, with one call raising the error of
    the first position outside its axis, as NumPy's indexing does in the same order."""
    grid = np.arange(20.0).reshape(4, 5)

    def sweep(u, s):
        def point(j, u):
            i = j % 2 + 1 + s * (j == 2) * (s < 0)
            k = j + s * (j == 3) * (s > 4)
            return u.at[1, j].set(u[i - 1, j] + u[i + 1, j] + u[i, k - 1] - u[i, k + 1])
        return lax.fori_loop(1, 4, point, u)

    f = jit(sweep)
    (checked,) = [src for src in _register_sources(_loop(f, grid, shift))
                  if "_M.first_out_of_bounds" in src]
    assert checked.count("_M.first_out_of_bounds") == 1 and "out_of_bounds(" not in \
        checked.replace("first_out_of_bounds(", "")

    def numpy_sweep(u, s):
        u = u.copy()
        for j in range(1, 4):
            i = j % 2 + 1 + s * (j == 2) * (s < 0)
            k = j + s * (j == 3) * (s > 4)
            u[1, j] = u[i - 1, j] + u[i + 1, j] + u[i, k - 1] - u[i, k + 1]
        return u

    if axis is None:
        assert_same(f(grid, shift), numpy_sweep(grid, shift))
        return
    with pytest.raises(IndexError) as ours:
        f(grid, shift)
    with pytest.raises(IndexError) as numpys:
        numpy_sweep(grid, shift)
    assert str(ours.value) == str(numpys.value)
    assert f"axis {axis}" in str(ours.value)


def test_a_region_update_of_a_small_carry_reads_the_elements_it_keeps():
    def body(i, acc):
        t = (acc * 0.5).at[1:].add(acc[:-1])
        return t.at[0].set(i * 1.0)

    f = jit(lambda x: lax.fori_loop(0, 5, body, x))
    want = np.arange(6.0)
    for i in range(5):
        t = want * 0.5
        t[1:] += want[:-1]
        t[0] = i
        want = t
    assert_same(f(np.arange(6.0)), want)


def test_nested_loops_hand_small_carries_across_and_update_them_in_place():
    """The inner loop sets one element of the outer loop's 4-vector per step (its buffer is
    handed over) and also carries a 2-vector copied in and out."""
    def outer(i, carry):
        v, w = carry

        def inner(j, c):
            v, w = c
            return v.at[j].set(v[j] + w[0] * (i + 1)), w[::-1] + 1.0
        return lax.fori_loop(0, 4, inner, (v * 0.5, w))

    f = jit(lambda v, w: lax.fori_loop(0, 3, outer, (v, w)))
    v, w = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.25, -1.0])
    _loop(f, v, w)
    want_v, want_w = v.copy(), w.copy()
    for i in range(3):
        want_v = want_v * 0.5
        for j in range(4):
            want_v = want_v.copy()
            want_v[j] = want_v[j] + want_w[0] * (i + 1)
            want_w = want_w[::-1] + 1.0
    got_v, got_w = f(v, w)
    assert_same(got_v, want_v)
    assert_same(got_w, want_w)


def test_larger_values_stay_in_buffers():
    big = np.zeros(registers.REGISTER_ELEMENTS + 1)
    f = jit(lambda x: lax.fori_loop(0, 3, lambda i, x: x * 2.0 + 1.0, x))
    loop = _loop(f, big)
    assert len(loop.native.extra.register_kernels) == 2     # the condition and the counter
    assert loop.native.extra.array_calls == 1
    assert_same(f(big), np.full(big.shape, 7.0))


def test_empty_and_single_element_carries():
    f = jit(lambda x, y, z: lax.fori_loop(
        0, 3, lambda i, c: (c[0] * 2.0, c[1] + 1.0, c[2] * 3), (x, y, z)))
    x, y, z = np.zeros((0, 2)), np.ones(1), np.array([[2]], np.int32)
    _loop(f, x, y, z)
    got = f(x, y, z)
    assert_same(got[0], x)
    assert_same(got[1], np.full(1, 4.0))
    assert_same(got[2], np.array([[54]], np.int32))
