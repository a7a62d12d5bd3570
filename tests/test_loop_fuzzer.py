"""Differential fuzzing of loop programs: random ``fori_loop`` / ``while_loop`` / ``scan``
programs with scalar and array carries, positions taken from the loop counter, ``.at``
updates, dynamic slices, vector and matrix products, sorts, running sums and nested loops,
compiled by arrjit and run step by step in Python over NumPy (``NumpyLoops``: JAX's
documented semantics, written here). Every loop that arrjit compiles must run natively.

``ARRJIT_TEST_EXAMPLES`` sets the number of programs (30 by default)."""
import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import arrjit
import arrjit.numpy as anp
from arrjit import lax


class NumpyLoops:
    """The loop and slicing functions the programs use, run eagerly over NumPy."""

    @staticmethod
    def fori_loop(lower, upper, body, carry):
        for i in range(lower, upper):
            carry = body(np.int64(i), carry)
        return carry

    @staticmethod
    def while_loop(cond, body, carry):
        while cond(carry):
            carry = body(carry)
        return carry

    @staticmethod
    def scan(step, carry, xs):
        ys = []
        for x in xs:
            carry, y = step(carry, x)
            ys.append(y)
        return carry, np.stack(ys)

    @staticmethod
    def _start(start, dim: int, size: int) -> int:
        start = int(start) + (dim if start < 0 else 0)     # negative counts from the end
        return min(max(start, 0), dim - size)              # then clamped, as in JAX

    @classmethod
    def dynamic_slice(cls, x, starts, sizes):
        s = cls._start(starts[0], x.shape[0], sizes[0])
        return x[s:s + sizes[0]]

    @classmethod
    def dynamic_update_slice(cls, x, update, starts):
        s = cls._start(starts[0], x.shape[0], update.shape[0])
        x = x.copy()
        x[s:s + update.shape[0]] = update
        return x

    @staticmethod
    def set_at(x, i, v):
        x = x.copy()
        x[i] = v
        return x

    @staticmethod
    def add_at(x, i, v):
        x = x.copy()
        x[i] += v
        return x


class ArrjitLoops:
    fori_loop = staticmethod(lax.fori_loop)
    while_loop = staticmethod(lax.while_loop)
    dynamic_slice = staticmethod(lax.dynamic_slice)
    dynamic_update_slice = staticmethod(lax.dynamic_update_slice)

    @staticmethod
    def scan(step, carry, xs):
        return lax.scan(step, carry, xs)

    @staticmethod
    def set_at(x, i, v):
        return x.at[i].set(v)

    @staticmethod
    def add_at(x, i, v):
        return x.at[i].add(v)


# Statements over the carries (a: vector, s: 0-d), the loop position i, the matrix m (its row
# r at this step) and a drawn constant k (a small int). Each keeps values bounded.
def _statement(ns, L, name: str, k: int, i, a, s, row, m):
    n = a.shape[0]
    half = a.dtype.type(0.5)
    if name == "scale":
        return a * half + s * 0.25, s
    if name == "gather":
        return a, s * half + a[(i + k) % n]
    if name == "scatter":
        return L.set_at(a, (i * k) % n, s), s
    if name == "scatter_add":
        return L.add_at(a, (i + k + 1) % n, a[i % n] * 0.25), s
    if name == "window":
        w = L.dynamic_slice(a, (i - k,), (min(k + 1, n),))
        return a, s * half + ns.sum(w) * 0.125
    if name == "update_window":
        size = min(k + 1, n)
        piece = L.dynamic_slice(a, (i,), (size,)) * half
        return L.dynamic_update_slice(a, piece, (i + k - 2,)), s
    if name == "dot":
        return a, s * half + ns.dot(m[(i + k) % m.shape[0]], a) * 0.01
    if name == "matrix":
        product = ns.outer(a, a) @ m.T
        return a * half + product[:, k % m.shape[0]] * 0.01, s
    if name == "masked":     # a product whose rows before the loop position are thrown away
        kept = _MASKS[k % len(_MASKS)](ns, ns.arange(m.shape[0]), i, m @ a)
        return a * half + (m.T @ kept) * 0.01, s
    if name == "row":
        return a * half + row * 0.5, s
    if name == "select":
        return ns.where(a > s, a - s * half, a + half), s
    if name == "reduce":
        return a, s * half + ns.max(a) * 0.25 - ns.min(a) * 0.125
    if name == "cumulative":
        return ns.cumsum(a) * (half / n), s
    if name == "sort":
        return ns.sort(a) * half + a * 0.25, s
    if name == "rank":
        order = ns.argsort(ns.round(a * 2), stable=True)     # ties: the first one wins
        return a, s * half + a[order[k % n]] * 0.5
    if name == "nested_vector":
        def inner(j, a):
            return L.add_at(a, (j + i) % n, s * 0.125)
        return L.fori_loop(0, k + 1, inner, a), s
    if name == "nested_scalar":
        def inner(j, t):
            return t * half + a[j % n] * 0.25
        return a, L.fori_loop(0, k + 2, inner, s)
    if name == "nested_while":
        def more(c):
            return c[0] < k + 1

        def step(c):
            j, b = c
            return j + 1, L.set_at(b, j % n, b[j % n] * half + s * 0.5)
        return L.while_loop(more, step, (np.int64(0), a))[1], s
    raise AssertionError(name)


_MASKS = (lambda ns, rows, i, p: ns.where(rows >= i, p, 0.0),
          lambda ns, rows, i, p: ns.where(i < rows, p, p * 0.5),
          lambda ns, rows, i, p: ns.where(rows < i, 0.0, p),
          lambda ns, rows, i, p: ns.where(rows <= i, p, 0.0))    # reads the rows before i

STATEMENTS = ["scale", "gather", "scatter", "scatter_add", "window", "update_window", "dot",
              "matrix", "masked",
              "row", "select", "reduce", "cumulative", "sort", "rank", "nested_vector",
              "nested_scalar",
              "nested_while"]
LOOPS = ["fori", "while", "scan"]


def run_program(ns, L, program, a, s, m):
    loop, trips, statements = program

    def body(i, a, s, row):
        for name, k in statements:
            a, s = _statement(ns, L, name, k, i, a, s, row, m)
        return a, s

    if loop == "fori":
        return L.fori_loop(0, trips, lambda i, c: body(i, *c, m[i % m.shape[0]]), (a, s))
    if loop == "while":
        def step(c):
            i, a, s = c
            return (i + 1, *body(i, a, s, m[i % m.shape[0]]))
        return L.while_loop(lambda c: c[0] < trips, step, (np.int64(0), a, s))[1:]

    def scanned(c, row):
        i, a, s = c
        a, s = body(i, a, s, row)
        return (i + 1, a, s), s
    (_, a, s), ys = L.scan(scanned, (np.int64(0), a, s), m)
    return a, s, ys


@st.composite
def programs(draw):
    loop = draw(st.sampled_from(LOOPS))
    statements = draw(st.lists(st.tuples(st.sampled_from(STATEMENTS), st.integers(0, 4)),
                               min_size=1, max_size=5))
    dtype = draw(st.sampled_from(["float64", "float32"]))
    n, rows = draw(st.integers(1, 7)), draw(st.integers(1, 5))
    return (loop, draw(st.integers(0, 9)), tuple(statements)), dtype, n, rows, draw(
        st.integers(0, 2**31))


def _native_everywhere(f, *args) -> bool:
    from arrjit.backends.cpu.loops import LoopRun

    loops = [s for s in f.lower(*args)._entry.rendered.runs if isinstance(s, LoopRun)]
    return all(loop.native is not None for loop in loops)


@settings(max_examples=int(os.environ.get("ARRJIT_TEST_EXAMPLES", "30")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_loop_programs_match_numpy_step_by_step(case):
    program, dtype, n, rows, seed = case
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dtype)
    s = np.asarray(rng.standard_normal(), dtype)
    m = rng.standard_normal((rows, n)).astype(dtype)
    want = run_program(np, NumpyLoops, program, a, s, m)
    f = arrjit.jit(lambda a, s, m: run_program(anp, ArrjitLoops, program, a, s, m))
    got = f(a, s, m)
    assert _native_everywhere(f, a, s, m), f.lower(a, s, m).loops
    tol = 2e-4 if dtype == "float32" else 1e-11
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
