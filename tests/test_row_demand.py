"""Matrix-vector products in a loop body compute only the rows something reads
(``passes.demand``, ``LibraryStep.rows_from``): masked solvers do half the work, with NumPy's
values."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from arrjit.plan import LibraryStep


def _products(f, *args):
    """The matrix-vector steps of the jitted ``f``'s loop bodies, and whether each loop runs
    natively."""
    from arrjit.backends.cpu.loops import LoopRun

    runs = [r for r in f.lower(*args)._entry.rendered.runs if isinstance(r, LoopRun)]
    steps = [s for r in runs for s in r.body.plan.steps
             if isinstance(s, LibraryStep) and s.node.op.value == "matmul"]
    return steps, [r.native is not None for r in runs]


def _spd(n, seed=0):
    m = np.random.default_rng(seed).random((n, n))
    return m @ m.T + n * np.eye(n)


# masks under which a column step keeps rows j.. (each a form a user writes)
KEEP_FROM_J = {
    "rows >= j": lambda ns, rows, j, s, zero: ns.where(rows >= j, s, zero),
    "j <= rows": lambda ns, rows, j, s, zero: ns.where(j <= rows, s, zero),
    "rows < j, else": lambda ns, rows, j, s, zero: ns.where(rows < j, zero, s),
    "j > rows, else": lambda ns, rows, j, s, zero: ns.where(j > rows, zero, s),
}


def cholesky(ns, loops, a, keep):
    n = a.shape[0]
    rows = ns.arange(n)

    def column(j, low):
        s = a[:, j] - low @ ns.where(rows < j, low[j], 0.0)
        return low.at[:, j].set(keep(ns, rows, j, s / ns.sqrt(s[j]), 0.0))
    return loops.fori_loop(0, n, column, ns.zeros_like(a))


def numpy_cholesky(a, keep):
    n = a.shape[0]
    rows, low = np.arange(n), np.zeros_like(a)
    for j in range(n):
        s = a[:, j] - low @ np.where(rows < j, low[j], 0.0)
        low[:, j] = keep(np, rows, j, s / np.sqrt(s[j]), 0.0)
    return low


@pytest.mark.parametrize("n", [5, 13, 40])
@pytest.mark.parametrize("mask", sorted(KEEP_FROM_J))
def test_a_masked_column_step_computes_the_rows_it_keeps(mask, n):
    keep = KEEP_FROM_J[mask]
    a = _spd(n, n)
    f = arrjit.jit(lambda a: cholesky(anp, lax, a, keep))
    (product,), native = _products(f, a)
    assert native == [True]
    assert product.rows_from == 0           # the body's first input: the loop's counter
    got = f(a)
    np.testing.assert_allclose(got, numpy_cholesky(a, keep), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-10, atol=1e-12)


def test_a_counter_that_runs_negative_reads_every_row():
    """``s[j]`` at a negative ``j`` is row ``n + j``, above ``j``: the rows from ``max(j, 0)``
    include it (every row)."""
    n = 9
    a = np.random.default_rng(1).standard_normal((n, n))
    rows = np.arange(n)

    def body(ns, j, x):
        s = a @ x + 1.0
        return ns.where(rows >= j, s * s[j] / 10.0, x)

    f = arrjit.jit(lambda x: lax.fori_loop(-n, 3, lambda j, x: body(anp, j, x), x))
    x0 = np.linspace(-1.0, 1.0, n)
    (product,), native = _products(f, x0)
    assert native == [True] and product.rows_from == 0
    want = x0
    for j in range(-n, 3):
        want = body(np, j, want)
    np.testing.assert_allclose(f(x0), want, rtol=1e-12)


def _counted(ns, a, rows):
    """Loop bodies whose product every row of is read: a carry, a sum, a mask of the
    wrong side, a comparison with a value that is no ``arange``, an integer product."""
    def returned(j, c):
        return a @ c[0] * 0.5, c[1] + 1.0

    def summed(j, c):
        s = a @ c[0]
        return ns.where(rows >= j, s, 0.0) * 0.5 + ns.sum(s) * 1e-3, c[1]

    def wrong_side(j, c):
        return ns.where(rows <= j, a @ c[0], c[0]) * 0.5, c[1]

    def not_arange(j, c):
        return ns.where(rows[::-1] >= j, a @ c[0], c[0]) * 0.5, c[1]

    def rounded(j, c):
        s = (a @ c[0]).astype(np.int64)
        return ns.where(rows >= j, s // 3, 0).astype(np.float64) + c[0] * 0.5, c[1]
    return {"returned": returned, "summed": summed, "wrong side": wrong_side,
            "not arange": not_arange, "integer": rounded}


@pytest.mark.parametrize("name", sorted(_counted(np, None, None)))
def test_products_whose_every_row_is_read_compute_every_row(name):
    n = 12
    a = np.random.default_rng(2).standard_normal((n, n)) / 3
    rows = np.arange(n)
    x0 = (np.linspace(-1.0, 2.0, n), np.float64(0.0))
    body = _counted(anp, a, rows)[name]
    f = arrjit.jit(lambda c: lax.fori_loop(0, n, body, c))
    products, native = _products(f, x0)
    assert native == [True] and products
    assert all(p.rows_from == -1 for p in products)
    want = x0
    for j in range(n):
        want = _counted(np, a, rows)[name](j, want)
    for g, w in zip(f(x0), want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
