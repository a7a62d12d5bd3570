"""The CUDA backend against NumPy: values, dtypes and errors equal to the CPU backend's, on a
GPU or on numba-cuda's simulator (tiny shapes: it runs one OS thread per GPU thread)."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from arrjit.backends.cuda.device import simulated
from arrjit.core.ir import BINARY, UNARY
from arrjit.errors import UnsupportedDtypeError

from helpers import ALL_DTYPES, assert_same, numpy_or_none, sample

pytestmark = pytest.mark.cuda

cuda_jit = lambda f, **kw: arrjit.jit(f, device="cuda", **kw)   # noqa: E731

# The simulator runs NumPy's scalar functions; a GPU runs libdevice, whose float functions
# are within a few ulp of NumPy's (docs/guide/cuda.md: math).
RTOL = {np.dtype("float32"): 3e-7 if simulated() else 2e-6,
        np.dtype("float64"): 1e-15 if simulated() else 1e-14}


def same(out, ref, rtol=None, atol=0.0):
    out = arrjit.device_get(out)
    ref = np.asarray(ref)
    assert_same(out, ref, rtol=rtol or RTOL.get(ref.dtype), atol=atol)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unary_ops_match_numpy(dtype):
    x = sample(dtype)
    names = [n for n in sorted(op.value for op in UNARY) if numpy_or_none(n, x) is not None]
    f = cuda_jit(lambda x: tuple(getattr(anp, n)(x) for n in names))
    for name, out in zip(names, f(x)):
        same(out, numpy_or_none(name, x))


PAIRS = [(d, d) for d in ALL_DTYPES] + [("int8", "uint8"), ("int32", "float32"),
                                        ("uint64", "int64"), ("bool", "int16")]


@pytest.mark.parametrize("d1,d2", PAIRS)
def test_binary_ops_match_numpy(d1, d2):
    x, y = sample(d1, seed=1), sample(d2, seed=2)
    cases = []
    for name in sorted(op.value for op in BINARY):
        b = y
        if name == "power" and np.dtype(d2).kind in "iu":
            b = (np.abs(y.astype(np.int64)) % 5).astype(d2)
        if name in ("left_shift", "right_shift") and np.dtype(d2).kind in "iu":
            b = (y.astype(np.int64) % 70).astype(d2)
        if numpy_or_none(name, x, b) is not None:
            cases.append((name, b))
    f = cuda_jit(lambda x, ys: tuple(getattr(anp, n)(x, b) for (n, _), b in zip(cases, ys)))
    for (name, b), out in zip(cases, f(x, [b for _, b in cases])):
        same(out, numpy_or_none(name, x, b))


def test_integer_edge_semantics():
    i64 = np.array([np.iinfo(np.int64).min, 7, -7, 5], np.int64)
    d = np.array([-1, 0, 2, -3], np.int64)
    f = cuda_jit(lambda a, b: (a // b, a % b, a << 65, a >> 70, -a, a ** 3))
    with np.errstate(all="ignore"):
        refs = (i64 // d, i64 % d, np.left_shift(i64, 65), np.right_shift(i64, 70), -i64,
                i64 ** 3)
    for out, ref in zip(f(i64, d), refs):
        same(out, ref)


def test_negative_integer_powers_raise_numpys_error_and_literal_exponents_check_nothing():
    from arrjit.backends.cuda.codegen import render_kernel

    base = np.array([2, 3, 4], np.int64)
    f = cuda_jit(lambda a, b: a ** b + 1)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        f(base, np.array([1, -1, 2]))
    same(f(base, np.array([1, 0, 2])), base ** np.array([1, 0, 2]) + 1)   # the flag was reset
    squares = cuda_jit(lambda a: a ** 2 - a ** np.uint8(3))
    assert not any(render_kernel(k, 16).error_flag for k in squares.lower(base).kernels)
    same(squares(base), base ** 2 - base ** np.uint8(3))


def test_rounding_keeps_the_sign_of_zero_and_rounds_half_to_even():
    x = np.array([-0.0, 0.0, -0.3, 0.3, 0.5, 1.5, 2.5, -2.5, 1e300, -np.inf, np.nan, 4.5e15 + 0.5])
    f = cuda_jit(lambda x: (anp.floor(x), anp.ceil(x), anp.rint(x),
                            anp.rint(x.astype(anp.float32))))
    for out, ref in zip(f(x), (np.floor(x), np.ceil(x), np.rint(x),
                               np.rint(x.astype(np.float32)))):
        out = arrjit.device_get(out)
        assert_same(out, ref)
        assert (np.signbit(out) == np.signbit(ref)).all()


REDUCTIONS = ["sum", "prod", "max", "min", "argmax", "argmin", "mean", "var", "std", "any",
              "all"]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), (-1, False),
                                           ((0, 2), True)])
def test_reductions_match_numpy(dtype, axis, keepdims):
    x = sample(dtype, n=3 * 5 * 7, seed=3).reshape(3, 5, 7)
    if dtype == "float64":
        x[1, 2, 3] = np.nan        # NaN wins, and the first NaN is argmax/argmin's answer
    names = [n for n in REDUCTIONS if n not in ("argmax", "argmin") or not isinstance(axis, tuple)]

    def reductions(x):
        outs = []
        for n in names:
            kw = {} if n in ("argmax", "argmin") else {"keepdims": keepdims}
            outs.append(getattr(x, n)(axis=axis, **kw) if n not in ("any", "all") else
                        getattr(anp, n)(x, axis=axis, **kw))
        return tuple(outs)

    with np.errstate(all="ignore"):
        refs = [getattr(np, n)(x, axis=axis) if n in ("argmax", "argmin") else
                getattr(np, n)(x, axis=axis, keepdims=keepdims) for n in names]
    # float32: sums accumulate in float64 in another order than NumPy's pairwise float32 sum
    tol = {"rtol": 2e-6, "atol": 1e-6} if dtype == "float32" else {}
    for name, out, ref in zip(names, cuda_jit(reductions)(x), refs):
        same(out, ref, **tol)


def test_argmax_takes_the_first_of_equal_values_across_threads_and_blocks():
    x = np.zeros(1000)
    x[[7, 300, 999]] = 5.0
    x2 = np.tile(x, (3, 1))
    f = cuda_jit(lambda x, y: (anp.argmax(x), anp.argmin(-x), anp.argmax(y, axis=1),
                               anp.argmax(y, axis=0)))
    for out, ref in zip(f(x, x2), (7, 7, [7, 7, 7], np.argmax(x2, axis=0))):
        same(out, np.asarray(ref, np.int64))


def test_full_reductions_of_several_passes_are_split_kernels_over_many_blocks():
    x = np.random.default_rng(5).standard_normal(300) * 4 + 2
    x[17] = -30.0

    def program(x):
        centred = x - x.mean()
        return centred / x.std(), x.var(), anp.argmax(anp.abs(centred)), centred.max()

    f = cuda_jit(program)
    from arrjit.backends.cuda.codegen import strategy_of
    assert {strategy_of(k) for k in f.lower(x).kernels} <= {"split", "elementwise"}
    c = x - x.mean()
    for out, ref in zip(f(x), (c / x.std(), x.var(), np.argmax(np.abs(c)), c.max())):
        same(out, ref, rtol=1e-12)


def test_row_kernels_are_one_kernel_each():
    x = np.random.default_rng(0).standard_normal((6, 33)).astype(np.float32)
    softmax = cuda_jit(lambda x: anp.exp(x - x.max(axis=1, keepdims=True)) /
                       anp.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True))
    layernorm = cuda_jit(lambda x: (x - x.mean(axis=-1, keepdims=True)) /
                         anp.sqrt(x.var(axis=-1, keepdims=True) + 1e-5))
    lse = cuda_jit(lambda x: anp.log(anp.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))
                   + x.max(axis=1))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    refs = (e / e.sum(axis=1, keepdims=True),
            (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
            np.log(e.sum(axis=1)) + x.max(axis=1))
    for f, ref in zip((softmax, layernorm, lse), refs):
        assert len(f.lower(x).kernels) == 1
        assert_same(arrjit.device_get(f(x)), ref, rtol=2e-6, atol=1e-6)


def test_row_kernels_keep_the_row_in_shared_memory_where_it_fits():
    from arrjit.backends.cuda.codegen import ROW_CACHE_BYTES, render_kernel

    layernorm = cuda_jit(lambda x: (x - x.mean(axis=-1, keepdims=True)) /
                         anp.sqrt(x.var(axis=-1, keepdims=True) + 1e-5))
    fits = ROW_CACHE_BYTES // 8
    for cols in (5, fits, fits + 3):           # the last row is read from global memory
        x = np.random.default_rng(cols).standard_normal((2, cols))
        (kernel,) = layernorm.lower(x).kernels
        source = render_kernel(kernel, 16).source
        assert f"row_cached = ninner <= {fits}" in source
        assert source.count("rc0[j] if row_cached else") == 2     # passes 2 and 3 of 3
        ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        same(layernorm(x), ref, rtol=1e-12, atol=1e-14)


def test_library_calls_loops_and_views():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 6)), rng.standard_normal((6, 3))
    idx = np.array([3, 0, 2])

    def program(a, b, idx):
        m = anp.tanh(a) @ b
        s = anp.sort(a, axis=1)[:, ::-1]
        g = a[idx] * 2
        c = anp.cumsum(a, axis=0)
        u = a.at[idx, 0].add(10.0)
        total = lax.fori_loop(0, 5, lambda i, v: v * 0.5 + a[0, 0], m.T)
        w = lax.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 2.0 + 1.0, anp.abs(b))
        return m, s, g, c, u, total, w

    jitted = cuda_jit(program)
    outs = jitted(a, b, idx)
    assert sorted(jitted.lower(a, b, idx).loops) == [
        "from the host, one launch sequence per iteration, the condition read back each "
        "iteration",
        "from the host, one launch sequence per iteration, the trip count known (no read-back)"]
    m = np.tanh(a) @ b
    total = m.T
    for _ in range(5):
        total = total * 0.5 + a[0, 0]
    w = np.abs(b)
    while w.sum() < 100.0:
        w = w * 2.0 + 1.0
    u = a.copy()
    np.add.at(u, (idx, 0), 10.0)
    refs = (m, np.sort(a, axis=1)[:, ::-1], a[idx] * 2, np.cumsum(a, axis=0), u, total, w)
    for out, ref in zip(outs, refs):
        assert_same(arrjit.device_get(out), ref, rtol=1e-13)


def test_errors_are_the_cpu_backends():
    with pytest.raises(IndexError):
        cuda_jit(lambda x, i: x[i])(np.arange(4.0), np.array([5]))
    with pytest.raises(TypeError, match="argument 'x'"):
        cuda_jit(lambda x: x + 1)(object())


@pytest.mark.parametrize("function, value, expected", [
    (lambda z: z * 2, np.array([1 + 2j, 3j]), np.array([2 + 4j, 6j])),          # complex input
    (lambda x: anp.abs(x * 1j), np.array([1.0, -2.0]), np.array([1.0, 2.0])),     # complex inside
    (lambda x: lax.fori_loop(0, 2, lambda i, c: c * 1j, x + 0j).real,             # complex loop
     np.array([3.0]), np.array([-3.0])),
])
def test_complex_values_are_refused_with_the_way_out(function, value, expected):
    with pytest.raises(UnsupportedDtypeError, match=r"complex128.*device='cpu'"):
        cuda_jit(function)(value)
    assert_same(arrjit.jit(function, device="cpu")(value), expected)


def test_results_stay_on_the_device_and_chain_without_copies():
    from arrjit.backends.cuda.device import to_device

    f = cuda_jit(lambda x: x * 2.0 + 1.0)
    y = f(np.arange(5.0))
    assert not isinstance(y, np.ndarray) and to_device(y) is y   # a device array, taken as is
    z = f(y)
    assert_same(arrjit.device_get(z), (np.arange(5.0) * 2 + 1) * 2 + 1)
    placed = arrjit.device_put({"a": np.ones(3)}, "cuda")
    assert not isinstance(placed["a"], np.ndarray)
    assert arrjit.block_until_ready(placed) is placed
    assert_same(arrjit.device_get(f(placed["a"])), np.full(3, 3.0))


def test_default_device_option_and_new_sizes_reuse_the_kernels():
    arrjit.config.update("default_device", "cuda")
    try:
        f = arrjit.jit(lambda x: anp.exp(x).sum(axis=-1) / x.shape[-1])
    finally:
        arrjit.config.update("default_device", "cpu")
    texts = set()
    for n in (3, 4, 9):
        x = np.linspace(0, 1, 2 * n).reshape(2, n)
        same(f(x), np.exp(x).sum(axis=-1) / n)
        texts.add(f.lower(x).as_text().split("# ", 1)[1])
    assert len(texts) == 1          # the count x.shape[-1] is a run-time parameter too


def test_results_export_dlpack_without_a_copy_and_chain_into_calls():
    from arrjit.backends.cuda.device import device_pointer

    f = cuda_jit(lambda x: anp.sin(x) * 2.0)
    y = f(np.arange(6.0).reshape(2, 3))
    put = arrjit.device_put(np.arange(3.0), "cuda")
    for array in (y, put):      # (the simulator's arrays have no __cuda_array_interface__)
        assert hasattr(array, "__dlpack__")
        assert simulated() or hasattr(array, "__cuda_array_interface__")
    if simulated():             # device arrays are host memory there: a kDLCPU tensor
        assert y.__dlpack_device__() == (1, 0)
        exported = np.from_dlpack(y)
        assert np.shares_memory(exported, y._ary)
    else:
        from cuda.core.utils import StridedMemoryView

        assert y.__dlpack_device__()[0] == 2
        view = StridedMemoryView.from_dlpack(y, stream_ptr=-1)
        assert view.ptr == device_pointer(y)[0] and view.shape == (2, 3)
        exported = arrjit.device_get(y)
    assert_same(exported, np.sin(np.arange(6.0).reshape(2, 3)) * 2.0)
    with pytest.raises(BufferError, match="device_get"):
        y.__dlpack__(dl_device=(99, 0))
    same(f(y), np.sin(np.sin(np.arange(6.0).reshape(2, 3)) * 2.0) * 2.0)
    same(f(put), np.sin(np.arange(3.0)) * 2.0)


def test_donated_device_array_holds_the_result():
    from arrjit.backends.cuda.device import device_pointer, to_device

    f = cuda_jit(lambda x, y: x * 2.0 + y, donate_argnums=0)
    x = to_device(np.arange(6.0))
    before = device_pointer(x)
    out = f(x, np.ones(6))
    assert device_pointer(out) == before
    assert_same(arrjit.device_get(out), np.arange(6.0) * 2 + 1)
    with pytest.warns(arrjit.errors.DonationWarning, match="also passed"):
        aliased = f(out, out)
    assert_same(arrjit.device_get(aliased), (np.arange(6.0) * 2 + 1) * 3)


MATMUL_SHAPES = [((5, 7), (7, 3)), ((7,), (7, 3)), ((5, 7), (7,)), ((7,), (7,)),
                 ((2, 1, 5, 6), (3, 6, 4)), ((3, 0), (0, 2)), ((4, 9), (9, 0))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64"),
                                    ("int32", "int32"), ("bool", "bool")])
def test_matmul_runs_on_the_device_like_numpy(shapes, dtypes):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shapes[0]) * 3).astype(dtypes[0])
    b = (rng.standard_normal(shapes[1]) * 3).astype(dtypes[1])
    same(cuda_jit(lambda a, b: anp.tanh(a @ b) if a.dtype.kind == "f" else a @ b)(a, b),
         np.tanh(a @ b) if a.dtype.kind == "f" else a @ b, rtol=1e-12)


def test_cuda_kernels_go_to_the_disk_cache_under_a_device_key():
    from pathlib import Path

    from arrjit.backends.cuda.target import cache_key_fields

    fields = cache_key_fields()
    for key in ("compute_capability", "device", "cuda_runtime", "nvvm", "numba_cuda",
                "codegen", "simulator"):
        assert key in fields, key
    f = cuda_jit(lambda x: anp.cos(x) * 3.0 - x)
    same(f(np.arange(4.0)), np.cos(np.arange(4.0)) * 3.0 - np.arange(4.0))
    source = f.lower(np.arange(4.0)).as_text().split("# 1 kernel(s)\n\n", 1)[1]
    published = [p for p in Path(arrjit.config.cache_dir).rglob("*.py")
                 if p.read_text() == source.replace("CACHE = False", "CACHE = True", 1)]
    assert published, "the generated CUDA module is not in the disk cache"


def _emulate_warp_shuffles(monkeypatch):
    """Give the simulator ``shfl_down_sync`` for blocks of one warp: every thread of the block
    calls it together there, so a block-wide exchange between two barriers is exact."""
    import threading

    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    exchange: dict = {}

    def shfl_down_sync(self, mask, value, delta):
        thread = threading.current_thread()
        lane = thread.threadIdx.x
        exchange[lane] = value
        thread.syncthreads()
        out = exchange[lane + delta] if lane + delta < 32 else value
        thread.syncthreads()
        return out

    monkeypatch.setattr(FakeCUDAModule, "shfl_down_sync", shfl_down_sync, raising=False)


def test_block_reductions_through_warp_shuffles(monkeypatch):
    """The GPU's block reduction (warp shuffles): on the simulator through an emulated
    shuffle with one warp per block; on a GPU as it runs anyway."""
    from arrjit.backends.cuda.device import has_warp_shuffles

    if simulated():
        _emulate_warp_shuffles(monkeypatch)
    assert has_warp_shuffles()
    arrjit.config.update("cuda_threads_per_block", 32)
    try:
        rng = np.random.default_rng(4)
        x = rng.standard_normal((3, 70))
        x[1, 5] = x[1, 40] = 9.0           # a tie: the first occurrence wins
        x[2, 33] = np.nan
        b = (rng.random((3, 70)) > 0.3).astype(np.int8)

        def reductions(x, b):
            return (x.sum(axis=1), x.max(axis=1), anp.argmax(x, axis=1), anp.argmin(x),
                    b.max(axis=1), anp.any(b > 0, axis=1), x.sum(), b.sum(),
                    anp.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))

        f = cuda_jit(reductions)
        assert "shfl_down_sync" in f.lower(x, b).as_text()
        with np.errstate(all="ignore"):
            refs = (x.sum(axis=1), x.max(axis=1), np.argmax(x, axis=1), np.argmin(x),
                    b.max(axis=1), np.any(b > 0, axis=1), x.sum(), b.sum(),
                    np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))
        for out, ref in zip(f(x, b), refs):
            same(out, ref, rtol=1e-13)
    finally:
        arrjit.config.update("cuda_threads_per_block", 0)


def _loop_of(f, *args):
    from arrjit.backends.cuda.runner import LoopRun

    executable = f.lower(*args)._entry.rendered
    return next(step for step in executable.runs if isinstance(step, LoopRun))


def test_fori_loop_with_static_bounds_never_reads_the_condition_back():
    x = np.linspace(0, 1, 5)
    static = cuda_jit(lambda x: lax.fori_loop(2, 9, lambda i, v: v * 0.5 + i, x))
    traced = cuda_jit(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 0.5 + i, x))
    loops = {"static": _loop_of(static, x), "traced": _loop_of(traced, x, 7)}
    runs = {name: 0 for name in loops}
    for name, loop in loops.items():
        run = loop.cond.run

        def counted(args, run=run, name=name):
            runs[name] += 1
            return run(args)

        loop.cond.run = counted
    ref = x.copy()
    for i in range(2, 9):
        ref = ref * 0.5 + i
    same(static(x), ref)
    ref = x.copy()
    for i in range(7):
        ref = ref * 0.5 + i
    same(traced(x, 7), ref)
    assert runs == {"static": 0, "traced": 8}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "bool"])
def test_cumulative_concatenate_and_searchsorted_on_the_device(dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 4, 5)) * 3).astype(dtype)
    sorted_ = np.sort(np.concatenate([x.ravel(), [np.nan]]).astype(dtype))
    values = np.concatenate([x.ravel()[:7], [np.nan]]).astype(dtype)

    def program(x, s, v):
        return (anp.cumsum(x, axis=0), anp.cumsum(x, axis=2), anp.cumprod(x, axis=1),
                anp.cumsum(x), anp.concatenate([x, x[:, :1] * 2, x[:, 1:3]], axis=1),
                anp.concatenate([x[:1], x], axis=0), anp.searchsorted(s, v),
                anp.searchsorted(s, v, side="right"))

    with np.errstate(all="ignore"):
        refs = (np.cumsum(x, axis=0), np.cumsum(x, axis=2), np.cumprod(x, axis=1),
                np.cumsum(x), np.concatenate([x, x[:, :1] * 2, x[:, 1:3]], axis=1),
                np.concatenate([x[:1], x], axis=0), np.searchsorted(sorted_, values),
                np.searchsorted(sorted_, values, side="right"))
        outs = cuda_jit(program)(x, sorted_, values)
    for out, ref in zip(outs, refs):
        assert_same(arrjit.device_get(out), ref)          # the same order: exact


def test_row_gather_on_the_device_and_numpys_index_error():
    x = np.arange(24.0).reshape(4, 6)
    idx = np.array([[3, -1], [0, 2]])
    f = cuda_jit(lambda x, i: x[i] * 2.0)
    same(f(x, idx), x[idx] * 2.0)
    same(cuda_jit(lambda x, i: x[i])(x[:, 0].copy(), np.array([1, 1, -4], np.int8)),
         x[:, 0][np.array([1, 1, -4])])
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        f(x, np.array([0, 4]))
