"""What real NumPy programs (ported by ``np`` -> ``anp``) need: the namespace pieces they use
and the patterns they are written in, each checked against NumPy."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from helpers import assert_same


def test_array_of_traced_values_stacks_them_as_numpy_array_would():
    x = np.arange(5.0)
    i = np.arange(5, dtype=np.int32)
    cases = [
        (lambda x: anp.array([x, x * 2]), lambda x: np.array([x, x * 2]), x),
        (lambda x: anp.array([x[0], 1.0, x[1]]), lambda x: np.array([x[0], 1.0, x[1]]), x),
        (lambda x: anp.array([[x[0], 2], [x[1], x[2]]]),          # int32 with a Python int
         lambda x: np.array([[x[0], 2], [x[1], x[2]]]), i),
        (lambda x: anp.asarray([x, x], dtype=np.float32),
         lambda x: np.asarray([x, x], dtype=np.float32), i),
        (lambda x: anp.array((x,), ndmin=3), lambda x: np.array((x,), ndmin=3), x),
    ]
    for fn, ref, arg in cases:
        assert_same(arrjit.jit(fn)(arg), ref(arg))
    with pytest.raises(ValueError, match=r"inhomogeneous shape.*\(2,\), \(5,\)"):
        arrjit.jit(lambda x: anp.array([x, x[:2]]))(x)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_average_matches_numpy(dtype):
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    w2, w1 = np.arange(1.0, 13.0).reshape(3, 4), np.array([1.0, 0.5, 2.0])

    def f(a, w2, w1):
        return (anp.average(a), anp.average(a, axis=1, keepdims=True),
                anp.average(a, weights=w2), anp.average(a, axis=0, weights=w1, returned=True),
                anp.average(a, axis=(0, 1), returned=True))

    got = arrjit.jit(f)(a, w2, w1)
    want = (np.average(a), np.average(a, axis=1, keepdims=True), np.average(a, weights=w2),
            np.average(a, axis=0, weights=w1, returned=True),
            np.average(a, axis=(0, 1), returned=True))
    for g, r in zip(got, want):
        for gi, ri in zip(g, r) if isinstance(r, tuple) else [(g, r)]:
            assert_same(gi, ri, rtol=1e-6 if dtype == "float32" else 1e-15)
    with pytest.raises(TypeError, match="axis must be specified"):
        arrjit.jit(lambda a, w: anp.average(a, weights=w))(a, w1)
    with pytest.raises(ValueError, match="length of weights 3 not compatible with axis 1"):
        arrjit.jit(lambda a, w: anp.average(a, axis=1, weights=w))(a, w1)


def test_ndindex_and_arange_inside_jit():
    x = np.arange(6.0).reshape(2, 3)

    def f(x):
        picked = anp.array([x[i] for i in anp.ndindex(2, 3)])
        ramp = anp.arange(6.0).at[0].set(10.0)        # a traced constant: it has .at
        return picked * ramp + anp.linspace(0.0, 1.0, 6)

    want = np.array([x[i] for i in np.ndindex(2, 3)]) * np.r_[10.0, 1:6] + np.linspace(0, 1, 6)
    assert_same(arrjit.jit(f)(x), want)


def _scatters_in_place(jitted, *args) -> dict[str, bool]:
    """Per scatter, by its mode and index: whether it updates its operand in place."""
    plan = jitted.lower(*args)._entry.rendered.plan
    return {f"{s.node.param['mode']} {s.node.param['index']}": s.in_place for s in plan.steps
            if getattr(s, "node", None) is not None and s.node.op.value == "scatter"}


def test_a_scatter_into_a_computed_value_nothing_else_reads_updates_it_in_place():
    x, v = np.arange(1000.0), np.arange(999.0) * 3

    def build(x, v):                      # the ported ``y = np.zeros(n); y[1:] = v`` pattern
        y = anp.zeros(x.shape).at[1:].set(v)
        return y.at[0].set(x[0] - 1), x.at[:2].add(1.0)

    jitted = arrjit.jit(build)
    # the updates of the zeros are stores into its buffer (tests/test_region_updates.py);
    # x.at[:2] is a copy: x is an argument
    assert _scatters_in_place(jitted, x, v) == {"add (('slice', None, 2, None),)": False}
    first, second = jitted(x, v)
    assert_same(first, np.r_[-1.0, v])
    assert_same(second, np.r_[1.0, 2.0, x[2:]])
    assert_same(x, np.arange(1000.0))     # the argument is untouched

    def still_read(x, v):                 # the old values are read afterwards
        y = x * 2.0
        return y.at[1:].set(v) + y

    def returned(x, v):                   # the old values are an output
        y = x * 2.0
        return y, y.at[1:].set(v)

    for fn in (still_read, returned):
        jitted = arrjit.jit(fn)
        assert list(_scatters_in_place(jitted, x, v).values()) == [False]
    assert_same(arrjit.jit(still_read)(x, v), np.r_[x[0] * 2, v] + x * 2)
    y, z = arrjit.jit(returned)(x, v)
    assert_same(y, x * 2.0)
    assert_same(z, np.r_[0.0, v])


def test_roll_is_an_index_map_fused_into_its_reader():
    from arrjit.backends.cpu.codegen import render_kernel

    x = np.arange(48.0).reshape(4, 12) ** 1.5

    def stencil(u):
        return anp.roll(u, 1, axis=0) + anp.roll(u, -1, axis=1) - 2 * u

    jitted = arrjit.jit(stencil)
    kernels = jitted.lower(x).kernels
    assert len(kernels) == 1 and len(kernels[0].reads) == 1     # no copies, one pass
    assert_same(jitted(x), np.roll(x, 1, axis=0) + np.roll(x, -1, axis=1) - 2 * x)
    # shifts and sizes are run-time parameters: one source for every size
    other = np.ones((7, 5))
    assert ([render_kernel(k).source for k in jitted.lower(other).kernels] ==
            [render_kernel(k).source for k in kernels])

    def composed(u):
        return (anp.roll(u[1:, ::-2], 2, axis=1),          # roll of a strided slice
                anp.roll(u, 3, axis=1)[:, 1::3],            # slice of a roll
                anp.roll(anp.roll(u, 5, axis=1), -7, axis=1).T,
                anp.roll(u, (1, -2), axis=(0, 1)), anp.roll(u, 13), anp.roll(u, 0),
                (anp.roll(u, 1, axis=1) * u).sum(axis=1),   # inside a row reduction
                anp.roll(u.reshape(2, 2, 12), 1, axis=1))

    want = (np.roll(x[1:, ::-2], 2, axis=1), np.roll(x, 3, axis=1)[:, 1::3],
            np.roll(np.roll(x, 5, axis=1), -7, axis=1).T, np.roll(x, (1, -2), axis=(0, 1)),
            np.roll(x, 13), x, (np.roll(x, 1, axis=1) * x).sum(axis=1),
            np.roll(x.reshape(2, 2, 12), 1, axis=1))
    for got, ref in zip(arrjit.jit(composed)(x), want):
        assert_same(got, ref, rtol=1e-14)
    ints = np.arange(10, dtype=np.int32)
    assert_same(arrjit.jit(lambda v: anp.roll(v, -23) * v)(ints), np.roll(ints, -23) * ints)
    empty = np.zeros((0, 3))
    assert_same(arrjit.jit(lambda v: anp.roll(v, 2, axis=0) + 1)(empty), empty + 1)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        arrjit.jit(lambda v: anp.roll(v, 1, axis=2))(x)


def test_roll_under_vmap_rolls_each_example():
    x = np.arange(24.0).reshape(4, 6)
    per_row = arrjit.vmap(lambda r: anp.roll(r, 2) * 2)
    assert_same(arrjit.jit(per_row)(x), np.roll(x, 2, axis=1) * 2)


def test_a_donated_buffer_is_not_overwritten_by_its_own_roll():
    x = np.arange(6.0)
    with pytest.warns(arrjit.errors.DonationWarning, match="shifted|different index"):
        out = arrjit.jit(lambda v: anp.roll(v, 1) + 1, donate_argnums=0)(x.copy())
    assert_same(out, np.roll(x, 1) + 1)
