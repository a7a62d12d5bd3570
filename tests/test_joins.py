"""Stacks and joins of unit slices fuse: ``anp.array([a, b, c])``, ``stack`` and
``concatenate`` of one-element-thick pieces are selects inside their consumers' loop, not
kernel boundaries; a known index keeps only the piece it selects."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import arrjit
import arrjit.numpy as anp
from arrjit.core.ir import Op
from arrjit.passes.joins import MAX_SELECT_PIECES
from arrjit.passes.kernel import Compute, Kernel

from helpers import assert_same


def lowered(fn, *args):
    return arrjit.jit(fn).lower(*args)


def lorenz_steps(xp, y, steps):
    """Euler steps of the Lorenz system, its state stacked from three scalars each step."""
    for _ in range(steps):
        x, v, z = y[0], y[1], y[2]
        y = y + 0.01 * xp.array([10.0 * (v - x), x * (28.0 - z) - v, x * v - 8.0 / 3.0 * z])
    return y


def test_a_stack_of_scalars_fuses_with_its_producers_and_consumers():
    y = np.array([1.0, 2.0, 3.0])
    low = lowered(lambda y: lorenz_steps(anp, y, 4), y)
    assert len(low.kernels) == 1
    assert all(isinstance(k, Kernel) for k in low.kernels)
    assert_same(arrjit.jit(lambda y: lorenz_steps(anp, y, 4))(y), lorenz_steps(np, y, 4))


def test_reading_a_stacked_value_at_a_known_index_keeps_only_that_piece():
    """``y[1]`` of a stack computes piece 1 alone: no select is left in the kernel."""
    a, b = np.float64(2.0), np.float64(5.0)

    def second(a, b):
        return anp.stack([anp.exp(a), anp.sin(b), a * b])[1] + 1.0

    (kernel,) = lowered(second, a, b).kernels
    ops = [s.op for s in kernel.stmts if isinstance(s, Compute)]
    assert Op.SELECT not in ops and Op.EXP not in ops and Op.EQ not in ops
    assert_same(arrjit.jit(second)(a, b), np.sin(b) + 1.0)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_stack_along_each_axis_matches_numpy(axis, dtype):
    rng = np.random.default_rng(0)
    parts = [(rng.standard_normal((4, 5)) * 3).astype(dtype) for _ in range(3)]

    def f(p, q, r):
        return anp.stack([p, q, r], axis=axis) * 2

    out = arrjit.jit(f)(*parts)
    assert out.dtype == (np.stack(parts, axis=axis) * 2).dtype
    assert_same(out, np.stack(parts, axis=axis) * 2)
    assert len(lowered(f, *parts).kernels) == 1


def test_concatenate_of_unit_slices_with_mixed_dtypes_promotes_as_numpy():
    a = np.arange(6, dtype=np.int32).reshape(1, 6)
    b = np.linspace(0, 1, 6, dtype=np.float32).reshape(1, 6)
    f = arrjit.jit(lambda a, b: anp.concatenate([a, b, a + 1], axis=0))
    expected = np.concatenate([a, b, a + 1], axis=0)
    assert f(a, b).dtype == expected.dtype
    assert_same(f(a, b), expected)


def test_a_costly_piece_is_computed_once_per_element():
    """exp of each piece is stored by its own kernel, not recomputed under the broadcast."""
    x, y = np.random.rand(1000), np.random.rand(1000)

    def f(x, y):
        return anp.stack([anp.exp(x), anp.exp(y)], axis=1).sum(axis=1)

    low = lowered(f, x, y)
    exps = [s for k in low.kernels for s in k.stmts
            if isinstance(s, Compute) and s.op is Op.EXP]
    assert len(exps) == 2
    assert_same(arrjit.jit(f)(x, y), np.exp(x) + np.exp(y))


def test_a_long_join_of_unit_pieces_stores_each_into_its_element():
    """More unit pieces than selects take: region stores of one element each, in one nest."""
    many = np.random.rand(MAX_SELECT_PIECES + 1)

    def long_join(v):
        return anp.stack([anp.sin(v[k]) for k in range(MAX_SELECT_PIECES + 1)]) * 2

    low = lowered(long_join, many)
    assert "concatenate" not in low.as_text()
    stores = [len(k.stores) for k in low.kernels]
    assert max(stores) == MAX_SELECT_PIECES + 1
    assert_same(arrjit.jit(long_join)(many), np.sin(many) * 2)


def _library_ops(low) -> list[Op]:
    return [s.node.op for s in low._entry.plan.steps if hasattr(s, "node")]


def same_bits(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    assert got.tobytes() == want.tobytes()


def test_a_join_of_thick_pieces_stores_each_piece_into_its_slice():
    """``concatenate([x, repeat(x, 20)])``: two loop nests, each reading ``x`` and storing
    straight into the result (the repeat's merged broadcast axis is the result's run in the
    piece's own shape); no library call, no buffer but the result's."""
    x = np.random.default_rng(0).random(1000)
    f = lambda v: anp.concatenate([v, anp.repeat(v, 20)])  # noqa: E731
    low = lowered(f, x)
    assert _library_ops(low) == []
    assert sorted(k.sizes for k in low.kernels) == [(1000,), (1000, 20)]
    assert all(len(k.writes) == 1 and k.writes[0].shape == (21000,) for k in low.kernels)
    assert all(k.reads == low.graph.inputs for k in low.kernels)
    same_bits(arrjit.jit(f)(x), np.concatenate([x, np.repeat(x, 20)]))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "complex128", "bool"])
def test_joins_of_computed_pieces_along_each_axis_match_numpy(dtype):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((4, 6)) * 4).astype(dtype)
    b = (rng.standard_normal((3, 6)) * 4).astype(dtype)
    c = (rng.standard_normal((4, 2)) * 4).astype(dtype)

    def joins(ns, a, b, c):
        rows = ns.concatenate([a * 2, ns.zeros((0, 6), a.dtype), b[::-1], a[:1]], axis=0)
        cols = ns.concatenate([a, c, a[:, :1]], axis=1)
        return rows + 1, cols * 3, ns.concatenate([a, c], axis=-1)

    got, want = arrjit.jit(lambda *v: joins(anp, *v))(a, b, c), joins(np, a, b, c)
    for g, w in zip(got, want):
        same_bits(g, w)
    assert Op.CONCATENATE not in _library_ops(lowered(lambda *v: joins(anp, *v), a, b, c))


def test_a_join_of_pieces_of_other_dtypes_is_numpys():
    a, b = np.arange(5, dtype=np.int32), np.linspace(0, 1, 3)
    same_bits(arrjit.jit(lambda u, v: anp.concatenate([u, v]))(a, b), np.concatenate([a, b]))


def test_joins_in_loops_under_grad_and_vmap():
    x = np.random.default_rng(2).random(8)

    def grow(x):
        def step(i, u):
            return anp.concatenate([u[1:], u[:1] * 0.5])
        return arrjit.lax.fori_loop(0, 5, step, x)

    want = x.copy()
    for _ in range(5):
        want = np.concatenate([want[1:], want[:1] * 0.5])
    same_bits(arrjit.jit(grow)(x), want)
    g = arrjit.jit(arrjit.grad(lambda v: anp.sum(anp.concatenate([v, v * v]) ** 2)))
    np.testing.assert_allclose(g(x), 2 * x + 4 * x ** 3, rtol=1e-12)
    batched = arrjit.jit(arrjit.vmap(lambda v: anp.concatenate([v, anp.repeat(v, 3)])))
    xs = np.random.default_rng(3).random((4, 5))
    same_bits(batched(xs), np.stack([np.concatenate([r, np.repeat(r, 3)]) for r in xs]))


def test_stacks_under_grad_and_vmap_match_numpy():
    def energy(y):
        return anp.sum(lorenz_steps(anp, y, 3) ** 2)

    y = np.array([1.0, 2.0, 3.0])
    eps, grad = 1e-6, arrjit.jit(arrjit.grad(energy))(y)
    numeric = [(energy(y + eps * e) - energy(y - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)
    batch = np.random.default_rng(1).standard_normal((5, 3))
    stepped = arrjit.jit(arrjit.vmap(lambda y: lorenz_steps(anp, y, 3)))(batch)
    assert_same(stepped, np.stack([lorenz_steps(np, row, 3) for row in batch]))


def test_a_stack_inside_a_loop_body_runs_natively():
    def integrate(y):
        return arrjit.lax.fori_loop(0, 50, lambda i, y: lorenz_steps(anp, y, 1), y)

    y = np.array([1.0, 2.0, 3.0])
    f = arrjit.jit(integrate)
    assert_same(f(y), lorenz_steps(np, y, 50))
    assert [r.startswith("natively") for r in f.lower(y).loops] == [True]


def test_a_reshaped_stack_of_broadcasts_is_one_kernel():
    """Points of a grid, one per row: the stack is stored once by the kernel that computes it
    and the reshape is a view of it (its broadcast pieces were each stored before)."""
    axis = np.linspace(0, 1, 40)

    def grid(xp, axis):
        n = axis.shape[0]
        xs, ys = xp.broadcast_to(axis[:, None], (n, n)), xp.broadcast_to(axis[None, :], (n, n))
        return xp.stack([xs, ys, xp.zeros((n, n))], axis=-1).reshape(n * n, 3)

    f = arrjit.jit(lambda a: grid(anp, a))
    (kernel,) = lowered(lambda a: grid(anp, a), axis).kernels
    assert len(kernel.writes) == 1
    assert_same(f(axis), grid(np, axis))


def _written_slots(low) -> set[int]:
    """The buffers the kernels of a lowered program write."""
    plan = low._entry.rendered.plan
    return {slot for step in plan.steps
            for slot in step.slots[:len(step.kernel.writes)]}


def _compiled_calls(low) -> list:
    """The kernel calls of a lowered program that compile a module (not NumPy fills)."""
    return [c for run in low._entry.rendered.runs for c in getattr(run, "calls", [])
            if not c.filled]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128", "bool"])
@pytest.mark.parametrize("widths, value", [(1, 0), (((1, 2), (3, 0)), 5), (((0, 0), (2, 1)), 0)])
def test_a_pad_stores_its_pieces_into_the_result_and_compiles_only_the_interior(
        dtype, widths, value):
    """``pad`` of two axes joins rows, then columns: the inner join is not built on its own
    (no loop nest copies it into the result), the interior is computed in place and the
    border is assigned by NumPy, not compiled; values are NumPy's bit for bit."""
    x = (np.random.default_rng(2).standard_normal((6, 5)) * 4).astype(dtype)
    value = np.array(value).astype(dtype).item()

    def f(ns, x):
        return ns.pad(x * 2 if dtype != "bool" else ~x, widths, constant_values=value)

    low = lowered(lambda x: f(anp, x), x)
    assert _written_slots(low) == {low._entry.rendered.plan.outputs[0].slot}
    assert [c.kernel.reads for c in _compiled_calls(low)] == [low.graph.inputs]
    same_bits(arrjit.jit(lambda x: f(anp, x))(x), f(np, x))


def test_nested_joins_place_their_pieces_along_every_axis():
    """Joins of joins, three levels deep and along both axes, with empty pieces: one result
    buffer, NumPy's values; a join also used on its own is still built."""
    rng = np.random.default_rng(3)
    a, b, c = rng.random((2, 3)), rng.random((2, 4)), rng.random((5, 7))

    def f(ns, a, b, c):
        row = ns.concatenate([a, ns.zeros((2, 0)), b * 3], axis=1)
        pair = ns.concatenate([c[:2] * 2, ns.concatenate([a[::-1], b], axis=1)], axis=0)
        return ns.concatenate([row, pair, c - 1], axis=0)

    def g(ns, a, b, c):
        row = ns.concatenate([a, b], axis=1)
        return ns.concatenate([row, row + 1], axis=0), row

    low = lowered(lambda *v: f(anp, *v), a, b, c)
    assert _written_slots(low) == {low._entry.rendered.plan.outputs[0].slot}
    same_bits(arrjit.jit(lambda *v: f(anp, *v))(a, b, c), f(np, a, b, c))
    for got, want in zip(arrjit.jit(lambda *v: g(anp, *v))(a, b, c), g(np, a, b, c)):
        same_bits(got, want)


def test_unrolled_padded_stencil_steps_compile_one_kernel():
    """Eight explicit heat-equation steps that pad their interior each step: one compiled
    kernel (the stencil, shared by the steps), the borders assigned by NumPy."""
    u = np.random.default_rng(4).random((40, 30))

    def steps(ns, u):
        for _ in range(8):
            lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
            u = ns.pad(u[1:-1, 1:-1] + 0.1 * lap, 1)
        return u

    low = lowered(lambda u: steps(anp, u), u)
    calls = _compiled_calls(low)
    assert len(calls) == 8 and len({c.rendered.source for c in calls}) == 1
    same_bits(arrjit.jit(lambda u: steps(anp, u))(u), steps(np, u))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_a_join_that_copies_its_ends_assigns_them_with_numpy(dtype):
    """Leapfrog steps of a wave with fixed ends, ``concatenate([u[:1], inner, u[-1:]])``:
    the kernel copying the two ends is NumPy's assignment, not compiled; one compiled kernel
    (the interior, shared by the steps); NumPy's values."""
    from arrjit.backends.cpu.steps import Assignments

    rng = np.random.default_rng(5)
    u0, before0 = ((rng.random(50) * 8).astype(dtype) for _ in range(2))

    def steps(ns, u, before):
        for _ in range(6):
            inner = 2 * u[1:-1] - before[1:-1] + (u[2:] - 2 * u[1:-1] + u[:-2]) // 4 \
                if dtype == "int64" else \
                2 * u[1:-1] - before[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
            u, before = ns.concatenate([u[:1], inner.astype(dtype), u[-1:]]), u
        return u

    low = lowered(lambda *v: steps(anp, *v), u0, before0)
    calls = [c for run in low._entry.rendered.runs for c in getattr(run, "calls", [])]
    assert sum(isinstance(c.entry, Assignments) for c in calls) == 6
    assert len({c.rendered.source for c in _compiled_calls(low)}) == 1
    same_bits(arrjit.jit(lambda *v: steps(anp, *v))(u0, before0), steps(np, u0, before0))


@st.composite
def _pad_programs(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(["float64", "float32", "int32", "bool", "complex128"]))
    widths = tuple(tuple(draw(st.lists(st.integers(0, 2), min_size=2, max_size=2)))
                   for _ in range(ndim))
    axis = draw(st.integers(0, ndim - 1))
    start = draw(st.integers(0, shape[axis] - 1))
    return (shape, dtype, widths, draw(st.integers(-2, 2)),
            draw(st.sampled_from(["constant", "edge"])), axis,
            (slice(None),) * axis + (slice(start, None, draw(st.sampled_from([1, 2]))),),
            draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=int(os.environ.get("ARRJIT_TEST_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_pad_programs())
def test_pads_joins_of_joins_and_constant_sets_match_numpy(program):
    """Random pads (constant or edge, any widths), joins of joins along an axis and
    constants set into strided regions of a padded value: NumPy's bytes."""
    shape, dtype, widths, value, mode, axis, piece, seed = program
    x = (np.random.default_rng(seed).standard_normal(shape) * 5).astype(dtype)
    value = np.array(value).astype(dtype).item()
    every_other = (slice(1, None, 2),) * len(shape)

    def f(ns, x):
        y = ~x if dtype == "bool" else x + x
        padded = ns.pad(y, widths, mode=mode,
                        **({"constant_values": value} if mode == "constant" else {}))
        joined = ns.concatenate([ns.concatenate([y, x], axis=axis), y[piece]], axis=axis)
        if ns is np:
            marked = padded.copy()
            marked[every_other] = value
        else:
            marked = padded.at[every_other].set(value)
        return padded, joined, marked

    for got, want in zip(arrjit.jit(lambda x: f(anp, x))(x), f(np, x)):
        same_bits(got, want)
