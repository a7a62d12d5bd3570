"""A native loop's driver holds its body's kernels and region stores as statements of its own
(``backends.cpu.inlining``), not as functions numba compiles one by one; what cannot stand as
statements (a nested loop, a gather returning its element) stays a function."""
import numpy as np
import pytest

import arrjit.numpy as anp
from arrjit import jit, lax
from arrjit.backends.cpu.inlining import NotInlinable, inline_body
from arrjit.backends.cpu.loops import LoopRun

from helpers import assert_same


def _loop(f, *args) -> LoopRun:
    (loop,) = [s for s in f.lower(*args)._entry.rendered.runs if isinstance(s, LoopRun)]
    assert loop.native is not None
    return loop


def test_a_body_is_renamed_apart_and_reads_its_arguments():
    source = ("def k(w0, r0, P, start, stop):\n"
              "    w0 = flat(w0)\n"
              "    p0 = P[0]\n"
              "    for i0 in range(start, stop):\n"
              "        v0 = load(r0, i0) + p0\n"
              "        store(w0, i0, v0)\n"
              "    w0 = other(w0)\n"
              "    store(w0, 0, 1.0)\n")
    lines = inline_body(source, "k", "a3_", ["nxt1", "t0", "P2", "0", "E[1]"])
    assert lines == ["a3_w0_1 = flat(nxt1)",
                     "a3_p0 = P2[0]",
                     "for a3_i0 in range(0, E[1]):",
                     "    a3_v0 = load(t0, a3_i0) + a3_p0",
                     "    store(a3_w0_1, a3_i0, a3_v0)",
                     "a3_w0_2 = other(a3_w0_1)",
                     "store(a3_w0_2, 0, 1.0)"]
    # the same source again, for another call: the parsed tree is not changed by the first
    assert inline_body(source, "k", "a4_", ["x", "y", "P", "1", "2"])[0] == "a4_w0_1 = flat(x)"


@pytest.mark.parametrize("body, why", [
    ("    return load(r0, 0)\n", "returns"),
    ("    for i in range(3):\n        if i:\n            return i\n", "returns"),
    ("    for i in range(3):\n        r0 = f(r0)\n", "assigns"),
])
def test_a_body_that_returns_or_rebinds_a_parameter_in_a_block_is_not_inlined(body, why):
    with pytest.raises(NotInlinable, match=why):
        inline_body("def k(r0, P):\n" + body, "k", "a0_", ["x", "P"])


def test_a_body_whose_source_defines_helpers_stays_a_call():
    source = "def helper(a):\n    return a\n\n\ndef k(r0, P):\n    helper(r0)\n"
    with pytest.raises(NotInlinable, match="defines \\['helper'\\] too"):
        inline_body(source, "k", "a0_", ["x", "P"])


def test_bad_requests_name_what_is_wrong():
    with pytest.raises(ValueError, match="takes"):
        inline_body("def k(a, b):\n    pass\n", "k", "a0_", ["x"])
    with pytest.raises(ValueError, match="no function 'g'"):
        inline_body("def k(a):\n    pass\n", "g", "a0_", ["x"])


def _relax(n, steps):
    """A loop over arrays too big for registers: an elementwise kernel and a row store."""
    def run(x, rows):
        def body(i, state):
            x, rows = state
            x = 0.5 * x + anp.sin(x)
            return x, rows.at[i].set(x * 2.0)
        return lax.fori_loop(0, steps, body, (x, rows))
    return run


def test_array_kernels_and_region_stores_are_statements_of_the_driver():
    n, steps = 40, 6
    f = jit(_relax(n, steps))
    x, rows = np.linspace(0.0, 1.0, n), np.zeros((steps, n))
    loop = _loop(f, x, rows)
    assert loop.native.extra.array_calls >= 2
    assert loop.native.extra.functions == {}     # nothing for numba to compile on its own
    got_x, got_rows = f(x, rows)
    want_x, want_rows = x.copy(), rows.copy()
    for i in range(steps):
        want_x = 0.5 * want_x + np.sin(want_x)
        want_rows[i] = want_x * 2.0
    assert_same(got_x, want_x, rtol=1e-15)
    assert_same(got_rows, want_rows, rtol=1e-15)


def test_an_inlined_store_out_of_range_raises_numpys_error_and_leaves_the_carry():
    def run(rows):
        return lax.fori_loop(0, 5, lambda i, r: r.at[i * 2].set(i * 1.0), rows)

    f = jit(run)
    rows = np.zeros((6, 20))
    assert _loop(f, rows).native.extra.functions == {}
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        f(rows)
    assert_same(rows, np.zeros((6, 20)))
    ok = f(np.zeros((9, 20)))
    assert_same(ok[:, 0], np.array([0.0, 0, 1, 0, 2, 0, 3, 0, 4]))


def test_an_inner_loop_is_a_function_with_its_kernels_inlined_into_it():
    def sweeps(grid):
        def row(i, g):
            return lax.fori_loop(1, g.shape[1] - 1, lambda j, g: g.at[i, j].set(
                0.25 * (g[i - 1, j] + g[i + 1, j] + g[i, j - 1] + g[i, j + 1])), g)
        return lax.fori_loop(1, grid.shape[0] - 1, row, grid)

    f = jit(sweeps)
    grid = np.random.default_rng(0).random((12, 30))
    functions = _loop(f, grid).native.extra.functions
    assert len(functions) == 1 and next(iter(functions)).startswith("loop_")
    want = grid.copy()
    for i in range(1, 11):
        for j in range(1, 29):
            want[i, j] = 0.25 * (want[i - 1, j] + want[i + 1, j] + want[i, j - 1] + want[i, j + 1])
    assert_same(f(grid), want, rtol=1e-14)
