"""Random programs on the CUDA backend against NumPy: the elementwise/broadcast/view programs
of ``test_differential`` and the reduction/indexing/matmul chains of ``test_namespace``."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import arrjit
import arrjit.numpy as anp

from helpers import assert_same
from test_differential import REAL_DTYPES, make_inputs, programs, run_program
from test_namespace import MIXED_OPS, check_mixed_program

pytestmark = pytest.mark.cuda

EXAMPLES = int(os.environ.get("ARRJIT_CUDA_TEST_EXAMPLES", "25"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(REAL_DTYPES))     # device="cuda" refuses complex: test_cuda_backend
def test_random_elementwise_programs_match_numpy(case):
    shapes, dtypes, program, seed = case
    inputs = make_inputs(shapes, dtypes, seed)
    with np.errstate(all="ignore"):
        try:
            refs = run_program(np, program, inputs)
        except (TypeError, OverflowError):
            return          # what NumPy rejects is checked on the CPU (test_differential)
        every = run_program(np, program, inputs, keep=len(program))
        if any(np.asarray(r).dtype == np.float16 for r in every):
            return
        outs = arrjit.jit(lambda *xs: run_program(anp, program, xs), device="cuda")(*inputs)
    for out, ref in zip(outs, refs):
        out, ref = arrjit.device_get(out), np.asarray(ref)
        if ref.dtype.kind == "f":
            scale = np.nanmax(np.abs(ref[np.isfinite(ref)]), initial=1.0)
            tol = (1e-5 if ref.dtype == np.float32 else 1e-12) * max(scale, 1.0)
            assert out.dtype == ref.dtype and out.shape == ref.shape
            np.testing.assert_allclose(out, ref, rtol=0, atol=tol, equal_nan=True)
        else:
            assert_same(out, ref)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(MIXED_OPS), min_size=1, max_size=4), st.integers(2, 5),
       st.integers(2, 5), st.integers(0, 1000))
def test_random_programs_with_reductions_indexing_and_matmul(ops, rows, cols, seed):
    check_mixed_program(ops, rows, cols, seed, device="cuda")


@pytest.mark.parametrize("seed", range(6))
def test_chained_reductions_with_keepdims_and_transposes(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 6, 5))

    def program(ns, x):
        a = ns.sum(x, axis=0, keepdims=True) * x            # leading-axis: serial rows
        b = ns.max(a.transpose(0, 2, 1), axis=-1)           # strided row
        c = ns.exp(b - ns.max(b, axis=1, keepdims=True))    # block rows
        return c / ns.sum(c, axis=1, keepdims=True), ns.argmin(a, axis=1), ns.mean(a)

    refs = program(np, x)
    outs = arrjit.jit(lambda x: program(anp, x), device="cuda")(x)
    for out, ref in zip(outs, refs):
        assert_same(arrjit.device_get(out), np.asarray(ref), rtol=1e-12)


def test_region_updates_and_output_views():
    """``x.at[slices]`` updates of computed values are stores into their buffer on the GPU
    too (reductions stored into their rows by their own kernels), and a reshaped output is a
    view of the device buffer."""
    x = np.linspace(-1.0, 1.0, 12)

    def program(x):
        n = x.shape[0]
        grid = anp.zeros((n, n, 2)).at[:, :, 0].set(x.reshape(-1, 1)).at[:, :, 1].set(x)
        y = anp.cos(x).at[1:].add(x[:-1] * 2.0).at[::-3].max(0.5).at[-1].set(7.0)
        sums = anp.zeros((3, 4)).at[1].set(x.reshape(3, 4).sum(axis=0)).at[2, 1:].set(
            x.reshape(3, 4)[:, 1:].max(axis=0)).at[0, 0].set(x.sum())
        return grid.reshape(n * n, 2), y, sums

    grid, y, sums = arrjit.jit(program, device="cuda")(x)
    want_sums = np.zeros((3, 4))
    want_sums[1] = x.reshape(3, 4).sum(axis=0)
    want_sums[2, 1:] = x.reshape(3, 4)[:, 1:].max(axis=0)
    want_sums[0, 0] = x.sum()
    np.testing.assert_allclose(arrjit.device_get(sums), want_sums, rtol=1e-14, atol=1e-14)
    want = np.zeros((12, 12, 2))
    want[:, :, 0] = x.reshape(-1, 1)
    want[:, :, 1] = x
    assert_same(arrjit.device_get(grid), want.reshape(144, 2))
    ref = np.cos(x)
    ref[1:] += x[:-1] * 2.0
    ref[::-3] = np.maximum(ref[::-3], 0.5)
    ref[-1] = 7.0
    np.testing.assert_allclose(arrjit.device_get(y), ref, rtol=1e-15)


def test_stacks_fuse_as_selects_on_the_device():
    """A stack of scalars and a reshaped stack of broadcasts are selects inside one kernel
    on the GPU as on the CPU."""
    def program(xp, y, axis):
        x, v, z = y[0], y[1], y[2]
        y = y + 0.01 * xp.array([10.0 * (v - x), x * (28.0 - z) - v, x * v - 8.0 / 3.0 * z])
        n = axis.shape[0]
        grid = xp.stack([xp.broadcast_to(axis[:, None], (n, n)),
                         xp.broadcast_to(axis[None, :], (n, n)) * y[1]], axis=-1)
        return y, grid.reshape(n * n, 2)

    y, axis = np.array([1.0, 2.0, 3.0]), np.linspace(0, 1, 6)
    f = arrjit.jit(lambda y, a: program(anp, y, a), device="cuda")
    for got, want in zip(f(y, axis), program(np, y, axis)):
        assert_same(arrjit.device_get(got), want, rtol=1e-14)
