"""Updates at run-time positions (``y.at[i].set(v)``, ``y.at[:, j].add(v)``,
``dynamic_update_slice`` with a traced start) of a value the program computed: a select inside
the nest that computes the value (``passes.updates``) where it is computed elementwise, else a
region store whose offset holds the positions (``Region.positions``, ``Affine.positions``), in
the value's own buffer, over the region only; not a library scatter."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from arrjit.passes.kernel import Kernel, LibraryCall, Position
from arrjit.passes.lower import lower
from arrjit.plan import LibraryStep

from helpers import assert_same

MODES = ("set", "add", "multiply", "min", "max")
_UFUNCS = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _numpy_update(y, index, mode, v):
    y[index] = v if mode == "set" else _UFUNCS[mode](y[index], v)
    return y


# base shape, the index as a function of the positions, the update's shape
CASES = {
    "row": ((4, 5), lambda i, j: (i,), (5,)),
    "row, one value": ((4, 5), lambda i, j: (i,), ()),
    "column": ((4, 5), lambda i, j: (slice(None), j), (4,)),
    "element": ((4, 5), lambda i, j: (i, j), ()),
    "row slice": ((4, 5), lambda i, j: (i, slice(1, 4)), (3,)),
    "reversed row": ((4, 5), lambda i, j: (i, slice(None, None, -2)), (3,)),
    "two positions of a 3-d value": ((3, 4, 5), lambda i, j: (i % 3, slice(None), j), (4,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_against_numpy_at_every_position(name):
    shape, index_of, vshape = CASES[name]
    rng = np.random.default_rng(len(name))
    x, v = rng.standard_normal(shape), rng.standard_normal(vshape)
    if v.ndim:
        v.flat[0] = np.nan                        # min/max propagate it as NumPy does

    def updates(x, v, i, j):                      # one update of its own value per mode
        return tuple(getattr((x * (2.0 + k)).at[index_of(i, j)], mode)(v * 3.0)
                     for k, mode in enumerate(MODES))

    jitted = arrjit.jit(updates)
    steps = jitted.lower(x, v, 1, 2)._entry.plan.steps
    assert not [s for s in steps if isinstance(s, LibraryStep)]
    for i, j in [(0, 0), (3, 4), (-1, -5), (-4, 2), (2, -1)]:
        for k, (mode, got) in enumerate(zip(MODES, jitted(x, v, i, j))):
            want = _numpy_update(x * (2.0 + k), index_of(i, j), mode, v * 3.0)
            assert_same(got, want)
    assert jitted.cache_info().traces == 1


def _update_kernel(lowered) -> Kernel:
    (kernel,) = [k for k in lowered.kernels
                 if any(s.access.positions for s in k.stores)]
    return kernel


def test_an_update_of_a_value_computed_elementwise_is_a_select_in_one_nest():
    """``sqrt(x).at[i].add(v) + 1``: the row compare and the select run inside the one loop
    nest that computes ``sqrt(x)`` and the sum (``passes.updates``); nothing is stored but the
    result."""
    x = np.arange(2000.0).reshape(20, 100)
    f = arrjit.jit(lambda x, v, i: anp.sqrt(x).at[i].add(v * 2.0) + 1.0)
    lowered = f.lower(x, np.ones(100), 3)
    plan = lowered._entry.plan
    assert not [s for s in plan.steps if isinstance(s, LibraryStep)]
    (kernel,) = lowered.kernels
    assert kernel.sizes == (20, 100) and len(kernel.writes) == 1
    assert [(p.extent, p.axis) for p in kernel.stmts if isinstance(p, Position)] == [(20, 0)]
    want = np.sqrt(x)
    want[-7] += np.arange(100.0) * 2.0
    assert_same(f(x, np.arange(100.0), -7), want + 1.0)


@pytest.mark.parametrize("mode", MODES)
def test_an_update_of_a_stored_value_stores_over_its_region_into_its_buffer(mode):
    """A value that is not computed elementwise (here a transpose, stored in its own buffer)
    is updated by a store over the region only, at the run-time position."""
    x = np.arange(2000.0).reshape(100, 20)
    v = np.linspace(-1.0, 1.0, 100)

    def f(x, v, i):
        return getattr(anp.sqrt(x).T.at[i], mode)(v * 2.0) + 1.0

    lowered = arrjit.jit(f).lower(x, v, 3)
    kernel = _update_kernel(lowered)
    assert kernel.sizes == (100,)                   # the row, not the array
    assert [(p.extent, p.axis) for p in kernel.stmts if isinstance(p, Position)] == [(20, 0)]
    plan = lowered._entry.plan
    assert not [s for s in plan.steps if isinstance(s, LibraryStep)]
    assert plan.steps[0].slots[0] == plan.steps[1].slots[0]          # one buffer, in place
    for i in (3, -7):
        want = _numpy_update(np.sqrt(x).T.copy(), (i,), mode, v * 2.0) + 1.0
        assert_same(arrjit.jit(f)(x, v, i), want)


def test_dynamic_update_slice_at_a_traced_start_is_a_window_store_clamped_like_jax():
    x = np.arange(30.0).reshape(5, 6)
    block = -np.arange(8.0).reshape(2, 4)
    f = arrjit.jit(lambda x, b, i, j: lax.dynamic_update_slice(x * 2.0, b, (i, j)) - 1.0)
    kernel = _update_kernel(f.lower(x, block, 1, 1))
    assert kernel.sizes == (2, 4)
    for i, j in [(0, 0), (3, 2), (4, 5), (-3, 1), (9, -9)]:
        want = x * 2.0
        # JAX counts a negative start from the end, then clamps it into range
        r, c = (min(max(k + n if k < 0 else k, 0), n - m) for k, n, m in ((i, 5, 2), (j, 6, 4)))
        want[r:r + 2, c:c + 4] = block
        assert_same(f(x, block, i, j), want - 1.0)


def test_updates_at_positions_that_may_meet_run_in_program_order():
    x = np.arange(12.0).reshape(3, 4)

    def f(x, i, j):
        y = (x + 1.0).at[i].set(-1.0).at[j].add(10.0)
        return y.at[:, j].multiply(3.0).at[i, 1:3].set(7.0)

    jitted = arrjit.jit(f)
    for i, j in [(0, 0), (1, 2), (2, -1), (-1, 2)]:
        want = x + 1.0
        want[i] = -1.0
        want[j] += 10.0
        want[:, j] *= 3.0
        want[i, 1:3] = 7.0
        assert_same(jitted(x, i, j), want)


@pytest.mark.parametrize("i, j", [(3, 0), (-4, 0), (0, 4), (1, -5)])
def test_a_position_out_of_range_raises_numpys_index_error(i, j):
    x = np.zeros((3, 4))
    f = arrjit.jit(lambda x, i, j: (x + 1.0).at[i].set(2.0).at[:, j].add(1.0))
    with pytest.raises(IndexError) as ours:
        f(x, i, j)
    with pytest.raises(IndexError) as numpys:
        y = x + 1.0
        y[i] = 2.0
        y[:, j] += 1.0
    assert str(ours.value) == str(numpys.value)
    assert_same(f(x, 2, 3)[2], np.array([2.0, 2.0, 2.0, 3.0]))   # and runs on after


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "complex128"])
def test_values_and_positions_of_each_dtype(dtype):
    x = (np.arange(24) % 5).astype(dtype).reshape(4, 6)
    v = (np.arange(6) % 3).astype(dtype)

    def f(x, v, i, j):
        return (x + x).at[i].set(v).at[j, ::2].max(v[:3])

    for index_dtype in (np.uint8, np.int16, np.int64):
        i, j = index_dtype(3), index_dtype(1)
        want = x + x
        want[3] = v
        want[1, ::2] = np.maximum(want[1, ::2], v[:3])
        assert_same(arrjit.jit(f)(x, v, i, j), want)


def test_updates_of_arguments_stay_library_steps_and_values_read_again_are_selects():
    x = np.arange(6.0)

    def of_argument(x, i):
        return x.at[i].set(-1.0)

    def read_again(x, i):
        y = x * 2.0
        return y.at[i].set(-1.0) + y

    for fn, calls, want in ((of_argument, ["scatter"], np.where(np.arange(6) == 4, -1.0, x)),
                            (read_again, [], np.where(np.arange(6) == 4, -1.0, x * 2) + x * 2)):
        jitted = arrjit.jit(fn)
        steps = jitted.lower(x, 4)._entry.plan.steps
        assert [s.node.op.value for s in steps if isinstance(s, LibraryStep)] == calls
        assert_same(jitted(x, 4), want)
        assert_same(jitted(x, -2), want)
    assert_same(x, np.arange(6.0))


def test_targets_that_do_not_read_positions_keep_the_library_scatter():
    graph = arrjit.make_graph(lambda x, i: (x * 2.0).at[i].set(0.0))(np.ones((4, 5)), 1)
    called = [s for s in lower(graph).partition.steps if isinstance(s, LibraryCall)]
    assert [s.node.op.value for s in called] == ["scatter"]
    assert not [s for s in lower(graph, positions=True).partition.steps
                if isinstance(s, LibraryCall)]


def test_on_threads_in_loops_and_under_transforms(two_threads_from_1000_elements):
    x = np.linspace(0.0, 1.0, 40_000).reshape(4, 10_000)
    f = arrjit.jit(lambda x, i: anp.exp(x).at[i].set(anp.sqrt(x[0])) * 2.0)
    want = np.exp(x)
    want[2] = np.sqrt(x[0])
    assert_same(f(x, 2), want * 2.0)

    def loop(x):
        def body(k, acc):
            return (acc * 0.5).at[k % 3].add(acc[(k + 1) % 3] + 1.0)
        return lax.fori_loop(0, 7, body, x)

    small = np.arange(12.0).reshape(3, 4)
    want = small.copy()
    for k in range(7):
        t = want * 0.5
        t[k % 3] += want[(k + 1) % 3] + 1.0
        want = t
    assert_same(arrjit.jit(loop)(small), want)

    g = lambda x, i: ((x * 2.0).at[i].set(1.0) ** 2).sum()   # noqa: E731
    grad = arrjit.jit(arrjit.grad(g))(small, 1)
    assert_same(grad, np.where(np.arange(3)[:, None] == 1, 0.0, 8.0 * small))
    batched = arrjit.jit(arrjit.vmap(lambda i: (anp.asarray(small) * 2.0).at[i].set(0.0)))
    want = np.stack([np.where(np.arange(3)[:, None] == i, 0.0, small * 2.0) for i in (2, 0)])
    assert_same(batched(np.array([2, 0])), want)


def test_a_gather_through_an_outer_product_of_windows_reads_inside_the_kernel():
    """``x[rows[:, None], cols[None, :]]`` with ``rows`` and ``cols`` windows at clamped traced
    starts (what ``dynamic_update_slice`` builds for several traced starts) is a view."""
    x = np.arange(42.0).reshape(6, 7)

    def f(x, i, j):
        rows = anp.clip(i, 0, 4) + anp.arange(2)
        cols = anp.clip(j, 0, 4) + anp.arange(3)
        return x[rows[:, None], cols[None, :]] * 2.0

    jitted = arrjit.jit(f)
    assert not [s for s in jitted.lower(x, 1, 2)._entry.plan.steps if isinstance(s, LibraryStep)]
    for i, j in [(0, 0), (3, 4), (9, -2), (-1, 7)]:
        r, c = min(max(i, 0), 4), min(max(j, 0), 4)
        assert_same(jitted(x, i, j), x[r:r + 2, c:c + 3] * 2.0)
