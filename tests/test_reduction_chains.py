"""Random chains of reductions through fusion: reductions over any axes with and without
``keepdims`` (size-1 dimensions included), transposes, re-broadcast centring and
elementwise steps, every intermediate returned as another output, against NumPy."""
import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import arrjit
import arrjit.numpy as anp

EXAMPLES = int(os.environ.get("ARRJIT_TEST_EXAMPLES", "25"))
REDUCERS = ["sum", "mean", "max", "min", "prod", "var", "std", "argmax"]

# reductions drawn four times as often as the other steps: the bugs live in how reductions
# over different axes chain
steps = st.tuples(st.sampled_from(["reduce"] * 3 + ["reduce axes", "transpose", "center",
                                                     "tanh"]),
                  st.sampled_from(REDUCERS), st.integers(0, 7), st.booleans())


def apply(ns, x, step):
    kind = step[0]
    if kind == "transpose":
        return x.T
    if kind == "tanh":
        return ns.tanh(x) * 2.0 + 1.0
    if x.ndim == 0:
        return x + 1.0
    name, pick, keepdims = step[1:]
    if kind == "center":
        return x - ns.mean(x, axis=pick % x.ndim, keepdims=True)
    if kind == "reduce axes":
        name = "sum" if name == "argmax" else name
        first = pick % x.ndim
        axis = tuple(sorted({first, (first + 1 + pick // 2) % x.ndim}))
    else:
        axis = pick % x.ndim
    if name == "argmax":
        return ns.argmax(x, axis=axis, keepdims=keepdims).astype(ns.float64)
    return getattr(ns, name)(x, axis=axis, keepdims=keepdims)


def run_chain(ns, x, chain):
    outs = []
    for step in chain:
        x = apply(ns, x, step)
        outs.append(x)
    return tuple(outs)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 5), min_size=2, max_size=4),
       st.lists(steps, min_size=2, max_size=5), st.integers(0, 1000))
def test_random_reduction_chains_match_numpy(shape, chain, seed):
    x = np.random.default_rng(seed).standard_normal(shape)
    refs = run_chain(np, x, chain)
    outs = arrjit.jit(lambda x: run_chain(anp, x, chain))(x)
    for out, ref in zip(outs, refs):
        ref = np.asarray(ref)
        assert out.shape == ref.shape and out.dtype == ref.dtype, (out, ref)
        np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_chained_means_over_different_axes_with_keepdims():
    x = np.random.default_rng(0).random((17, 64, 5))
    f = arrjit.jit(lambda x: x.mean(axis=0, keepdims=True).mean(axis=2))
    np.testing.assert_allclose(f(x), x.mean(axis=0, keepdims=True).mean(axis=2), rtol=1e-12)


def test_column_reductions_match_numpy_and_fold_rows_in_order(two_threads_from_1000_elements):
    rng = np.random.default_rng(5)
    for dtype in ("float64", "float32", "int32", "bool"):
        x = (rng.standard_normal((700, 37)) * 10).astype(dtype)
        f = arrjit.jit(lambda x: (anp.sum(x, axis=0), anp.max(x, axis=0), anp.min(x, axis=0),
                                  anp.prod(anp.where(x != 0, x, 1)[:5], axis=0),
                                  anp.any(x, axis=0)))
        outs = f(x)
        refs = (np.sum(x, axis=0), np.max(x, axis=0), np.min(x, axis=0),
                np.prod(np.where(x != 0, x, 1)[:5], axis=0), np.any(x, axis=0))
        for out, ref in zip(outs, refs):
            assert out.dtype == ref.dtype and out.shape == ref.shape
            np.testing.assert_allclose(out, ref, rtol=1e-5 if dtype == "float32" else 1e-12)
        if dtype == "float64":   # each column adds its rows in order: exactly a running sum
            running = np.zeros(37)
            for row in x:
                running += row
            np.testing.assert_array_equal(outs[0], running)
