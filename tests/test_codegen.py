"""Pure tests of fusion and generated source: kernel counts and shape-generic text."""
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.backends.cpu import columns
from arrjit.backends.cpu.codegen import render_kernel
from arrjit.backends.cpu.mathnames import BLOCK
from arrjit.passes.fuse import partition
from arrjit.passes.kernel import Kernel, LibraryCall
from arrjit.passes.simplify import simplify


def kernels_of(f, *args):
    part = partition(simplify(arrjit.make_graph(f)(*args)))
    return [s for s in part.steps if isinstance(s, Kernel)], part


def test_elementwise_chain_with_broadcast_and_views_is_one_kernel():
    a, b = np.zeros((4, 5)), np.zeros(5)
    ks, _ = kernels_of(lambda x, y: anp.exp(x.T[::-1] * 2).T + y[None, :] - x[:, ::-1], a, b)
    assert len(ks) == 1
    ks, _ = kernels_of(lambda a, b, c, d, e: a * b + c * d - e, *([a] * 5))
    assert len(ks) == 1 and len(ks[0].sizes) == 1  # contiguous work: one flat loop


def test_multi_output_of_one_shape_is_one_kernel():
    x = np.zeros((3, 4))
    ks, _ = kernels_of(lambda x: (x + 1, x * 2, anp.sin(x)), x)
    assert len(ks) == 1 and len(ks[0].writes) == 3


def test_dot_is_a_library_call():
    ks, part = kernels_of(lambda a, b: anp.maximum(anp.dot(a, b) + 1, 0), np.zeros((2, 3)),
                          np.zeros((3, 4)))
    assert sum(isinstance(s, LibraryCall) for s in part.steps) == 1
    assert len(ks) == 1


def test_a_transposed_matmul_operand_reaches_blas_as_a_view():
    """``dot(a, b.T)`` and stacked ``a @ swapaxes(b)``: no copy kernel for the transpose."""
    rng = np.random.default_rng(0)
    a, b, s, t = (rng.random((4, 5)), rng.random((6, 5)), rng.random((2, 3, 5)),
                  rng.random((2, 4, 5)))

    def f(a, b, s, t):
        return anp.dot(a, b.T), s @ anp.swapaxes(t, 1, 2), a.T.T @ (b.T + 0).T.T

    ks, part = kernels_of(f, a, b, s, t)
    assert len(ks) == 1          # only ``b.T + 0``
    calls = [s for s in part.steps if isinstance(s, LibraryCall)]
    assert [c.perms for c in calls] == [(None, (1, 0)), (None, (0, 2, 1)), (None, None)]
    for got, want in zip(arrjit.jit(f)(a, b, s, t),
                         (a @ b.T, s @ np.swapaxes(t, 1, 2), a @ (b.T + 0))):
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_source_is_independent_of_sizes():
    def f(x, y):
        return (x[1:, ::-1] * y[None, :]).T + x[:-1, :1].T

    def source(n, m):
        ks, _ = kernels_of(f, np.zeros((n, m)), np.zeros(m))
        return [render_kernel(k).source for k in ks]

    assert source(4, 5) == source(7, 9)


def test_generated_source_reads_sizes_from_params():
    ks, _ = kernels_of(lambda x: x[:, ::2] + 1, np.zeros((6, 8)))
    r = render_kernel(ks[0])
    assert "p1 = P[1]" in r.source and "range(p1)" in r.source and "range(start, stop)" in r.source
    body = r.source.split("):\n", 1)[1]
    for size in ("6", "4", "8"):
        assert f"range({size})" not in body and f"* {size}" not in body, body
    assert list(r.params[:2]) == [6, 4]


def test_one_dimensional_arrays_reach_the_loop_as_passed():
    """A reshape inside the kernel hides the arguments' no-alias facts from LLVM (float64
    sin was not vectorised): 1-d arrays are indexed as passed, others are flattened."""
    ks, _ = kernels_of(lambda x, y: anp.sin(x) + y.sum(), np.zeros(5), np.zeros((2, 3)))
    assert len(ks) == 2
    for k in ks:
        source = render_kernel(k).source
        for name, v in [(f"w{i}", v) for i, v in enumerate(k.writes)] + [
                (f"r{i}", v) for i, v in enumerate(k.reads)]:
            assert (f"{name} = _M.flat({name})" in source) == (v.ndim != 1)


@pytest.mark.parametrize("threads", [False, True])
def test_column_order_reductions_over_several_blocks_of_columns_are_numpy_s(
        threads, request):
    """Columns go in stack blocks of ``BLOCK``; a chunk (with threads) starts anywhere."""
    if threads:
        request.getfixturevalue("two_threads_from_1000_elements")
    x = np.random.default_rng(3).standard_normal((37, 2 * BLOCK + 77))
    f = arrjit.jit(lambda x: (anp.sum(x * 2.0, axis=0), anp.max(x, axis=0),
                              anp.mean(x > 0, axis=0), anp.any(x > 2, axis=0)))
    for got, want in zip(f(x), ((x * 2.0).sum(axis=0), x.max(axis=0), (x > 0).mean(axis=0),
                                (x > 2).any(axis=0))):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape, dtype", [((3000, 100), np.float64), ((3000, 200), np.float32),
                                          ((3000, 40), np.complex128), ((5000, 12), np.float64)])
def test_column_sums_on_threads_split_columns_at_cache_lines(shape, dtype,
                                                           two_threads_from_1000_elements):
    """A float sum over rows splits its columns into slabs of whole cache lines (one chunk
    may be empty), each reading ahead of its rows where the slab is narrow: NumPy's values
    bit for bit (float32 sums accumulate in float64, ``core.rules``)."""
    x = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    if dtype == np.complex128:
        x = x + 1j * x[::-1]
    (kernel,), _ = kernels_of(lambda v: anp.sum(v, axis=0), x)
    assert render_kernel(kernel).column_order
    assert columns.line_elements(kernel) == 64 // np.dtype(dtype).itemsize
    got = arrjit.jit(lambda v: anp.sum(v, axis=0))(x)
    want = x.astype(np.float64).sum(axis=0).astype(dtype) if dtype == np.float32 else x.sum(0)
    assert got.dtype == x.dtype and got.tobytes() == want.tobytes()


def test_reductions_over_the_leading_axis_run_in_column_order():
    """The rows loop outside, the columns inside (contiguous, vectorised), one accumulator
    per column; row reductions keep the row order."""
    ks, _ = kernels_of(lambda x: (anp.sum(x * 2.0, axis=0), anp.max(x, axis=0)),
                       np.zeros((6, 5)))
    source = render_kernel(ks[0]).source
    rows = source.index("        for i1 in range(p1):\n")
    columns_loop = source.index("            for i0 in range(b0, b1):\n")
    assert rows < source.index("_M.prefetch(r0, ") < columns_loop   # hints, in narrow slabs
    assert "acc0_c = _M.block(np.float64)" in source
    ks, _ = kernels_of(lambda x: anp.sum(x, axis=1), np.zeros((6, 5)))
    assert "_c = _M.block" not in render_kernel(ks[0]).source
    for n in (7, 300):    # the same source for every size of the same structure
        ks2, _ = kernels_of(lambda x: (anp.sum(x * 2.0, axis=0), anp.max(x, axis=0)),
                            np.zeros((n, 9)))
        assert render_kernel(ks2[0]).source == source


KERNELS_CHILD = textwrap.dedent("""
    import json
    import numpy as np
    import arrjit, arrjit.lax as lax, arrjit.numpy as anp
    from numba.core import event

    stack, unexpected = [], []

    class Compiles(event.Listener):
        def on_start(self, ev):
            f = ev.data["dispatcher"].py_func
            name = f"{f.__module__}.{f.__qualname__}"
            inside_helper = any(n.startswith("arrjit.") for n in stack)
            if name.startswith("numba.") and not inside_helper:
                unexpected.append(name)
            stack.append(name)

        def on_end(self, ev):
            stack.pop()

    x = np.linspace(-2, 2, 60).reshape(6, 10)
    programs = [
        lambda x: (anp.argmax(x, axis=1), anp.max(x, axis=1), anp.exp(x).sum(axis=1)),
        lambda x: (anp.sum(x * 2, axis=0), anp.max(x, axis=0), anp.argmin(x, axis=0)),
        lambda x: (anp.argmax(x), anp.sum(x ** 3), anp.mean(x)),
        lambda x: x.at[anp.argmax(x[:, 0])].set(0.0)[::2],
        lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2 + x[i], anp.zeros(10)),
        lambda x: lax.fori_loop(0, 2, lambda i, c: c.at[i].add(x[i, :3].sum()), anp.ones(4)),
        lambda x: anp.where(x > 0, anp.sqrt(anp.abs(x)), x // 3),
    ]
    with event.install_listener("numba:compile", Compiles()):
        for program in programs:
            arrjit.jit(program)(x)
    print(json.dumps(unexpected))
""")


def test_generated_kernels_compile_none_of_numba_s_library_functions(tmp_path):
    """Generated code uses intrinsics and arrjit's cached helpers, not numba library
    functions compiled again in every process: builtin min/max, np.empty, reshape's checks,
    array assignment and string formatting in an error message (1.5 s for one gather)."""
    env = dict(os.environ, ARRJIT_CACHE_DIR=str(tmp_path))
    res = subprocess.run([sys.executable, "-c", KERNELS_CHILD], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1]) == []


def test_an_n_dimensional_elementwise_kernel_vectorises():
    """n-d arrays reach the loop through ``_M.flat``, which keeps what LLVM knows of the
    arguments; a ``reshape`` hid their no-alias facts (float64 sin over a 1000x1000 array was
    not vectorised: 21 ms against 3 ms over the same elements as a 1-d array)."""
    from arrjit.runtime import compile as runtime_compile

    x = np.ones((4, 8))
    f = arrjit.jit(lambda x: anp.sin(x) * 2 + x)
    f(x)
    source = f.lower(x).as_text()
    name = re.search(r"def (kernel_\w+)\(", source).group(1)
    (kernel,) = [getattr(m.module, name) for m in list(runtime_compile._modules.values())
                 if hasattr(m.module, name)]
    assert "_M.flat(r0)" in source
    assert "x double>" in "".join(kernel.inspect_llvm().values())
