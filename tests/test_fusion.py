"""The fusion planner: kernel counts of the patterns people jit, row kernels (several passes
per row), reduction epilogues, and full reductions split into per-thread partials."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.cli.bench import layernorm, logsumexp, softmax
from arrjit.core.ir import Op
from arrjit.passes.simplify import simplify

from helpers import assert_same


def kernels(fn, *args):
    return arrjit.jit(fn).lower(*args).kernels


def test_kernel_counts_of_the_target_workloads():
    x = np.random.rand(64, 32)
    a, b, c, d, e = (np.random.rand(1000) for _ in range(5))
    w, bias = np.random.rand(32, 16), np.random.rand(16)
    assert len(kernels(lambda x: softmax(anp, x), x)) == 1
    assert len(kernels(lambda x: layernorm(anp, x), x)) == 1
    assert len(kernels(lambda x: logsumexp(anp, x), x)) == 1
    assert len(kernels(lambda a, b, c, d, e: a * b + c * d - e, a, b, c, d, e)) == 1
    assert len(kernels(lambda a, b: (a * b).sum(), a, b)) == 1
    assert len(kernels(lambda a: anp.mean(a), a)) == 1            # sum, then / n: epilogue
    lowered = arrjit.jit(lambda x, w, b: anp.maximum(x @ w + b, 0.0)).lower(x, w, bias)
    assert len(lowered.kernels) <= 1 and "matmul" in lowered.as_text()


def test_softmax_is_one_kernel_of_three_passes_per_row():
    x = np.random.rand(8, 5).astype(np.float32)
    source = arrjit.jit(lambda x: softmax(anp, x)).lower(x).as_text()
    kernel = source[source.index("def kernel_"):]
    assert kernel.count("for i1 in") == 3 and kernel.count("for i0 in") == 1
    # exp(x - max) is computed once: the sum's pass keeps it in the output's buffer
    assert kernel.count("_M.exp32(") == 1



@pytest.mark.parametrize("threads", [False, True])
def test_a_costly_value_kept_for_a_later_pass_is_loaded_by_every_pass_after_it(
        threads, request):
    """Row normalisation of tanh(x): the mean's pass computes tanh and keeps it in the
    output's buffer; the variance's pass and the output's pass both load it back."""
    if threads:
        request.getfixturevalue("two_threads_from_1000_elements")

    def normalise(xp, x):
        h = xp.tanh(x)
        return (h - h.mean(axis=1, keepdims=True)) / (h.std(axis=1, keepdims=True) + 1e-5)

    x = np.random.default_rng(3).standard_normal((300, 37))
    f = arrjit.jit(lambda x: normalise(anp, x))
    source = f.lower(x).as_text()
    kernel = source[source.index("def kernel_"):]
    assert kernel.count("for i1 in") == 3 and kernel.count("_M.tanh64(") == 1
    assert_same(f(x), normalise(np, x), rtol=1e-13, atol=1e-14)

ROW_PROGRAMS = {
    "softmax": lambda ns, x: softmax(ns, x),
    "layernorm": lambda ns, x: layernorm(ns, x),
    "logsumexp": lambda ns, x: logsumexp(ns, x),
    "normalise rows and return the stats": lambda ns, x: (
        x / ns.sum(x, axis=-1, keepdims=True), ns.sum(x, axis=-1), ns.max(x, axis=-1) * 2),
    "centre by the mean of the last two axes": lambda ns, x: (
        x - ns.mean(x, axis=(-2, -1), keepdims=True)),
    "argmax epilogue": lambda ns, x: ns.argmax(x, axis=-1) + 1,
    "variance then std": lambda ns, x: ns.sqrt(ns.var(x, axis=-1)) + ns.std(x, axis=-1),
    "a returned row value also read by a later pass": lambda ns, x: (
        ns.mean(x, axis=-1, keepdims=True), x - ns.mean(x, axis=-1, keepdims=True)),
    "two reductions of one pass": lambda ns, x: (
        x * ns.min(x, axis=-1, keepdims=True) / ns.max(x, axis=-1, keepdims=True)),
}


@pytest.mark.parametrize("name", sorted(ROW_PROGRAMS))
@pytest.mark.parametrize("shape", [(3, 4, 7), (1, 1, 1), (2, 1, 300)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_kernels_match_numpy(name, shape, dtype):
    fn = ROW_PROGRAMS[name]
    x = (np.random.default_rng(1).standard_normal(shape) * 3).astype(dtype)
    x.flat[5 % x.size] = np.nan if x.size > 20 else x.flat[0]   # a NaN row propagates
    jitted = arrjit.jit(lambda x: fn(anp, x))
    out, ref = jitted(x), fn(np, x)
    rtol = 1e-12 if dtype == np.float64 else 3e-6
    # Sums round differently from NumPy's pairwise order (by a fraction of an ULP of the
    # inputs' scale); ``x - mean`` keeps that absolute difference where it cancels.
    atol = rtol * float(np.max(np.abs(x[np.isfinite(x)])))
    for o, r in zip(out if isinstance(out, tuple) else (out,),
                    ref if isinstance(ref, tuple) else (ref,)):
        assert_same(o, r, rtol=rtol, atol=atol)
    if 1 not in shape:  # reductions over unit axes simplify to other nodes
        assert len(jitted.lower(x).kernels) == 1


def test_a_reduction_also_needed_elsewhere_is_stored_and_reused():
    x = np.random.rand(6, 9)
    f = arrjit.jit(lambda x: (x - x.max(axis=1, keepdims=True), anp.sort(x.max(axis=1))))
    out = f(x)
    assert_same(out[0], x - x.max(axis=1, keepdims=True))
    assert_same(out[1], np.sort(x.max(axis=1)))


def test_a_value_read_from_a_row_kernel_runs_after_that_kernel():
    """``u`` reads ``s`` (a full-shape pass of the row kernel of the weighted row sums) at
    the same index; with another loop nest of that shape at the same level (``z``), ``u``
    was placed in it and read ``s`` before the row kernel wrote it (garbage results)."""
    a, w = np.arange(12.0).reshape(3, 4), np.array([1.0, 2.0, 0.5, 1.0])

    def f(a, w):
        z = anp.zeros_like(a)      # first: its loop nest is the first step of its level
        s = a - anp.sum(a * w, axis=1, keepdims=True)
        return z, s @ (s * w).T

    s = a - np.sum(a * w, axis=1, keepdims=True)
    assert_same(arrjit.jit(f)(a, w)[1], s @ (s * w).T, rtol=1e-12)
    steps = arrjit.jit(f).lower(a, w)._entry.plan.steps
    writer = {v: k for k, st in enumerate(steps) if hasattr(st, "kernel")
              for v in st.kernel.writes}
    for k, step in enumerate(steps):
        for v in getattr(getattr(step, "kernel", None), "reads", ()):
            assert writer.get(v, -1) < k, "a kernel reads a value a later kernel writes"


def test_power_of_two_becomes_square():
    x = np.random.rand(5) - 0.5
    graph = simplify(arrjit.make_graph(lambda x: x ** 2)(x))
    assert [n.op for n in graph.nodes] == [Op.SQUARE]
    assert_same(arrjit.jit(lambda x: x ** 2)(x), x ** 2)


@pytest.mark.parametrize("shape, axis", [((300, 37), -1), ((40, 3000), -1), ((7, 5, 600), (1, 2)),
                                         ((700, 9), 0), ((100_003,), None)])
def test_float32_sums_are_as_accurate_as_numpy(shape, axis):
    """Float32 sums run in float32 blocks of the innermost loop added into float64 (fast and
    vectorised); their error against the exact sum stays within NumPy's pairwise error plus
    half an ULP (the two round differently)."""
    rng = np.random.default_rng(3)
    x = (rng.random(shape) * np.where(rng.random(shape) < 0.01, 1e4, 1)).astype(np.float32)
    exact = x.astype(np.float64).sum(axis=axis)
    scale = np.abs(x.astype(np.float64)).sum(axis=axis)
    ours = arrjit.jit(lambda x: anp.sum(x, axis=axis))(x)
    assert ours.dtype == np.float32
    eps = np.finfo(np.float32).eps
    ours_err = np.max(np.abs(ours - exact) / scale)
    numpy_err = np.max(np.abs(x.sum(axis=axis) - exact) / scale)
    assert ours_err <= numpy_err + 0.5 * eps


def test_float32_sum_blocks_cover_every_element_of_partial_chunks(two_threads_from_1000_elements):
    x = np.arange(1, 5001, dtype=np.float32)      # exact in float32 block sums and float64
    assert arrjit.jit(lambda x: anp.sum(x))(x) == np.float32(5000 * 5001 // 2)
    rows = x.reshape(10, 500)
    assert_same(arrjit.jit(lambda x: anp.sum(x, axis=1))(rows), rows.sum(axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_blocked_argmax_across_blocks_matches_numpy(dtype):
    """argmax/argmin over one reduced loop scan blocks of ARG_BLOCK elements and look for the
    index only in a block that beats the running extreme: ties across blocks, NaN in a
    later block, all-equal and all-extreme rows keep NumPy's first occurrence."""
    from arrjit.backends.cpu.codegen import ARG_BLOCK

    n = 2 * ARG_BLOCK + 37
    rng = np.random.default_rng(5)
    x = (rng.integers(-3, 4, size=(8, n)) if dtype == np.int32
         else rng.standard_normal((8, n))).astype(dtype)
    x[1] = 7                                    # all equal
    x[2, [5, ARG_BLOCK + 5, 2 * ARG_BLOCK + 5]] = 99   # a tie in three blocks
    x[3, -1] = 99                               # the extreme in the short last block
    if dtype != np.int32:
        x[4, [ARG_BLOCK + 3, ARG_BLOCK + 9]] = np.nan  # NaN only in a later block
        x[5] = -np.inf
        x[6] = np.inf
        x[6, 2 * ARG_BLOCK + 1] = np.nan
    for fn in (lambda ns, x: ns.argmax(x, axis=1), lambda ns, x: ns.argmin(x, axis=1),
               lambda ns, x: ns.argmax(x[2]), lambda ns, x: ns.argmin(x[6])):
        assert_same(arrjit.jit(lambda x: fn(anp, x))(x), fn(np, x))


SPLIT_PROGRAMS = {
    "sum": lambda ns, a: ns.sum(a * 2.0),
    "sum float32": lambda ns, a: ns.sum(a.astype(np.float32)),
    "mean": lambda ns, a: ns.mean(a),
    "max": lambda ns, a: ns.max(a - 1.0),
    "min 2-D": lambda ns, a: ns.min(a.reshape(50, -1).T),
    "prod": lambda ns, a: ns.prod(1.0 + a * 1e-4),
    "any / all": lambda ns, a: (ns.any(a > 0.999), ns.all(a > 0.5)),
    "integer max": lambda ns, a: ns.max((a * 1000).astype(np.int64)),
    "argmax": lambda ns, a: ns.argmax(a - 0.5),
    "argmin 2-D transposed": lambda ns, a: ns.argmin(a.reshape(50, -1).T),
    "integer argmax, first of many ties": lambda ns, a: ns.argmax((a * 10).astype(np.int64)),
}


@pytest.mark.parametrize("name", sorted(SPLIT_PROGRAMS))
def test_full_reductions_split_into_per_thread_partials(two_threads_from_1000_elements, name):
    fn = SPLIT_PROGRAMS[name]
    a = np.random.default_rng(2).random(5000)
    jitted = arrjit.jit(lambda a: fn(anp, a))
    out, ref = jitted(a), fn(np, a)
    for o, r in zip(out if isinstance(out, tuple) else (out,),
                    ref if isinstance(ref, tuple) else (ref,)):
        assert_same(o, r, rtol=1e-12 if np.asarray(r).dtype == np.float64 else 1e-6)
    executable = jitted.lower(a)._entry.rendered
    assert [c.split for seg in executable.runs for c in seg.calls] == [True]
    if "integer" not in name:        # NaN propagates (argmax/argmin: the first NaN)
        with_nan = a.copy()
        with_nan[[4321, 4500]] = np.nan
        out, ref = jitted(with_nan), fn(np, with_nan)
        for o, r in zip(out if isinstance(out, tuple) else (out,),
                        ref if isinstance(ref, tuple) else (ref,)):
            assert_same(o, r, rtol=1e-12)


def test_sizes_used_as_numbers_are_run_time_parameters_not_recompiles():
    """mean/var/std's counts and x.shape[...] in arithmetic reach kernels at run time, so a
    new length reuses the compiled code (40 lengths used to make 40 compiles)."""
    f = arrjit.jit(lambda x: ((x - x.mean()) / (x.std() + 1e-8), x / x.shape[1],
                              x.var(axis=-1, ddof=1), x.sum(axis=1) / (x.shape[1] - 1)))
    sources, compiles = set(), None
    for n in (5, 6, 9, 40):
        x = np.random.default_rng(n).standard_normal((3, n))
        refs = ((x - x.mean()) / (x.std() + 1e-8), x / x.shape[1], x.var(axis=-1, ddof=1),
                x.sum(axis=1) / (x.shape[1] - 1))
        for out, ref in zip(f(x), refs):
            np.testing.assert_allclose(out, ref, rtol=1e-12)
        sources.add(f.lower(x).as_text().split("# ", 1)[1])
        compiles = f.cache_info().compiles if compiles is None else compiles
        assert f.cache_info().compiles == compiles, f"length {n} compiled again"
    assert len(sources) == 1 and f.cache_info().traces == 4


def _escape_time(z0, c, steps):
    """An unrolled escape-time loop: every step's value is fused into the next one's."""
    def f(z, c):
        n = anp.zeros(z.shape, dtype=np.int64)
        for k in range(steps):
            inside = anp.abs(z) < 2.0
            n = anp.where(inside, k, n)
            z = anp.where(inside, z * z + c, z)
        return z, n
    return f


def test_a_long_unrolled_chain_is_cut_into_several_kernels_and_matches_numpy():
    """300 fused steps overflowed the fuser's recursion and compiled in time growing faster
    than the chain; past ``MAX_FUSED_WEIGHT`` (its nodes are arithmetic, weight 1 each) the
    chain continues in a new loop nest."""
    from arrjit.passes.sizes import MAX_FUSED_WEIGHT
    rng = np.random.default_rng(0)
    z0 = rng.standard_normal(50) * 0.5
    c = rng.standard_normal(50) * 0.5
    short, long = _escape_time(z0, c, 100), _escape_time(z0, c, 300)
    assert len(kernels(short, z0, c)) == 1
    cut = kernels(long, z0, c)
    assert 300 * 6 // MAX_FUSED_WEIGHT <= len(cut) <= 2 * 300 * 6 // MAX_FUSED_WEIGHT
    z, n = z0.copy(), np.zeros(50, np.int64)
    for k in range(300):
        inside = np.abs(z) < 2.0
        n = np.where(inside, k, n)
        z = np.where(inside, z * z + c, z)
    got = arrjit.jit(long)(z0, c)
    assert_same(got[0], z)
    assert_same(got[1], n)
