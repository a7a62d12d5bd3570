"""Gathers at run-time positions (``x[i]``, ``x[:, j]``, ``x[i, 1:-1]`` with a traced ``i``)
read inside fused kernels: ``passes.kernel.Position`` and ``Affine.positions``."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from arrjit.errors import DonationWarning
from arrjit.passes.kernel import Kernel, LibraryCall, Position
from arrjit.passes.lower import lower
from arrjit.plan import LibraryStep

from helpers import assert_same, numpy_point_sweep, point_sweep


def _positions(kernel: Kernel) -> list[Position]:
    return [s for s in kernel.stmts if isinstance(s, Position)]


PROGRAMS = {
    "row": lambda x, i, j: x[i] * 2.0,
    "column": lambda x, i, j: x[:, j] - 1.0,
    "element": lambda x, i, j: x[i, j] + x[-1 - i, j],
    "row slice": lambda x, i, j: x[i, 1:-1] + x[i, :-2] * x[i, 2:],
    "reversed": lambda x, i, j: x[i, ::-2] + x[:, j][::-1].sum(),
    "computed source": lambda x, i, j: (x * 0.5 + 1.0)[i] + (x.T @ x)[j % 3],
    "two positions in one row": lambda x, i, j: x[i] + x[(i + 1) % 4] - x[j % 4],
}


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_values_against_numpy_at_every_position(name, dtype):
    fn = PROGRAMS[name]
    x = (np.arange(20) - 7).reshape(4, 5).astype(dtype)
    jitted = arrjit.jit(fn)
    for i, j in [(0, 0), (3, 4), (-1, -5), (-4, 2), (2, -1)]:
        ref = fn(x, i, j)
        assert_same(jitted(x, i, j), ref, rtol=1e-6 if dtype == "float32" else 1e-15)
    assert jitted.cache_info().traces == 1


def test_a_gather_at_a_position_is_a_view_inside_the_kernel():
    f = arrjit.jit(lambda x, i: x[i] * 2.0 + x[:, 0][i])
    lowered = f.lower(np.ones((4, 5)), 1)
    assert not [s for s in lowered._entry.plan.steps if isinstance(s, LibraryStep)]
    (kernel,) = [k for k in lowered.kernels if _positions(k)]
    assert {(p.extent, p.axis) for p in _positions(kernel)} == {(4, 0)}
    loads = [s for s in kernel.stmts if getattr(s, "access", None) is not None]
    assert any(load.access.positions for load in loads)


def test_index_dtypes_and_a_position_from_an_array_element():
    x = np.arange(16.0).reshape(4, 4)
    f = arrjit.jit(lambda x, i: x[i] + x[:, i.astype(np.int64) + 1])
    for dtype in ("int8", "uint8", "int32", "uint64"):
        i = np.array(1, dtype)
        assert_same(f(x, i), x[1] + x[:, 2])
    g = arrjit.jit(lambda x, idx: x[idx[2]] * 3.0)
    assert_same(g(x, np.array([5, 0, 2])), x[2] * 3.0)


@pytest.mark.parametrize("i, j", [(4, 0), (-5, 0), (0, 5), (1, -6)])
def test_a_position_out_of_range_raises_numpys_index_error(i, j):
    x = np.zeros((4, 5))
    f = arrjit.jit(lambda x, i, j: x[i] + x[:, j].sum())
    with pytest.raises(IndexError) as ours:
        f(x, i, j)
    with pytest.raises(IndexError) as numpys:
        x[i] + x[:, j].sum()
    assert str(ours.value) == str(numpys.value)


def test_a_position_out_of_range_raises_from_a_threaded_kernel():
    arrjit.config.update("num_threads", 2)
    try:
        x = np.ones((3, 400_000))
        f = arrjit.jit(lambda x, i: anp.sin(x[i]) * 2.0)
        assert_same(f(x, 2), np.sin(x[2]) * 2.0, rtol=1e-15)
        with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
            f(x, 3)
        assert_same(f(x, -3), np.sin(x[0]) * 2.0, rtol=1e-15)
    finally:
        arrjit.config.update("num_threads", 0)


def test_a_donated_array_read_at_a_position_is_not_overwritten_early():
    f = arrjit.jit(lambda x, i: x * 2.0 + x[i], donate_argnums=0)
    x = np.arange(6.0)
    with pytest.warns(DonationWarning, match="x"):
        out = f(x, 4)
    assert_same(out, np.arange(6.0) * 2.0 + 4.0)
    assert_same(x, np.arange(6.0))


def test_positions_in_a_native_loop_body():
    rng = np.random.default_rng(0)
    u, source = rng.random((12, 9)), rng.random((12, 9))
    jitted = arrjit.jit(point_sweep)
    assert jitted.lower(u, source).loops == [
        "natively, one compiled driver for every iteration"]
    assert_same(jitted(u, source), numpy_point_sweep(u, source), rtol=1e-14)


def test_vmap_and_grad_through_a_position():
    x = np.arange(12.0).reshape(3, 4)
    f = lambda x, i: (x[i] ** 2).sum()   # noqa: E731
    assert_same(arrjit.jit(arrjit.grad(f))(x, 1), np.where(np.arange(3)[:, None] == 1,
                                                            2 * x, 0.0))
    batched = arrjit.jit(arrjit.vmap(lambda i: anp.asarray(x)[i] * 2.0))(np.array([2, 0, 1]))
    assert_same(batched, x[[2, 0, 1]] * 2.0)


def test_targets_that_do_not_read_positions_keep_the_library_gather():
    graph = arrjit.make_graph(lambda x, i: x[i] * 2.0)(np.ones((4, 5)), 1)
    called = [s for s in lower(graph).partition.steps if isinstance(s, LibraryCall)]
    assert [s.node.op.value for s in called] == ["gather"]
    assert not [s for s in lower(graph, positions=True).partition.steps
                if isinstance(s, LibraryCall)]
    from arrjit.backends import REGISTRY
    import importlib

    assert importlib.import_module(REGISTRY["cpu"]).BACKEND.reads_positions


@pytest.mark.parametrize("dtype, start", [(np.uint8, 1), (np.uint8, 250), (np.uint64, 1),
                                          (np.uint64, 250), (np.int8, -2), (np.int8, 126),
                                          (np.int8, -7)])
def test_unsigned_and_narrow_positions_of_a_native_scatter_follow_numpy(dtype, start):
    """A loop driver's scatter at a position carried as a narrow or unsigned integer: in
    range it updates NumPy's element (a negative int8 counted from the end), out of range it
    raises NumPy's error (an unsigned position is never negative)."""
    def body(_, carry):
        x, k = carry
        return x.at[k].set(x[k] + 1.0), k + dtype(1)

    f = arrjit.jit(lambda x, k: lax.fori_loop(0, 3, body, (x, k)))
    k0 = np.array(start).astype(dtype)[()]
    want, k, numpy_error = np.zeros(5), k0, None
    try:
        for _ in range(3):
            want[k] += 1.0
            k = dtype(k + dtype(1))
    except IndexError as error:
        numpy_error = str(error)
    if numpy_error is None:
        got, _ = f(np.zeros(5), k0)
        assert_same(got, want)
    else:
        with pytest.raises(IndexError, match=numpy_error):
            f(np.zeros(5), k0)


def test_an_index_error_raised_while_another_is_handled_is_numpys():
    """Inside an ``except`` block CPython builds a raised error at once and chains it to the
    one being handled; the error compiled code raises stays NumPy's ``IndexError``."""
    x = np.arange(5.0)
    kernel = arrjit.jit(lambda x, i: x[i] * 2.0)
    loop = arrjit.jit(lambda x: lax.fori_loop(0, 5, lambda i, acc: acc.at[i].add(x[i + 1]),
                                              anp.zeros(5)))
    try:
        raise KeyError("handled")
    except KeyError:
        for call, index in ((lambda: kernel(x, 7), 7), (lambda: loop(x), 5)):
            with pytest.raises(IndexError, match=f"index {index} is out of bounds for axis 0 "
                                                 "with size 5") as raised:
                call()
            assert type(raised.value) is IndexError
            assert isinstance(raised.value.__context__, KeyError)
