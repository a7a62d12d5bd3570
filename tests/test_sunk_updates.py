"""An update that is no select (a ``dynamic_update_slice`` window, a static slice) and whose
result one elementwise step alone reads moves below that step (``passes.updates_sunk``): the
step fuses with what computes the updated value, and the update stores its region into the
step's result. Values against NumPy written by hand; structure on the lowered graph and the
plan's kernels."""
import numpy as np
import pytest

import arrjit.numpy as anp
from arrjit import jit, lax
from arrjit.core.ir import Op
from arrjit.passes.simplify import simplify
from arrjit.passes.updates import updates_sunk

from helpers import assert_same


def _kernels_over(f, elements, *args):
    """How many of the plan's kernels loop over ``elements`` elements."""
    return sum(k.elements == elements for k in f.lower(*args)._entry.plan.kernels)


def _clamped(i, n, size):
    """``dynamic_update_slice``'s start on an axis of ``n``: counted from the end when
    negative, then clamped so the window fits."""
    i = i + n if i < 0 else i
    return min(max(i, 0), n - size)


def _window_numpy(x, u, i, j, then):
    y = x * 2.0
    a, b = _clamped(i, x.shape[0], u.shape[0]), _clamped(j, x.shape[1], u.shape[1])
    y[a:a + u.shape[0], b:b + u.shape[1]] = u
    return then(y)


@pytest.mark.parametrize("i, j", [(0, 0), (5, 7), (-3, 2), (95, 98), (400, -400)])
def test_a_window_moves_below_the_step_that_reads_it(i, j):
    def program(x, u, i, j):
        return lax.dynamic_update_slice(x * 2.0, u, (i, j)) - 1.0

    f = jit(program)
    rng = np.random.default_rng(0)
    x, u = rng.random((100, 60)), rng.random((4, 8))
    args = (x, u, np.int64(i), np.int64(j))
    assert_same(f(*args), _window_numpy(x, u, i, j, lambda y: y - 1.0))
    assert _kernels_over(f, x.size, *args) == 1      # x * 2 - 1 in one pass, then the window
    nodes = updates_sunk(simplify(f.lower(*args).graph)).nodes
    assert nodes[-1].op is Op.SCATTER
    assert {n.op for n in nodes if n.out is nodes[-1].inputs[0]} == {Op.SUB}


def test_a_chain_of_steps_with_scalars_moves_below_them_all():
    def program(x, u, i, s):
        return anp.exp(lax.dynamic_update_slice(x * 2.0, u, (i, i)) * s) + 0.5

    f = jit(program)
    rng = np.random.default_rng(1)
    x, u, s = rng.random((50, 40)), rng.random((3, 5)), np.float64(0.25)
    for i in (0, 17, 49):
        got = f(x, u, np.int64(i), s)
        want = _window_numpy(x, u, i, i, lambda w: np.exp(w * s) + 0.5)
        assert_same(got, want, rtol=1e-15)
    assert _kernels_over(f, x.size, x, u, np.int64(3), s) == 1


def test_static_slices_cast_and_broadcast_their_update():
    def program(x):
        return (x * 2.0).at[1:4, ::3].set(7) / 4.0

    f = jit(program)
    x = np.arange(30.0).reshape(5, 6)
    want = x * 2.0
    want[1:4, ::3] = 7
    assert_same(f(x), want / 4.0)
    assert f(x).dtype == np.float64


def test_a_result_read_twice_returned_added_to_or_read_with_an_array_stays_put():
    rng = np.random.default_rng(2)
    x, u = rng.random((20, 30)), rng.random((2, 3))

    def twice(x, u, i):
        y = lax.dynamic_update_slice(x * 2.0, u, (i, i))
        return y - 1.0, y * 3.0

    def returned(x, u, i):
        y = lax.dynamic_update_slice(x * 2.0, u, (i, i))
        return y, y - 1.0

    def added(x, idx, v):
        return (x * 2.0).at[idx].add(v) - 1.0

    def with_array(x, u, i):      # x would be read again in the window, after the step
        return lax.dynamic_update_slice(x * 2.0, u, (i, i)) * x

    graph = simplify(jit(with_array).lower(x, u, np.int64(4)).graph)
    assert updates_sunk(graph) is graph
    assert_same(jit(with_array)(x, u, np.int64(4)), _window_numpy(x, u, 4, 4, lambda w: w * x))
    for program in (twice, returned):
        graph = simplify(jit(program).lower(x, u, np.int64(4)).graph)
        assert updates_sunk(graph) is graph
        got = jit(program)(x, u, np.int64(4))
        y = _window_numpy(x, u, 4, 4, lambda w: w)
        want = (y - 1.0, y * 3.0) if program is twice else (y, y - 1.0)
        for g, w in zip(got, want):
            assert_same(g, w)
    idx, v = np.array([1, 3, 1]), rng.random((3, 30))
    graph = simplify(jit(added).lower(x, idx, v).graph)
    assert updates_sunk(graph) is graph
    want = x * 2.0
    np.add.at(want, idx, v)
    assert_same(jit(added)(x, idx, v), want - 1.0)


def test_repeated_positions_keep_the_last_update():
    def program(x, idx, v):
        return (x * 2.0).at[idx].set(v) + 1.0

    x, idx, v = np.zeros((6, 3)), np.array([4, 1, 4]), np.arange(9.0).reshape(3, 3)
    want = x * 2.0
    want[idx] = v
    assert_same(jit(program)(x, idx, v), want + 1.0)
