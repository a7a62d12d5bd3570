"""lax control flow and vmap, against NumPy references."""
import numpy as np
import pytest

import arrjit.numpy as anp
from arrjit import errors, jit, lax, vmap

from helpers import assert_same


def _loop_runs(f, *args):
    from arrjit.backends.cpu.loops import LoopRun

    return [s for s in f.lower(*args)._entry.rendered.runs if isinstance(s, LoopRun)]


def mandelbrot(ns_where, c_re, c_im, steps):
    z_re, z_im = np.zeros_like(c_re), np.zeros_like(c_im)
    count = np.zeros(c_re.shape, np.int64)
    for _ in range(steps):
        inside = z_re * z_re + z_im * z_im <= 4.0
        new_re = z_re * z_re - z_im * z_im + c_re
        new_im = 2.0 * z_re * z_im + c_im
        z_re, z_im = ns_where(inside, new_re, z_re), ns_where(inside, new_im, z_im)
        count = count + inside
    return count


def test_mandelbrot_fori_loop_runs_natively_and_matches_numpy():
    re, im = np.meshgrid(np.linspace(-2, 0.6, 40), np.linspace(-1.2, 1.2, 30))

    @jit
    def mandel(c_re, c_im):
        def body(i, state):
            z_re, z_im, count = state
            inside = z_re * z_re + z_im * z_im <= 4.0
            new_re = z_re * z_re - z_im * z_im + c_re
            new_im = 2.0 * z_re * z_im + c_im
            return (anp.where(inside, new_re, z_re), anp.where(inside, new_im, z_im),
                    count + inside)
        init = (anp.zeros_like(c_re), anp.zeros_like(c_im), anp.zeros(c_re.shape, anp.int64))
        return lax.fori_loop(0, 30, body, init)[2]

    assert_same(mandel(re, im), mandelbrot(np.where, re, im, 30))
    (loop,) = _loop_runs(mandel, re, im)
    assert loop.native is not None  # one native driver: no Python per iteration


def test_heat_equation_with_at_set_inside_fori_loop():
    u0 = np.zeros(64)
    u0[32] = 1.0

    @jit
    def heat(u, steps):
        def body(i, u):
            return u.at[1:-1].set(u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2]))
        return lax.fori_loop(0, steps, body, u)

    ref = u0.copy()
    for _ in range(50):
        ref[1:-1] = ref[1:-1] + 0.25 * (ref[2:] - 2 * ref[1:-1] + ref[:-2])
    assert_same(heat(u0, 50), ref)
    np.testing.assert_array_equal(u0[32], 1.0)  # the input is not modified
    (loop,) = _loop_runs(heat, u0, 50)
    assert loop.native is not None  # the slice update runs inside the native driver


@pytest.mark.parametrize("mode", ["set", "add", "multiply", "min", "max"])
def test_loops_indexing_at_a_traced_position_run_natively_and_match_numpy(mode):
    """x[i], x.at[i].<mode>(v), x[i - 1] (negative at i = 0) and a stacked pair inside a
    fori_loop: gathers, scatters and concatenation at scalar positions run in the native
    driver, the carry updated in place, and the caller's arrays untouched."""
    x = np.random.default_rng(0).standard_normal((12, 3))
    out0 = np.arange(12.0)

    ufuncs = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}

    def update(ns, out, i, v, how):
        if ns is not np:
            return getattr(out.at[i], how)(v)
        out = out.copy()
        if how == "set":
            out[i] = v
        else:
            ufuncs[how].at(out, i, v)
        return out

    def program(ns, x, out, fori):
        def body(i, carry):
            out, pairs = carry
            v = ns.sum(x[i]) * 0.5 + out[i - 1]
            return update(ns, out, i, v, mode), update(ns, pairs, i, ns.array([v, out[i]]), "set")
        return fori(0, x.shape[0], body, (out, ns.zeros((12, 2))))

    def np_fori(lo, hi, body, carry):
        for i in range(lo, hi):
            carry = body(i, carry)
        return carry

    f = jit(lambda x, out: program(anp, x, out, lax.fori_loop))
    got, want = f(x, out0), program(np, x, out0, np_fori)
    for g, w in zip(got, want):
        assert_same(g, w)
    np.testing.assert_array_equal(out0, np.arange(12.0))
    (loop,) = _loop_runs(f, x, out0)
    assert loop.native is not None


def test_an_out_of_range_traced_position_in_a_native_loop_raises_numpy_s_index_error():
    @jit
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, acc: acc + x[i], 0.0)

    x = np.arange(4.0)
    assert f(x, 4) == 6.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        f(x, 5)
    (loop,) = _loop_runs(f, x, 4)
    assert loop.native is not None


def test_scan_running_sum_and_rnn():
    xs = np.arange(1.0, 7.0)
    carry, ys = jit(lambda xs: lax.scan(lambda c, x: (c + x, c + x), 0.0, xs))(xs)
    assert_same(carry, np.asarray(xs.sum()))
    assert_same(ys, np.cumsum(xs))

    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal((4, 3)) * 0.5
    seq = rng.standard_normal((6, 3))

    def rnn(h, x):
        h = anp.tanh(W @ h + U @ x)
        return h, h.sum()

    h, outs = jit(lambda h0, seq: lax.scan(rnn, h0, seq))(np.zeros(4), seq)
    h_ref, outs_ref = np.zeros(4), []
    for x in seq:
        h_ref = np.tanh(W @ h_ref + U @ x)
        outs_ref.append(h_ref.sum())
    assert_same(h, h_ref, rtol=1e-12)
    assert_same(outs, np.array(outs_ref), rtol=1e-12)
    _, rev = jit(lambda xs: lax.scan(lambda c, x: (c + x, c + x), 0.0, xs, reverse=True))(xs)
    assert_same(rev, np.cumsum(xs[::-1])[::-1])


def test_while_loop_newton_iteration():
    def newton(a):
        def cond(state):
            x, it = state
            return anp.logical_and(anp.max(anp.abs(x * x - a)) > 1e-12, it < 50)

        def body(state):
            x, it = state
            return 0.5 * (x + a / x), it + 1

        return lax.while_loop(cond, body, (a, 0))

    a = np.array([2.0, 9.0, 0.25])
    x, iterations = jit(newton)(a)
    assert_same(x, np.sqrt(a))
    assert 0 < int(iterations) < 50
    eager_x, _ = newton(a)
    assert_same(np.asarray(eager_x), np.sqrt(a))


def test_cond_and_switch_choose_per_call():
    f = jit(lambda p, x: lax.cond(p > 0, lambda v: anp.sin(v) * 2, lambda v: v[::-1] - 1, x))
    x = np.linspace(0, 1, 5)
    assert_same(f(1, x), np.sin(x) * 2)
    assert_same(f(-1, x), x[::-1] - 1)
    assert f.cache_info().traces == 1
    g = jit(lambda i, x: lax.switch(i, [lambda v: v + 1, lambda v: v * 10, lambda v: -v], x))
    for i, ref in [(-3, x + 1), (0, x + 1), (1, x * 10), (2, -x), (9, -x)]:
        assert_same(g(i, x), ref)
    assert lax.cond(True, lambda v: v + 1, lambda v: v - 1, 1.0) == 2.0


def test_fori_loop_with_traced_bounds_and_python_semantics_outside_jit():
    f = jit(lambda x, n: lax.fori_loop(0, n, lambda i, v: v + i, x))
    assert_same(f(np.zeros(2), 5), np.full(2, 10.0))
    assert_same(f(np.zeros(2), 0), np.zeros(2))
    assert lax.fori_loop(0, 4, lambda i, v: v * 2, 1) == 16


def test_carry_mismatch_names_the_leaf_and_both_avals():
    with pytest.raises(TypeError, match=r"lax.fori_loop: the carry\[1\]\['w'\] .*enters as "
                                        r"float32\[3\] but the body returns float64\[3\]"):
        jit(lambda x: lax.fori_loop(0, 3, lambda i, s: (s[0], {"w": s[1]["w"] * np.float64(2)}),
                                    (x, {"w": x.astype(anp.float32)})))(np.ones(3))
    with pytest.raises(TypeError, match=r"shape.*float64\[3\].*float64\[2\]"):
        jit(lambda x: lax.while_loop(lambda v: anp.all(v > 0), lambda v: v[:2], x))(np.ones(3))
    with pytest.raises(TypeError, match="same shape and dtype"):
        jit(lambda p, x: lax.cond(p, lambda v: v, lambda v: v.sum(), x))(True, np.ones(3))
    with pytest.raises(TypeError, match="boolean scalar"):
        jit(lambda x: lax.while_loop(lambda v: v, lambda v: v, x))(np.ones(3))


def test_vmap_of_a_per_example_loss_equals_the_batched_version():
    rng = np.random.default_rng(1)
    W, X, Y = rng.random((3, 4)), rng.random((8, 4)), rng.random((8, 3))

    def loss(w, x, y):
        return anp.sum((anp.tanh(w @ x) - y) ** 2)

    batched_ref = np.sum((np.tanh(X @ W.T) - Y) ** 2, axis=1)
    per_example = vmap(loss, in_axes=(None, 0, 0))
    assert_same(per_example(W, X, Y), batched_ref)
    compiled = jit(per_example)
    assert_same(compiled(W, X, Y), batched_ref)
    matmuls = [n for n in compiled.lower(W, X, Y).graph.nodes if n.op.value == "matmul"]
    assert len(matmuls) == 1 and matmuls[0].out.shape == (8, 3)  # one batched matmul


def test_nested_vmap_and_axes():
    a = np.arange(24.0).reshape(2, 3, 4)
    direct = np.stack([np.stack([a[i, j] * a[i, j].sum() for i in range(2)]) for j in range(3)])
    assert_same(jit(vmap(vmap(lambda v: v * v.sum()), in_axes=1))(a), direct)
    assert_same(vmap(lambda v: v[np.array([1, 0])], in_axes=0)(a[0]), a[0][:, [1, 0]])
    with pytest.raises(ValueError, match="inconsistent sizes"):
        vmap(lambda x, y: x + y)(np.ones(3), np.ones(4))


def test_leaked_tracer_from_a_loop_body_is_reported():
    leaked = []

    def body(i, v):
        leaked.append(v)
        return v + 1

    jit(lambda x: lax.fori_loop(0, 2, body, x))(np.ones(2))
    with pytest.raises(errors.UnexpectedTracerError):
        anp.exp(leaked[0])


@pytest.mark.parametrize("fn,exc", [
    (lambda x: [0][x[0]], errors.TracerIntegerConversionError),
    (lambda x: range(x[0]), errors.TracerIntegerConversionError),
    (lambda x: len(x[0]), errors.ConcretizationTypeError),
    (lambda x: bool(x[0]), errors.TracerBoolConversionError),
])
def test_more_tracer_conversions(fn, exc):
    with pytest.raises(exc):
        jit(fn)(np.ones(3, np.int64))


@pytest.mark.parametrize("out_axes", [1, -1])
def test_vmap_out_axes_other_than_zero_with_and_without_jit(out_axes):
    x = np.arange(6.0).reshape(2, 3)
    f = vmap(lambda r: (r * 2, r.sum()), out_axes=(out_axes, 0))
    for g in (f, jit(f)):
        doubled, sums = g(x)
        np.testing.assert_array_equal(doubled, (x * 2).T)
        np.testing.assert_array_equal(sums, x.sum(axis=1))


def test_vmap_inside_jit_leaves_the_jit_trace_usable():
    x = np.arange(6.0).reshape(2, 3)
    g = jit(lambda x: vmap(lambda r: r * 2)(x) + 1)     # an op on the jit trace after vmap
    np.testing.assert_array_equal(g(x), x * 2 + 1)


def test_native_loops_gather_columns_by_position_and_by_index_vector():
    """``e[:, i]`` (a position on the second axis), ``e[:, 2 * i + taps]`` (one index vector
    among slices) and a 2-d index array (which keeps the body in Python) all match NumPy."""
    e = np.arange(60.0).reshape(3, 20) * (1 + 0.5j)
    taps = np.arange(4)
    grid = np.array([[0, 1], [2, 3]])

    def program(ns, e, fori):
        def body(i, acc):
            return acc + ns.sum(e[:, i]) + ns.sum(e[:, 2 * i + taps] * 2) - ns.sum(e[1, i + grid])
        return fori(0, 8, body, ns.zeros((), e.dtype))

    def np_fori(lo, hi, body, carry):
        for i in range(lo, hi):
            carry = body(i, carry)
        return carry

    assert_same(jit(lambda e: program(anp, e, lax.fori_loop))(e), program(np, e, np_fori))
    vector = jit(lambda e, n: lax.fori_loop(0, n, lambda i, a: a + e[:, 2 * i + taps].sum(), 0j))
    assert_same(vector(e, 8), sum(e[:, 2 * i + taps].sum() for i in range(8)))
    (loop,) = _loop_runs(vector, e, 8)
    assert loop.native is not None
    with pytest.raises(IndexError, match="index 20 is out of bounds for axis 1 with size 20"):
        vector(e, 10)


def _while_nodes(f, *args):
    from arrjit.core.ir import Op
    return [n for n in f.lower(*args).graph.nodes if n.op is Op.WHILE]


def _forward_substitution(L, b):
    def row(i, carry):
        L, x = carry                                   # L comes back unchanged
        return L, x.at[i].set((b[i] - anp.dot(L[i], x)) / L[i, i])
    return lax.fori_loop(0, b.shape[0], row, (L, anp.zeros(b.shape[0])))[1]


def test_a_carry_the_body_returns_unchanged_is_a_loop_constant_not_a_carry():
    """Only the counter and ``x`` are carried (and copied per iteration); ``L`` is read from
    its one buffer. Before, every iteration copied the whole matrix."""
    rng = np.random.default_rng(0)
    L = np.tril(rng.random((6, 6))) + 6 * np.eye(6)
    b = rng.random(6)
    f = jit(_forward_substitution)
    (loop,) = _while_nodes(f, L, b)
    assert loop.param["n_carry"] == 2
    assert [v.aval.shape for v in loop.outs] == [(), (6,)]
    np.testing.assert_allclose(f(L, b), np.linalg.solve(L, b), rtol=1e-12)


def test_unchanged_carries_keep_their_values_gradients_and_batching():
    import arrjit

    def powers(w, x):
        def step(_, carry):
            w, y, tag = carry                          # w and tag come back unchanged
            return w, y * w + 1.0, tag
        return lax.fori_loop(0, 3, step, (w, x, np.int32(7)))

    w, x = np.array([0.5, 2.0]), np.array([1.0, -1.0])
    got = jit(powers)(w, x)
    assert_same(got[0], w)
    assert_same(got[1], ((x * w + 1) * w + 1) * w + 1)
    assert_same(got[2], np.asarray(np.int32(7)))
    grad_w = arrjit.grad(lambda w: anp.sum(powers(w, x)[1]))(w)
    np.testing.assert_allclose(grad_w, 3 * x * w ** 2 + 2 * w + 1, rtol=1e-12)
    batched = jit(vmap(lambda w: powers(w, x)[1]))(np.array([[0.5, 2.0], [1.0, 3.0]]))
    np.testing.assert_allclose(batched[1], ((x * [1.0, 3.0] + 1) * [1.0, 3.0] + 1)
                               * [1.0, 3.0] + 1, rtol=1e-12)


def test_a_while_loop_whose_body_changes_nothing_still_runs_its_condition():
    def f(x):
        return lax.while_loop(lambda c: anp.sum(c) > 100.0, lambda c: c, x)

    assert_same(jit(f)(np.ones(3)), np.ones(3))


@pytest.mark.parametrize("init", [0, 0.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_python_scalar_carry_takes_the_dtype_the_body_gives_it(init, dtype):
    """As in JAX: the scalar enters weakly typed, so ``c + x[i]`` decides the carry's dtype
    (JAX returns float32 here for both initial values)."""
    x = np.arange(5, dtype=dtype) + 0.5
    got = jit(lambda x: lax.fori_loop(0, 5, lambda i, c: c + x[i], init))(x)
    assert got.dtype == dtype and float(got) == 12.5
    counted = jit(lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x[0]),
                                           (0, 1)))(x)
    assert counted[0].dtype == np.int64 and counted[1].dtype == dtype
    assert float(counted[1]) == 0.5 ** 5


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_vector_products_in_a_loop_body_run_natively(dtype):
    """``dot`` of vectors, matrix @ vector (also through a transposed view) and vector @
    matrix inside the body: the driver runs them, no iteration returns to Python."""
    rng = np.random.default_rng(3)
    m = (rng.random((7, 7)) * 4).astype(dtype)
    v0 = (rng.random(7) * 4).astype(dtype)

    def f(m, v):
        def body(i, v):
            w = m @ v + m.T @ v - v @ m
            return w / (anp.abs(anp.dot(v, v)) + 1) if dtype != np.int64 else w % 97 + i
        return lax.fori_loop(0, 5, body, v)

    want = v0
    for i in range(5):
        w = m @ want + m.T @ want - want @ m
        want = w / (np.abs(np.dot(want, want)) + 1) if dtype != np.int64 else w % 97 + i
    jitted = jit(f)
    got = jitted(m, v0)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    (loop,) = _loop_runs(jitted, m, v0)
    assert loop.native is not None


@pytest.mark.parametrize("rows", [8, 13, 21])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_matrix_vector_products_by_blocks_of_rows(rows, dtype):
    """Eight rows at a time and the rows left over, in a native loop and on matrices that are
    not C-contiguous (``mathlib.matrix_vector`` called directly)."""
    from numba import njit

    from arrjit.backends.cpu import mathlib

    rng = np.random.default_rng(rows)
    m = (rng.random((rows, 11)) * 4).astype(dtype)
    back = (rng.random((11, rows)) * 4).astype(dtype)
    v0 = (rng.random(11) * 4).astype(dtype)
    def step(w, v):
        return w % 7 + v if dtype == np.int64 else w / 100 + v

    f = jit(lambda m, back, v: lax.fori_loop(0, 2, lambda i, v: step(back @ (m @ v), v), v))
    want = v0
    for _ in range(2):
        want = step(back @ (m @ want), want)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(f(m, back, v0), want, rtol=rtol)
    (loop,) = _loop_runs(f, m, back, v0)
    assert loop.native is not None

    @njit
    def product(a, x, zero, first):
        out = np.full(a.shape[0], 9, a.dtype)
        mathlib.matrix_vector(a, x, out, zero, first)
        return out

    zero = np.zeros((), dtype)[()]
    for a in (m, np.asfortranarray(m), m[:, ::-1]):
        np.testing.assert_allclose(product(a, v0, zero, 0), a @ v0, rtol=rtol)
        for first in (-3, 5, rows, rows + 4):    # rows before ``first`` (clamped) are zero
            kept = min(max(first, 0), rows)
            want = np.concatenate([np.zeros(kept, dtype), (a @ v0)[kept:]])
            np.testing.assert_allclose(product(a, v0, zero, first), want, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_small_matrix_products_in_a_loop_body_run_natively(dtype):
    m = (np.random.default_rng(4).random((4, 4)) * 4).astype(dtype) / (4 if dtype != np.int64 else 1)
    rect = (np.arange(12).reshape(4, 3) % 3).astype(dtype)

    def f(m, rect):
        def step(i, c):
            a, b = c
            return (a @ m + 1).astype(dtype) % 97 if dtype == np.int64 else a @ m + 1, a @ rect
        return lax.fori_loop(0, 3, step, (np.eye(4, dtype=dtype), np.zeros((4, 3), dtype)))

    a, b = np.eye(4, dtype=dtype), np.zeros((4, 3), dtype)
    for _ in range(3):
        a, b = ((a @ m + 1) % 97 if dtype == np.int64 else a @ m + 1), a @ rect
    g = jit(f)
    assert g.lower(m, rect).loops == ["natively, one compiled driver for every iteration"]
    got = g(m, rect)
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got[0], a, rtol=rtol)
    np.testing.assert_allclose(got[1], b, rtol=rtol)


def test_a_large_matrix_product_in_a_loop_body_keeps_blas_and_stays_correct():
    m = np.random.default_rng(4).random((80, 80)) / 80

    def f(m):
        return lax.fori_loop(0, 3, lambda i, a: a @ m + 1.0, np.eye(80))

    want = np.eye(80)
    for _ in range(3):
        want = want @ m + 1.0
    g = jit(f)
    (report,) = g.lower(m).loops
    assert "matmul(float64[80,80], float64[80,80])" in report
    np.testing.assert_allclose(g(m), want, rtol=1e-13)


def test_lower_and_the_compile_log_say_how_each_loop_runs(caplog):
    import arrjit

    x = np.ones(4)
    native = jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2 + i, x))
    inverting = jit(lambda x: lax.fori_loop(0, 3, lambda i, v: anp.linalg.inv(v) * 2, x))
    nested = jit(lambda x: lax.fori_loop(
        0, 3, lambda i, v: lax.fori_loop(0, 2, lambda j, w: anp.linalg.solve(w, w), v), x))
    assert native.lower(x).loops == ["natively, one compiled driver for every iteration"]
    assert "# loop 0: natively" in native.lower(x).as_text()
    (report,) = inverting.lower(np.eye(3)).loops
    assert report.startswith("from Python, once per iteration") and "inv(float64[3,3])" in report
    (report,) = nested.lower(np.eye(4)).loops
    assert report.startswith("from Python, once per iteration: its body holds a loop that "
                             "cannot run natively (its body calls the library step solve(")
    arrjit.config.update("log_compiles", True)
    try:
        with caplog.at_level("WARNING", logger="arrjit"):
            jit(lambda x: lax.fori_loop(0, 2, lambda i, v: anp.linalg.inv(v), x))(np.eye(3))
    finally:
        arrjit.config.update("log_compiles", False)
    assert "loop 0 runs from Python, once per iteration: its body calls the library step inv" \
        in caplog.text


TRANSPOSED_PRODUCTS = {   # a loop step over (q, v): q (6x4) a carry, m (6x6) an invariant
    "q.T @ v": lambda q, m, v: v * 0.5 + q @ (q.T @ v) * 0.1,
    "v @ q.T": lambda q, m, v: v * 0.5 + (q.T @ v) @ q.T * 0.1,
    "q.T @ m": lambda q, m, v: v * 0.5 + q @ (q.T @ m)[:, 0] * 0.1,
    "m @ m.T": lambda q, m, v: v * 0.5 + (m @ m.T) @ v * 0.01,
}


@pytest.mark.parametrize("name", sorted(TRANSPOSED_PRODUCTS))
def test_products_of_transposed_operands_run_in_the_driver(name):
    """A product reading an operand transposed (``q.T @ v`` reads ``q``'s buffer) runs in
    the loop's driver: a vector-matrix product over the stored rows, or the transposed view."""
    step = TRANSPOSED_PRODUCTS[name]
    rng = np.random.default_rng(4)
    q0, m, v0 = rng.random((6, 4)), rng.random((6, 6)), rng.random(6)

    def body(i, c, ns=anp):
        q, v = c
        return q * 0.9 + ns.outer(v, v)[:, :4] * 0.01, step(q, m, v)
    f = jit(lambda q, v: lax.fori_loop(0, 3, body, (q, v)))
    (loop,) = _loop_runs(f, q0, v0)
    assert loop.native is not None
    want = (q0, v0)
    for i in range(3):
        want = body(i, want, np)
    for got, expected in zip(f(q0, v0), want):
        np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_gram_schmidt_with_a_masked_projection_runs_natively():
    """Each column minus its projection on the columns before it, ``q.T @ v`` masked: one
    native driver, an orthonormal basis equal to NumPy's QR up to signs."""
    def orthonormal(a):
        cols = anp.arange(a.shape[1])

        def column(j, q):
            v = a[:, j]
            w = v - q @ anp.where(cols < j, q.T @ v, 0.0)
            return q.at[:, j].set(w / anp.sqrt(anp.sum(w * w)))
        return lax.fori_loop(0, a.shape[1], column, anp.zeros_like(a))

    a = np.random.default_rng(5).random((40, 9))
    f = jit(orthonormal)
    (loop,) = _loop_runs(f, a)
    assert loop.native is not None
    q, r = np.linalg.qr(a)
    np.testing.assert_allclose(f(a), q * np.sign(np.diag(r)), atol=1e-12)
