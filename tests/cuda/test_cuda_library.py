"""Library calls on the CUDA backend (sort, argsort, gathers, scatters) run on the device and
give NumPy's values and errors: NaN last, equal values in their order, duplicates in
scatters applied in NumPy's order."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.core import library as host_library
from arrjit.core.ir import Op

from helpers import assert_same

pytestmark = pytest.mark.cuda

cuda_jit = lambda f, **kw: arrjit.jit(f, device="cuda", **kw)   # noqa: E731


@pytest.fixture
def device_only(monkeypatch):
    """Fail any library call that would run NumPy on host copies (only a boolean einsum
    does)."""
    host_call = host_library.call

    def call(op, operands, params, dtype):
        assert op is Op.EINSUM and dtype == np.bool_, f"{op} of {dtype} ran on the host"
        return host_call(op, operands, params, dtype)

    monkeypatch.setattr(host_library, "call", call)


def get(y):
    return arrjit.device_get(y)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape,axis", [((13,), 0), ((3, 7), 1), ((5, 3), 0), ((2, 5, 3), 1),
                                        ((4, 1), 1), ((0, 3), 1), ((3, 0), 1),
                                        ((4, 37), 1)])
def test_sort_and_argsort_match_numpy(device_only, dtype, shape, axis):
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, size=shape).astype(dtype)     # many ties
    if dtype.startswith("float") and x.size > 4:
        x.flat[[0, 3]] = np.nan
        x.flat[1] = -0.0
    f = cuda_jit(lambda x: (anp.sort(x, axis=axis), anp.argsort(x, axis=axis),
                            anp.argsort(x, axis=axis, stable=True)))
    sorted_, order, stable = f(x)
    assert_same(get(sorted_), np.sort(x, axis=axis))
    ref = np.argsort(x, axis=axis, kind="stable")
    assert_same(get(order), ref)        # the stable order (module docstring of sorting)
    assert_same(get(stable), ref)


def test_sort_flattens_for_axis_none_and_chains_on_the_device(device_only):
    x = np.random.default_rng(2).standard_normal((6, 5))
    f = cuda_jit(lambda x: anp.sort(x * 2.0, axis=None)[::-1] + 1.0)
    assert_same(get(f(x)), np.sort(x.ravel() * 2.0)[::-1] + 1.0)


INDEXES = {
    "rows": lambda x, i, j: x[i],
    "columns": lambda x, i, j: x[:, i],
    "two arrays broadcast": lambda x, i, j: x[i[:, None], j[None, :]],
    "array and slice": lambda x, i, j: x[i, 1:4],
    "separated arrays": lambda x, i, j: x[i[:2], :, j[:2]] if x.ndim == 3 else x[i, j[0]],
    "take": lambda x, i, j: anp.take(x, j, axis=-1),
    "negative": lambda x, i, j: x[-i - 1],
    "scalar and array": lambda x, i, j: x[1, j],
}


@pytest.mark.parametrize("name", sorted(INDEXES))
@pytest.mark.parametrize("shape", [(5, 6), (5, 6, 3)])
def test_gathers_match_numpy(device_only, name, shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 0.5
    i, j = np.array([4, 0, 2, 2]), np.array([1, 2, 0])
    index = INDEXES[name]
    assert_same(get(cuda_jit(index)(x, i, j)), index(x, i, j))


def test_an_out_of_range_gather_raises_numpys_index_error():
    x = np.ones((4, 3))
    for index in (lambda x, i: x[i], lambda x, i: x[:, i]):
        with pytest.raises(IndexError, match="out of bounds"):
            cuda_jit(index)(x, np.array([0, 7]))


EINSUMS = {
    "ij,jk->ik": [(3, 4), (4, 5)], "ij,jk": [(3, 4), (4, 5)], "ii->": [(4, 4)],
    "ii->i": [(4, 4)], "i,j->ij": [(3,), (5,)], "ij->ji": [(3, 4)], "ij->": [(3, 4)],
    "ij,jk,kl->il": [(2, 3), (3, 4), (4, 2)], "...ij,...jk->...ik": [(2, 3, 4), (1, 4, 2)],
    "bij,bjk->bik": [(2, 3, 4), (2, 4, 2)], "i,i": [(0,), (0,)], "...i->...": [(2, 3, 4)],
}


@pytest.mark.parametrize("subscripts", sorted(EINSUMS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "bool"])
def test_einsum_matches_numpy(device_only, subscripts, dtype):
    rng = np.random.default_rng(4)
    operands = [(rng.standard_normal(shape) * 3).astype(dtype)
                for shape in EINSUMS[subscripts]]
    f = cuda_jit(lambda *ops: anp.einsum(subscripts, *ops))
    ref = np.einsum(subscripts, *operands)
    tol = {"rtol": 1e-5 if dtype == "float32" else 1e-12} if dtype.startswith("float") else {}
    assert_same(get(f(*operands)), ref, **tol)


MODES = ["set", "add", "multiply", "min", "max"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "bool"])
def test_scatters_with_duplicates_apply_in_numpys_order(device_only, mode, dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 4)) * 3).astype(dtype)
    idx = np.array([1, 4, 1, 1, 0, 4])
    upd = (rng.standard_normal((6, 4)) * 3).astype(dtype)
    if dtype.startswith("float"):
        upd[2, 1] = np.nan
        upd[0, 0], upd[3, 0] = 1e8, -1e8       # the order of adding matters
    f = cuda_jit(lambda x, i, u: (getattr(x.at[i], mode)(u),
                                  getattr(x.at[i, 2], mode)(u[:, 0]),
                                  getattr(x.at[:, i[:3:2]], mode)(u[:1, 0])))
    refs = []
    for index, values in (((idx,), upd), ((idx, 2), upd[:, 0]), ((slice(None), idx[:3:2]),
                                                                 upd[:1, 0])):
        ref = x.copy()
        if mode == "set":
            ref[index] = values
        else:
            getattr(np, {"add": "add", "multiply": "multiply", "min": "minimum",
                         "max": "maximum"}[mode]).at(ref, index, values)
        refs.append(ref)
    with np.errstate(all="ignore"):
        outs = f(x, idx, upd)
    for out, ref in zip(outs, refs):
        assert_same(get(out), ref)


def test_scalar_updates_and_a_donated_scatter_in_place(device_only):
    from arrjit.backends.cuda.device import device_pointer, to_device

    f = cuda_jit(lambda x, i: x.at[i].add(1.5), donate_argnums=0)
    x = to_device(np.zeros(5))
    before = device_pointer(x)
    out = f(x, np.array([0, 3, 3]))
    assert device_pointer(out) == before
    assert_same(get(out), np.array([1.5, 0, 0, 3.0, 0]))
    kept = cuda_jit(lambda x, i: x.at[i].set(7.0))
    y = np.arange(4.0)
    assert_same(get(kept(y, np.array([-1]))), np.array([0, 1, 2, 7.0]))
    assert_same(y, np.arange(4.0))


@pytest.mark.gpu
def test_through_cupy_where_it_has_a_gpu():
    """On a GPU with CuPy: matmul on cuBLAS and the sorts on CUB, with the same answers."""
    from arrjit.backends.cuda.cupy_library import cupy_module
    from arrjit.backends.cuda.device import simulated

    if simulated():
        pytest.skip("CuPy needs a GPU: numba-cuda's simulator arrays are host memory")
    pytest.importorskip("cupy", reason="CuPy is not installed")
    if cupy_module() is None:
        pytest.skip("CuPy sees no GPU")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 48)), rng.standard_normal((48, 32)).astype(np.float32)
    x = rng.integers(-5, 5, size=(7, 300)).astype(np.float32)
    x[0, [3, 9]] = np.nan
    f = cuda_jit(lambda a, b, x: (a @ b, anp.sort(x, axis=1), anp.argsort(x, axis=0)))
    m, s, o = f(a, b, x)
    assert_same(get(m), a @ b, rtol=1e-12)
    assert_same(get(s), np.sort(x, axis=1))
    assert_same(get(o), np.argsort(x, axis=0, kind="stable"))
