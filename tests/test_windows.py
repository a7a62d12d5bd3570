"""Windows at run-time starts (``lax.dynamic_slice`` and its one-axis forms with a traced
start) read inside fused kernels: an index map whose offset is the clamped start
(``passes.windows``), not a library gather. Values against NumPy, JAX's clamping."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import grad, lax, vmap
from arrjit.backends.cpu.loops import LoopRun
from arrjit.passes.kernel import Position
from arrjit.plan import LibraryStep

from helpers import assert_same


def _library_ops(f, *args) -> list[str]:
    return [s.node.op.value for s in f.lower(*args)._entry.plan.steps
            if isinstance(s, LibraryStep)]


def _clamped(start: int, extent: int, size: int) -> int:
    start = start + extent if start < 0 else start
    return min(max(start, 0), extent - size)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_a_window_at_a_traced_start_is_a_view_and_clamps_like_jax(dtype):
    x = (np.arange(60) - 17).reshape(6, 10).astype(dtype)
    f = arrjit.jit(lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 4)) * 2
                   + lax.dynamic_slice_in_dim(x, j + 1, 4, axis=1)[:3])
    assert _library_ops(f, x, 0, 0) == []
    (kernel,) = [k for k in f.lower(x, 0, 0).kernels
                 if any(isinstance(p, Position) for p in k.stmts)]
    positions = sorted((p.extent, p.axis) for p in kernel.stmts if isinstance(p, Position))
    assert positions == [(6, 0), (10, 1), (10, 1)]   # the rows' start, two column starts
    for i, j in [(0, 0), (3, 6), (5, 9), (-1, -2), (-9, 40), (2, -30)]:
        r, c, c2 = _clamped(i, 6, 3), _clamped(j, 10, 4), _clamped(j + 1, 10, 4)
        want = x[r:r + 3, c:c + 4] * 2 + x[:, c2:c2 + 4][:3]
        assert_same(f(x, i, j), want.astype(dtype))


def test_windows_of_computed_values_and_of_three_dimensions():
    x = np.random.default_rng(0).random((4, 5, 6))
    f = arrjit.jit(lambda x, k: lax.dynamic_slice(anp.exp(x), (1, k, 0), (2, 3, 6)).sum(axis=2))
    assert _library_ops(f, x, 0) == []
    for k in (0, 2, 4, -1):
        kk = _clamped(k, 5, 3)
        assert_same(f(x, k), np.exp(x)[1:3, kk:kk + 3].sum(axis=2), rtol=1e-14)


def test_a_window_in_a_loop_body_runs_natively():
    def body(i, u):
        w = lax.dynamic_slice_in_dim(u, i - 1, 3, axis=0)
        return lax.dynamic_update_index_in_dim(u, 0.5 * (w[0] + w[2]) + 0.1 * w[1], i, 0)

    f = arrjit.jit(lambda u: lax.fori_loop(1, u.shape[0] - 1, body, u))
    u = np.random.default_rng(1).random((12, 5))
    (loop,) = [s for s in f.lower(u)._entry.rendered.runs if isinstance(s, LoopRun)]
    assert loop.native is not None
    body_ops = [s.step.node.op.value for s in loop.body.runs if hasattr(s, "step")]
    assert "gather" not in body_ops
    want = u.copy()
    for i in range(1, 11):
        want[i] = 0.5 * (want[i - 1] + want[i + 1]) + 0.1 * want[i]
    assert_same(f(u), want)


def test_an_index_vector_that_can_leave_the_axis_stays_numpys_gather():
    """``x[s + arange(3)]`` wraps a negative position and raises beyond the end (NumPy), so
    only a start clamped into range makes a window."""
    x = np.arange(10.0)
    free = arrjit.jit(lambda x, s: x[s + anp.arange(3)])
    assert _library_ops(free, x, 0) == ["gather"]
    assert_same(free(x, -1), x[np.array([-1, 0, 1])])
    loose = arrjit.jit(lambda x, s: x[anp.clip(s, 0, 8) + anp.arange(3)])
    assert _library_ops(loose, x, 0) == ["gather"]
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        loose(x, 9)
    tight = arrjit.jit(lambda x, s: x[anp.clip(s, 0, 7) + anp.arange(3)])
    assert _library_ops(tight, x, 0) == []
    assert_same(tight(x, 9), x[7:10])


def test_windows_keep_their_derivatives_and_batching():
    x = np.random.default_rng(2).random((6, 4))
    loss = lambda x, i: (lax.dynamic_slice(x, (i, 1), (2, 3)) ** 2).sum()
    want = np.zeros_like(x)
    want[4:6, 1:4] = 2 * x[4:6, 1:4]           # start 5 clamped to 4
    assert_same(arrjit.jit(grad(loss))(x, 5), want)
    starts = np.array([0, 2, 7, -1])
    got = arrjit.jit(vmap(lambda i: lax.dynamic_slice_in_dim(x, i, 2, axis=0)))(starts)
    assert_same(got, np.stack([x[_clamped(int(i), 6, 2):][:2] for i in starts]))
