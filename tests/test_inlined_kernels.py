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


def _small_state_rows(template, mode):
    """A loop whose small carry (in registers) is written, whole, into a region of a table at
    the loop's position, as ``template(i)`` selects it; ``mode``: ``set`` or ``add``."""
    def run(v, table):
        def step(i, c):
            v, table = c
            v = v * 0.5 + 1.0
            at = table.at[template(i)]
            return v, at.set(v) if mode == "set" else at.add(v)
        return lax.fori_loop(0, 5, step, (v, table))
    return run


ROW_TEMPLATES = {   # table shape, state shape, the region at step i
    "row": ((7, 3), (3,), lambda i: i),
    "row from the end": ((7, 3), (3,), lambda i: -1 - i),
    "row, then a whole slice": ((7, 3), (3,), lambda i: (i + 1, slice(None))),
    "block of a 3-d table": ((6, 2, 2), (2, 2), lambda i: i),
    "column at two positions": ((5, 6, 2), (2,), lambda i: (i, i)),
}


@pytest.mark.parametrize("mode", ["set", "add"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("name", sorted(ROW_TEMPLATES))
def test_a_small_value_in_registers_is_stored_into_its_region_element_by_element(name, dtype,
                                                                                 mode):
    """Its elements go from the registers to the region; the value's own buffer is not
    written first (``indexing.updates_by_elements``): NumPy's values, positions counted from
    the end as NumPy does."""
    from arrjit.backends.cpu import indexing
    from arrjit.plan import LibraryStep

    table_shape, state_shape, template = ROW_TEMPLATES[name]
    run = _small_state_rows(template, mode)
    f = jit(run)
    v0 = np.arange(1, 1 + int(np.prod(state_shape))).reshape(state_shape).astype(dtype)
    table = np.full(table_shape, 2, dtype)
    loop = _loop(f, v0, table)
    plan = loop.body.plan
    (scatter,) = [s for s in plan.steps if isinstance(s, LibraryStep)]
    assert indexing.updates_by_elements(scatter, plan.slot_avals)
    got_v, got_table = f(v0, table)
    want_v, want_table = v0.copy(), table.copy()
    for i in range(5):
        want_v = want_v * dtype(0.5) + dtype(1.0)
        if mode == "set":
            want_table[template(i)] = want_v
        else:
            want_table[template(i)] += want_v
    assert_same(got_v, want_v, rtol=1e-6)
    assert_same(got_table, want_table, rtol=1e-6)


def test_a_region_store_of_registers_out_of_range_raises_numpys_error():
    f = jit(_small_state_rows(lambda i: 2 * i, "set"))
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        f(np.ones(3), np.zeros((6, 3)))


@pytest.mark.parametrize("template, ok", [
    ((("array", 0),), True), ((0, ("array", 0)), True),
    ((("array", 0), ("slice", None, None, None)), True),
    ((("slice", None, None, None), ("array", 0)), False),     # a column: strided
    ((("array", 0), ("slice", 1, None, None)), False),       # part of a row
])
def test_which_regions_take_updates_element_by_element(template, ok):
    from arrjit.backends.cpu import indexing
    from arrjit.core.dtypes import Aval
    from arrjit.core.ir import Node, Op, Var, make_params
    from arrjit.plan import LibraryStep

    f64, i64 = np.dtype("float64"), np.dtype("int64")
    table = (4, 5, 3) if template[0] == 0 else (5, 3)
    probe = np.zeros(table)[tuple(0 if isinstance(t, tuple) and t[0] == "array" else
                                  t if isinstance(t, int) else slice(*t[1:]) for t in template)]
    avals = [Aval(table, f64), Aval((), i64), Aval(probe.shape, f64)]
    node = Node(Op.SCATTER, (Var(0, avals[0]), Var(1, avals[1]), Var(2, avals[2])),
                Var(3, avals[0]), make_params(index=template, mode="set"))
    step = LibraryStep(node, (0, 1, 2), (3,))
    assert indexing.updates_by_elements(step, avals + [avals[0]]) is ok


def test_loads_nothing_reads_are_dropped_and_every_block_keeps_a_statement():
    from arrjit.backends.cpu.unused import without_unused_loads

    source = ("def f(x, c0):\n"
              "    c0_s = (_M.flat(c0)[0], _M.flat(c0)[1],)\n"
              "    a = x[0]\n"
              "    b = g(x)\n"                   # a call may raise: kept
              "    if a > 0:\n"
              "        d = c0_s\n"               # the block's only statement: kept
              "    e = (\n"
              "        a)\n"                     # over two lines: kept
              "    return a\n")
    assert without_unused_loads(source) == source
    dropped = source.replace("        d = c0_s\n", "        d = c0_s\n        q = a\n")
    assert without_unused_loads(dropped) == source


def test_a_driver_reads_every_local_it_loads():
    """An ODE step scanned over time: its kernel folds a constant operand into literals, and
    the driver does not load that operand (``unused``)."""
    import ast

    def trajectory(v):
        def step(v, _):
            k1 = rates(anp, v)
            nxt = v + 0.01 * (k1 + 2.0 * rates(anp, v + 0.005 * k1))    # a midpoint step
            return nxt, nxt
        return lax.scan(step, v, None, length=20)[1]

    def rates(ns, v):
        return ns.stack([v[1] - v[0], v[0] * (2.0 - v[2]), v[0] * v[1] - v[2]])

    f = jit(trajectory)
    v0 = np.array([1.0, 0.5, 0.25])
    source = _loop(f, v0).native.source
    tree = ast.parse(source)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}
    loads = {s.targets[0].id for s in ast.walk(tree) if isinstance(s, ast.Assign)
             and isinstance(s.targets[0], ast.Name)
             and isinstance(s.value, (ast.Tuple, ast.Name, ast.Constant))}
    assert loads and loads <= read
    want, v = [], v0
    for _ in range(20):
        k1 = rates(np, v)
        v = v + 0.01 * (k1 + 2.0 * rates(np, v + 0.005 * k1))
        want.append(v)
    assert_same(f(v0), np.array(want), rtol=1e-14)
