"""``cumsum`` and ``cumprod`` outside loops run as native steps of their own
(``backends.cpu.sequences``), NumPy's values bit for bit; sorts stay NumPy's calls."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.backends.cpu.steps import LibraryRun



def assert_same(out, ref) -> None:
    """Same dtype, shape and bytes: NumPy's values bit for bit (signed zeros, NaN)."""
    out, ref = np.asarray(out), np.asarray(ref)
    assert (out.dtype, out.shape) == (ref.dtype, ref.shape)
    assert out.tobytes() == ref.tobytes(), (out, ref)


def _library_runs(f, *args) -> list[LibraryRun]:
    return [r for r in f.lower(*args)._entry.rendered.runs if isinstance(r, LibraryRun)]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "int32", "uint16",
                                   "complex64"])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 4), (4, 0, 2), (2, 3, 5)])
def test_running_sums_and_products_along_every_axis_match_numpy(shape, dtype):
    x = (np.random.default_rng(4).standard_normal(shape) * 3).astype(dtype)
    for axis in range(-len(shape), len(shape)):
        for ours, numpys in ((anp.cumsum, np.cumsum), (anp.cumprod, np.cumprod)):
            f = arrjit.jit(lambda v, ours=ours, axis=axis: ours(v, axis=axis))
            assert_same(f(x), numpys(x, axis=axis))


def test_running_sums_run_natively_around_flips():
    """``flip(cumsum(flip(x)))``: the running sum is a native step, not NumPy's accumulate,
    and its values are NumPy's in the same order of additions."""
    x = np.random.default_rng(0).random(1000)
    f = arrjit.jit(lambda v: anp.flip(anp.cumsum(anp.flip(v))))
    (run,) = _library_runs(f, x)
    assert run.native is not None and run.sources
    assert_same(f(x), np.flip(np.cumsum(np.flip(x))))


def test_sorts_stay_numpy_calls():
    x = np.random.default_rng(1).random(50)
    f = arrjit.jit(lambda v: anp.sort(v * 2.0))
    (run,) = _library_runs(f, x)
    assert run.native is None and run.sources == ()
    assert_same(f(x), np.sort(x * 2.0))


def test_special_values_keep_numpy_order_and_signs():
    """The first element is the operand's own (a -0.0 stays -0.0, as in NumPy), NaN and
    infinities propagate as NumPy's additions do, integer products wrap as NumPy's."""
    x = np.array([-0.0, -0.0, np.inf, -np.inf, 1.0, np.nan, 2.0])
    assert_same(arrjit.jit(anp.cumsum)(x), np.cumsum(x))
    assert_same(arrjit.jit(anp.cumsum)(x[:2]), np.cumsum(x[:2]))
    big = np.array([2**40, 2**30, 3, -5], np.int64)
    assert_same(arrjit.jit(anp.cumprod)(big), np.cumprod(big))
    small = np.array([200, 200, 200], np.uint8)
    assert_same(arrjit.jit(anp.cumprod)(small), np.cumprod(small))


def test_an_accumulation_dtype_is_numpys():
    """``cumsum(x, dtype=float32)`` adds in float32, as NumPy does."""
    x = np.arange(1, 2000, dtype=np.int64) * 1_000_003
    f = arrjit.jit(lambda v: anp.cumsum(v, dtype=np.float32))
    assert_same(f(x), np.cumsum(x, dtype=np.float32))
    g = arrjit.jit(lambda v: anp.cumsum(v.reshape(3, -1), axis=0, dtype=np.float32))
    assert_same(g(x[:1998]), np.cumsum(x[:1998].reshape(3, -1), axis=0, dtype=np.float32))


def test_running_sum_in_a_program_and_under_grad():
    """A running sum between fused kernels; its derivative (a reversed running sum)."""
    x = np.random.default_rng(2).standard_normal((6, 5))
    f = arrjit.jit(lambda v: anp.exp(anp.cumsum(anp.sin(v), axis=1)) - 1.0)
    # (arrjit's own sin and exp: within rounding of NumPy's)
    np.testing.assert_allclose(f(x), np.exp(np.cumsum(np.sin(x), axis=1)) - 1.0, rtol=1e-14)
    g = arrjit.jit(arrjit.grad(lambda v: anp.sum(anp.cumsum(v, axis=0) ** 2)))
    c = np.cumsum(x, axis=0)
    np.testing.assert_allclose(g(x), np.flip(np.cumsum(np.flip(2 * c, 0), axis=0), 0),
                               rtol=1e-12)
