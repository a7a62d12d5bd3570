"""lax.dynamic_slice and its family against JAX's own functions (the oracle for clamping and
negative starts), inside and outside jit, in loops, under vmap and grad."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from helpers import assert_same

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jlax = jax.lax

X = np.arange(30.0).reshape(5, 6)
STARTS = [(0, 0), (2, 3), (-1, -2), (4, 5), (9, -9), (-7, 1)]


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("sizes", [(2, 3), (5, 1), (1, 6), (0, 2)])
def test_dynamic_slice_clamps_like_jax_for_known_and_traced_starts(start, sizes):
    want = np.asarray(jlax.dynamic_slice(X, start, sizes))
    assert_same(lax.dynamic_slice(X, start, sizes), want)
    traced_both = arrjit.jit(lambda x, i, j: lax.dynamic_slice(x, (i, j), sizes))
    assert_same(traced_both(X, *start), want)
    traced_one = arrjit.jit(lambda x, j: lax.dynamic_slice(x, (start[0], j), sizes))
    assert_same(traced_one(X, start[1]), want)
    as_array = arrjit.jit(lambda x, s: lax.dynamic_slice(x, s, sizes))
    assert_same(as_array(X, np.array(start)), want)


@pytest.mark.parametrize("start", STARTS)
def test_dynamic_update_slice_clamps_like_jax(start):
    update = -np.arange(6.0).reshape(2, 3)
    want = np.asarray(jlax.dynamic_update_slice(X, update, start))
    assert_same(lax.dynamic_update_slice(X, update, start), want)
    f = arrjit.jit(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)))
    assert_same(f(X, update, *start), want)
    g = arrjit.jit(lambda x, u, j: lax.dynamic_update_slice(x, u, (start[0], j)))
    assert_same(g(X, update, start[1]), want)


@pytest.mark.parametrize("index", [0, 3, -1, -5, 7, -9])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_the_in_dim_forms_match_jax(index, axis):
    for keepdims in (True, False):
        want = np.asarray(jlax.dynamic_index_in_dim(X, index, axis, keepdims))
        f = arrjit.jit(lambda x, i: lax.dynamic_index_in_dim(x, i, axis, keepdims))
        assert_same(f(X, index), want)
    want = np.asarray(jlax.dynamic_slice_in_dim(X, index, 2, axis))
    assert_same(arrjit.jit(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis))(X, index), want)
    row = np.full(X.shape[1 - axis % 2], -1.0)
    want = np.asarray(jlax.dynamic_update_index_in_dim(X, row, index, axis))
    f = arrjit.jit(lambda x, r, i: lax.dynamic_update_index_in_dim(x, r, i, axis))
    assert_same(f(X, row, index), want)
    assert_same(f(X, np.expand_dims(row, axis), index), want)
    block = -np.ones((2, 6) if axis == 0 else (5, 2))
    want = np.asarray(jlax.dynamic_update_slice_in_dim(X, block, index, axis))
    f = arrjit.jit(lambda x, b, i: lax.dynamic_update_slice_in_dim(x, b, i, axis))
    assert_same(f(X, block, index), want)


def test_a_gauss_seidel_sweep_in_a_fori_loop_matches_the_numpy_loop():
    """Each row is relaxed with the rows above already updated: a window read and a row
    written back at the loop's position."""
    rng = np.random.default_rng(0)
    u0, f = rng.random((12, 9)), rng.random((12, 9))

    def sweep(u, f):
        def row(i, u):
            window = lax.dynamic_slice(u, (i - 1, 0), (3, 9))
            new = 0.25 * (window[0, 1:-1] + window[2, 1:-1] + window[1, :-2] + window[1, 2:]
                          - f[i, 1:-1])
            line = lax.dynamic_index_in_dim(u, i, 0, keepdims=False)
            return lax.dynamic_update_index_in_dim(u, line.at[1:-1].set(new), i, 0)
        return lax.fori_loop(1, u.shape[0] - 1, row, u)

    want = u0.copy()
    for i in range(1, 11):
        want[i, 1:-1] = 0.25 * (want[i - 1, 1:-1] + want[i + 1, 1:-1] + want[i, :-2]
                                + want[i, 2:] - f[i, 1:-1])
    np.testing.assert_allclose(arrjit.jit(sweep)(u0, f), want, rtol=1e-14)


def test_vmap_over_starts_and_grad_through_slices_match_jax():
    x = np.linspace(0.0, 1.0, 10)
    starts = np.array([0, 3, 8, -2])
    got = arrjit.jit(arrjit.vmap(lambda s: lax.dynamic_slice(x, (s,), (3,))))(starts)
    want = jax.vmap(lambda s: jlax.dynamic_slice(x, (s,), (3,)))(starts)
    assert_same(got, np.asarray(want))

    def loss(ns, x, u, i):
        y = ns.dynamic_update_slice(x, u * u, (i,))
        return (ns.dynamic_slice(y, (i - 1,), (4,)) ** 3).sum()

    u = np.array([0.5, -1.5])
    for i in (0, 4, 9):
        got = arrjit.grad(loss, argnums=(1, 2))(lax, x, u, i)
        want = jax.grad(loss, argnums=(1, 2))(jlax, x, u, i)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-13, atol=1e-15)


def test_bad_arguments_name_the_argument_and_the_fix():
    with pytest.raises(TypeError, match=r"1 start indices for an operand of 2 dimensions"):
        lax.dynamic_slice(X, (1,), (2, 2))
    with pytest.raises(TypeError, match=r"slice_sizes \(6, 2\).*shape is \(5, 6\)"):
        lax.dynamic_slice(X, (0, 0), (6, 2))
    with pytest.raises(TypeError, match=r"start index for axis 1 must be an integer"):
        arrjit.jit(lambda x, j: lax.dynamic_slice(x, (0, j), (2, 2)))(X, 1.5)
    with pytest.raises(TypeError, match=r"operand's rank and dtype.*astype"):
        lax.dynamic_update_slice(X, np.ones((2, 2), np.float32), (0, 0))
    with pytest.raises(ValueError, match=r"axis 2 is out of range"):
        lax.dynamic_index_in_dim(X, 0, axis=2)


@pytest.mark.parametrize("shift", [0, 1, -1, 5, -9])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_roll_by_a_traced_shift_matches_numpy(shift, axis):
    got = arrjit.jit(lambda x, s: anp.roll(x, s, axis=axis))(X, shift)
    assert_same(got, np.roll(X, shift, axis=axis))


def test_roll_by_a_traced_shift_in_a_loop_and_with_several_axes():
    x = np.arange(4.0)
    f = arrjit.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v + anp.roll(x, i),
                                           anp.zeros(4)))
    assert_same(f(x), sum(np.roll(x, i) for i in range(3)))
    g = arrjit.jit(lambda x, s: anp.roll(x, (s, 2), axis=(0, 1)))
    assert_same(g(X, 1), np.roll(X, (1, 2), axis=(0, 1)))
    with pytest.raises(TypeError, match=r"roll: shift must be an integer scalar.*float64"):
        arrjit.jit(lambda x, s: anp.roll(x, s))(X, 1.5)
