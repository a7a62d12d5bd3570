"""Region updates: ``x.at[ints and slices].set/add/multiply/min/max(v)`` of a value the program
computed runs as a store, through the region's index map, into that value's buffer, in the
loop nest that computes ``v`` (``passes/regions.py``); anywhere else it is a copy."""

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.lax import fori_loop
from arrjit.passes.fuse import partition
from arrjit.passes.kernel import Kernel, LibraryCall
from arrjit.passes.simplify import simplify
from helpers import assert_same

S = slice


def _steps(fn, *args):
    return partition(simplify(arrjit.make_graph(fn)(*args))).steps


def _numpy_update(y, index, mode, v):
    if mode == "set":
        y[index] = v
    else:
        y[index] = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                    "max": np.maximum}[mode](y[index], v)
    return y


def test_a_slice_update_is_a_store_of_the_nest_computing_it():
    x = np.linspace(-3.0, 3.0, 1000)

    def f(x):
        return anp.sin(x).at[1:].set(x[:-1] * 2.0)

    steps = _steps(f, x)
    assert not any(isinstance(s, LibraryCall) for s in steps)
    update = steps[-1]
    assert isinstance(update, Kernel) and update.sizes == (999,)  # over the region only
    assert update.stores[0].access.offset == 1
    plan = arrjit.jit(f).lower(x)._entry.rendered.plan
    assert plan.steps[0].slots[0] == plan.steps[1].slots[0]         # one buffer, in place
    want = np.sin(x)
    want[1:] = x[:-1] * 2.0
    assert_same(arrjit.jit(f)(x), want)


CASES = [   # base shape, index, updates shape
    ((10,), (S(1, None),), (9,)),
    ((10,), (S(None, None, -2),), (5,)),
    ((10,), (S(8, 1, -3),), ()),
    ((10,), (-1,), ()),
    ((10,), (S(None),), (1,)),
    ((4, 5), (S(1, 3), 2), (2,)),
    ((4, 5), (Ellipsis, S(None, None, 2)), (4, 1)),
    ((4, 5), (None, 1, S(None, -1)), (1, 1, 4)),
    ((4, 5), (3,), (1, 5)),
    ((2, 3, 4), (S(None), 0, S(1, None, 2)), (2, 2)),
    ((2, 3, 4), (1, Ellipsis), (4,)),
    ((), (), ()),
]


MODES = ("set", "add", "multiply", "min", "max")


@pytest.mark.parametrize("shape,index,vshape", CASES)
def test_region_updates_match_numpy(shape, index, vshape):
    rng = np.random.default_rng(len(shape) + len(index))
    x = rng.standard_normal(shape)
    v = rng.standard_normal(vshape)
    if v.ndim:
        v.flat[0] = np.nan                    # min/max propagate it as NumPy does

    def updates(x, v):                        # one update of its own value per mode
        return tuple(getattr((x * (2.0 + k)).at[index], mode)(v * 3.0)
                     for k, mode in enumerate(MODES))

    assert not any(isinstance(s, LibraryCall) for s in _steps(updates, x, v))
    for k, (mode, got) in enumerate(zip(MODES, arrjit.jit(updates)(x, v))):
        assert_same(got, _numpy_update(np.array(x * (2.0 + k)), index, mode, v * 3.0))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "complex128"])
def test_region_updates_of_each_dtype(dtype):
    x = (np.arange(24) % 5).astype(dtype).reshape(4, 6)
    v = (np.arange(6) % 3).astype(dtype)

    def f(x, v):
        y = (x + x).at[1].set(v).at[2:, ::2].add(v[:3])
        return y.at[0, -1].multiply(v[1]).at[-1].max(v)

    want = x + x
    want[1] = v
    want[2:, ::2] += v[:3]
    want[0, -1] *= v[1]
    want[-1] = np.maximum(want[-1], v)
    assert_same(arrjit.jit(f)(x, v), want)


def test_disjoint_updates_share_one_nest_and_overlapping_ones_run_in_order():
    x = np.arange(7.0)

    def grid(x):                               # a zero grid with two columns set
        n = x.shape[0]
        z = anp.zeros((n, n, 3))
        z = z.at[:, :, 0].set(x.reshape(-1, 1))
        return z.at[:, :, 1].set(x)

    nests = [s for s in _steps(grid, x) if isinstance(s, Kernel)]
    assert [len(k.stores) for k in nests] == [1, 2]   # the zeros, then both columns at once
    want = np.zeros((7, 7, 3))
    want[:, :, 0] = x.reshape(-1, 1)
    want[:, :, 1] = x
    assert_same(arrjit.jit(grid)(x), want)

    def overlapping(x):
        y = anp.cos(x).at[0:4].set(1.0).at[2:6].set(x[:4] * 5.0)
        return y.at[::-2].add(3.0).at[1].set(y[0] * 0 + 7.0)

    want = np.cos(x)
    want[0:4] = 1.0
    want[2:6] = x[:4] * 5.0
    want[::-2] += 3.0
    assert len([s for s in _steps(overlapping, x) if isinstance(s, Kernel)]) >= 4
    got = arrjit.jit(overlapping)(x)
    assert_same(got[[0, 2, 3, 4, 5, 6]], want[[0, 2, 3, 4, 5, 6]])
    assert got[1] == 7.0


def test_updates_of_arguments_constants_and_values_read_again_leave_them_unchanged():
    x, v = np.arange(6.0), np.full(3, -1.0)
    table = np.arange(6.0) * 10

    def of_argument(x, v):
        return x.at[:3].set(v)

    def of_constant(x, v):
        return anp.asarray(table).at[3:].set(v) + x

    def read_again(x, v):
        y = x * 2.0
        return y.at[::2].set(v) + y

    def returned_too(x, v):
        y = x * 2.0
        return y, y.at[1:4].add(v)

    def read_inside(x, v):                     # v reads the value being updated
        y = x * 2.0
        return y.at[1:4].set(y[:3] + v)

    for fn in (of_argument, of_constant, read_again, returned_too, read_inside):
        jitted = arrjit.jit(fn)
        for _ in range(2):                       # the second call sees the same buffers
            got = jitted(x, v)
            want = _eager(fn, x, v, table)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert_same(g, w)
    assert_same(x, np.arange(6.0))
    assert_same(table, np.arange(6.0) * 10)


def _eager(fn, x, v, table):
    """``fn`` on NumPy arrays with ``.at`` spelled as in-place writes on copies."""
    name = fn.__name__
    if name == "of_argument":
        y = x.copy(); y[:3] = v; return y
    if name == "of_constant":
        y = table.copy(); y[3:] = v; return y + x
    y = x * 2.0
    if name == "read_again":
        z = y.copy(); z[::2] = v; return z + y
    if name == "returned_too":
        z = y.copy(); z[1:4] += v; return y, z
    z = y.copy(); z[1:4] = y[:3] + v; return z


def test_an_array_index_update_of_a_computed_value_is_a_library_step_in_place():
    x, idx = np.arange(8.0), np.array([5, 1, 5])

    def f(x, idx):
        return (x * 2.0).at[idx].add(1.0)

    plan = arrjit.jit(f).lower(x, idx)._entry.rendered.plan
    assert [s.in_place for s in plan.steps if getattr(s, "node", None) is not None] == [True]
    want = x * 2.0
    np.add.at(want, idx, 1.0)
    assert_same(arrjit.jit(f)(x, idx), want)


def test_region_updates_on_threads_and_in_loops(two_threads_from_1000_elements):
    x = np.linspace(0.0, 1.0, 200_000)

    def halves(x):
        n = x.shape[0] // 2
        y = anp.exp(x).at[:n].set(anp.sqrt(x[n:]))
        return y.at[n:].multiply(x[::2])

    want = np.exp(x)
    want[:100_000] = np.sqrt(x[100_000:])
    want[100_000:] *= x[::2]
    assert_same(arrjit.jit(halves)(x), want)

    def loop(x):
        def body(i, acc):
            t = (acc * 0.5).at[1:].add(acc[:-1])
            return t.at[0].set(i * 1.0)
        return fori_loop(0, 5, body, x)

    small = np.arange(6.0)
    want = small.copy()
    for i in range(5):
        t = want * 0.5
        t[1:] += want[:-1]
        t[0] = i
        want = t
    assert_same(arrjit.jit(loop)(small), want)


@pytest.mark.parametrize("threads", [False, True])
def test_an_output_reshaping_a_buffer_of_its_own_is_a_view_of_it(threads, request):
    if threads:     # the generic run loop (threaded kernels) and the generated hot path
        request.getfixturevalue("two_threads_from_1000_elements")
    x = np.arange(40.0)

    def grid(x):
        n = x.shape[0]
        z = anp.zeros((n, n, 3)).at[:, :, 0].set(x.reshape(-1, 1)).at[:, :, 1].set(x)
        return z.reshape(n * n, 3), x.reshape(5, 8), (x * 2.0).reshape(8, 5)

    jitted = arrjit.jit(grid)
    plan = jitted.lower(x)._entry.rendered.plan
    # (x * 2.0).reshape is computed in its own shape: no buffer of x * 2 to view
    assert [o.kind.value for o in plan.outputs] == ["view", "slot", "slot"]
    assert all(v.shape != (1600, 3) for s in plan.steps for v in s.kernel.writes)  # no copy
    want = np.zeros((40, 40, 3))
    want[:, :, 0] = x.reshape(-1, 1)
    want[:, :, 1] = x
    first = jitted(x)
    for got, w in zip(first, (want.reshape(1600, 3), x.reshape(5, 8), (x * 2.0).reshape(8, 5))):
        assert_same(got, w)
        assert got.flags.c_contiguous and got.flags.writeable
    assert not np.shares_memory(first[1], x)          # an argument's reshape is a copy
    first[0][:] = -1.0                                # the next call's buffers are new
    assert_same(jitted(x)[0], want.reshape(1600, 3))


@pytest.mark.parametrize("threads", [False, True])
def test_a_reduction_set_into_a_region_is_stored_there_by_its_own_kernel(threads, request):
    if threads:     # full reductions split into per-thread partials, then combined
        request.getfixturevalue("two_threads_from_1000_elements")
    x = np.random.default_rng(0).standard_normal((6, 2000))

    def rows(x):                          # row r: the column sums of x - x[r], and more
        out = anp.zeros((x.shape[0], x.shape[1]))
        for r in range(x.shape[0]):
            out = out.at[r, :].set(anp.sum(x - x[r, :], 0))
        totals = anp.ones(8).at[1:7].set(x.sum(axis=1))        # a row kernel's results
        points = anp.zeros(6)
        for r in range(6):
            points = points.at[r].set(x[r].max())               # full reductions
        return out, totals, points

    steps = _steps(rows, x)
    assert not any(isinstance(s, LibraryCall) for s in steps)
    assert all(k.n_outer is not None or not k.reads for k in steps)  # fills and reductions
    want = np.zeros((6, 2000))
    for r in range(6):
        want[r, :] = np.sum(x - x[r, :], 0)
    totals = np.ones(8)
    totals[1:7] = x.sum(axis=1)
    for got, w in zip(arrjit.jit(rows)(x), (want, totals, x.max(axis=1))):
        assert_same(got, w, rtol=1e-12)


def test_regions_are_disjoint_when_any_axis_is():
    from arrjit.passes.regions import Region, disjoint, place

    def region(shape, *index):
        placed = place(shape, tuple(("slice", i.start, i.stop, i.step) if isinstance(i, slice)
                                    else i for i in index))
        return Region(None, None, None, "set", placed[0], placed[1], placed[2])

    big = (10**8,)
    assert disjoint(region(big, S(None, 5 * 10**7)), region(big, S(5 * 10**7, None)))
    assert not disjoint(region(big, S(None, None, -1)), region(big, 7))
    assert disjoint(region((10,), S(0, None, 2)), region((10,), S(1, None, 2)))  # interleaved
    assert not disjoint(region((10,), S(0, None, 2)), region((10,), S(None, None, -3)))
    assert disjoint(region((4, 6), S(None), 0), region((4, 6), Ellipsis, S(1, None)))
    assert not disjoint(region((4, 6), 1), region((4, 6), S(None), S(2, 3)))


def test_an_update_computed_from_a_row_reduction_reads_it_from_its_row_kernel():
    """``x - mean(x, 1)`` stored into regions: the mean is computed by its row kernel and read
    by the region stores' nests (it was taken for a value only its row kernel reads, and the
    region nest found a reduction it cannot compute)."""
    x = np.random.default_rng(8).random((3, 4))

    def updates(ns, v):
        v = v - ns.mean(v, axis=1, keepdims=True)
        if ns is np:
            z = np.zeros((6, 4)) + 0
            z[0:3], z[3:6] = v, v * 2
            return z
        return (ns.zeros((6, 4)) + 0).at[0:3].set(v).at[3:6].set(v * 2)

    assert_same(arrjit.jit(lambda v: updates(anp, v))(x), updates(np, x), rtol=1e-14)
    joined = arrjit.jit(lambda v: anp.concatenate([v - anp.mean(v, axis=1, keepdims=True),
                                                   v], axis=0))
    assert_same(joined(x), np.concatenate([x - x.mean(axis=1, keepdims=True), x]),
                rtol=1e-14)


@pytest.mark.parametrize("index", [(S(None, None, -2),), (S(3, 0, -1), S(None, None, -2)),
                                   (1, S(None)), (S(1, 3), 4), (Ellipsis,)])
@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.complex64, np.bool_])
def test_constants_set_into_regions_are_assigned_by_numpy(index, dtype):
    """A kernel that only stores constants into regions of its buffer (reversed and strided
    ones too) compiles nothing: NumPy assigns each region (``Assignments``); values are
    NumPy's."""
    from arrjit.backends.cpu.steps import Assignments

    def f(ns, x):
        base = ns.zeros((4, 6), dtype) if ns is np else anp.zeros((4, 6), dtype)
        if ns is np:
            base[index] = 1
            return base, x + 1
        return base.at[index].set(1), x + 1

    x = np.arange(3.0)
    jitted = arrjit.jit(lambda x: f(anp, x))
    calls = [c for run in jitted.lower(x)._entry.rendered.runs for c in run.calls]
    assert any(isinstance(c.entry, Assignments) for c in calls)
    for got, want in zip(jitted(x), f(np, x)):
        assert_same(got, want)



def test_elements_moved_within_one_buffer_are_read_before_they_are_stored():
    """A kernel that only moves elements runs as NumPy's assignment (``Assignments``); where
    the buffer it writes overlaps the one it reads, every element is read before any is
    stored (a shift by one moves each element once); a broadcast read of another buffer
    (``repeat``) is assigned from a view. Values are NumPy's."""
    from arrjit.backends.cpu.steps import Assignments

    x = np.arange(1.0, 9.0)
    shifted = arrjit.jit(lambda x: x.at[1:].set(x[:-1]))
    (call,) = [c for run in shifted.lower(x)._entry.rendered.runs
               for c in getattr(run, "calls", ())]
    assert isinstance(call.entry, Assignments)
    buffer = x.copy()
    call.entry(buffer[1:], buffer, call.rendered.params, 0, call.extent)
    assert_same(buffer, np.concatenate([x[:1], x[:-1]]))
    assert_same(shifted(x), np.concatenate([x[:1], x[:-1]]))

    tiled = arrjit.jit(lambda x: anp.concatenate([x, anp.repeat(x, 3)]))
    calls = [c for run in tiled.lower(x)._entry.rendered.runs
             for c in getattr(run, "calls", ())]
    assert calls and all(isinstance(c.entry, Assignments) for c in calls)
    assert_same(tiled(x), np.concatenate([x, np.repeat(x, 3)]))
