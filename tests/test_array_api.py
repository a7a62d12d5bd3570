"""arrjit.numpy as an array API namespace: traced arrays name it through
``__array_namespace__`` (so ``array_api_compat.array_namespace`` accepts them), generic code
written against the standard runs under jit unchanged and agrees with array-api-strict (a
second oracle, stricter than NumPy), and the standard's helpers and inspection API answer."""
import array_api_compat
import array_api_strict as xps
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import errors

from helpers import assert_same


def standardize_and_score(x, w):
    """Array-API-generic code, as scipy and array-api-extra write it."""
    xp = array_api_compat.array_namespace(x, w)
    centred = x - xp.mean(x, axis=0, keepdims=True)
    scaled = centred / (xp.std(x, axis=0, keepdims=True) + 1e-8)
    logits = xp.matmul(scaled, w)
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    probabilities = xp.exp(shifted) / xp.sum(xp.exp(shifted), axis=-1, keepdims=True)
    top = xp.argmax(probabilities, axis=-1)
    return probabilities, top, xp.concat([xp.min(x, axis=0), xp.max(x, axis=0)])


def test_generic_array_api_code_runs_under_jit_and_agrees_with_array_api_strict():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 5)), rng.standard_normal((5, 3))
    outs = arrjit.jit(standardize_and_score)(x, w)
    refs = standardize_and_score(xps.asarray(x), xps.asarray(w))
    for out, ref in zip(outs, refs):
        assert_same(out, np.asarray(ref), rtol=1e-12)


def test_a_tracer_names_arrjit_numpy_as_its_namespace():
    seen = []

    def f(x):
        seen.append(array_api_compat.array_namespace(x))
        return x.__array_namespace__(api_version="2024.12").sum(x)

    assert arrjit.jit(f)(np.ones(3)) == 3.0
    assert seen == [anp]
    assert anp.__array_api_version__ == "2024.12"


def test_dtype_helpers_take_traced_arrays_as_numpy_takes_arrays():
    def f(x, s):
        assert anp.result_type(x, 1.0) == np.float32          # a Python float is weak
        assert anp.result_type(x, s) == np.float64              # s: an int64 array
        assert anp.can_cast(x, np.float64) and not anp.can_cast(s, np.int8)
        assert anp.isdtype(x.dtype, "real floating") and anp.isdtype(s.dtype, "integral")
        assert anp.finfo(x).eps == np.finfo(np.float32).eps
        assert anp.iinfo(s).max == np.iinfo(np.int64).max
        return x * 2

    assert_same(arrjit.jit(f)(np.ones(2, np.float32), np.arange(2)),
                np.full(2, 2.0, np.float32))


@pytest.mark.parametrize("name", ["nonzero", "unique_all", "unique_counts", "unique_inverse",
                                  "unique_values"])
def test_value_dependent_shapes_are_eager_only_with_a_clear_error(name):
    x = np.array([3, 1, 3, 0])
    eager, ref = getattr(anp, name)(x), getattr(np, name)(x)
    for a, b in zip(eager if isinstance(eager, tuple) else (eager,),
                    ref if isinstance(ref, tuple) else (ref,)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(errors.ConcretizationTypeError, match=f"anp.{name}.*outside jit"):
        arrjit.jit(getattr(anp, name))(x)


def test_every_function_of_the_standard_is_in_the_namespace():
    standard = [n for n in dir(xps) if not n.startswith("_") and callable(getattr(xps, n))
                and not isinstance(getattr(xps, n), type) and "array_api_strict" not in n]
    assert [n for n in standard if not hasattr(anp, n)] == []


def test_the_inspection_api():
    info = anp.__array_namespace_info__()
    assert info.capabilities()["data-dependent shapes"] is False
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    assert info.default_dtypes()["real floating"] == np.float64
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32", "uint64"}
    assert "float32" in info.dtypes(kind=("real floating", "bool"))
    assert anp.bool is np.bool_


def test_array_api_function_errors_name_the_problem():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        arrjit.jit(anp.matrix_transpose)(np.ones(3))
    with pytest.raises(ValueError, match="axis may be None only for a 1-d array"):
        arrjit.jit(anp.cumulative_sum)(np.ones((2, 2)))
    with pytest.raises(ValueError, match="differ in length"):
        arrjit.jit(anp.vecdot)(np.ones((2, 3)), np.ones((2, 4)))


def test_sign_bits_truncation_and_neighbours_follow_numpy_on_special_values():
    x = np.array([-0.0, 0.0, -0.5, 2.7, -2.7, np.inf, -np.inf, np.nan, -np.nan, 5e-324])
    y = np.array([1.0, -0.0, -1.0, 3.0, np.nan, 0.0, 1.0, 2.0, 0.0, -1.0])
    f = arrjit.jit(lambda x, y: (anp.signbit(x), anp.trunc(x), anp.copysign(y, x),
                                 anp.nextafter(x, y), anp.sign(x), anp.asinh(x), anp.acosh(x),
                                 anp.atanh(x / 4), anp.signbit(np.arange(-2, 2))))
    with np.errstate(all="ignore"):
        refs = (np.signbit(x), np.trunc(x), np.copysign(y, x), np.nextafter(x, y), np.sign(x),
                np.arcsinh(x), np.arccosh(x), np.arctanh(x / 4), np.signbit(np.arange(-2, 2)))
        for out, ref in zip(f(x, y), refs):
            assert_same(out, ref, rtol=1e-15)
            if ref.dtype.kind == "f":
                np.testing.assert_array_equal(np.signbit(out), np.signbit(ref))


@pytest.mark.parametrize("axis", [0, -1, None])
def test_descending_sorts_agree_with_array_api_strict(axis):
    x = np.array([[1.0, np.nan, 3.0, 1.0, 2.0], [0.5, 0.5, -1.0, np.nan, 7.0]])
    f = arrjit.jit(lambda x: (anp.sort(x, axis=axis, descending=True),
                              anp.argsort(x, axis=axis, descending=True, stable=False)))
    strict = xps.reshape(xps.asarray(x), (-1,)) if axis is None else xps.asarray(x)
    strict_axis = 0 if axis is None else axis      # the standard has no axis=None
    refs = (xps.sort(strict, axis=strict_axis, descending=True),
            xps.argsort(strict, axis=strict_axis, descending=True))
    # stable=False allows any order of ties; arrjit's sorts are always stable
    for out, eager, ref in zip(f(x), (anp.sort(x, axis=axis, descending=True),
                                      anp.argsort(x, axis=axis, descending=True)), refs):
        assert_same(out, np.asarray(ref))
        assert_same(eager, np.asarray(ref))


def test_copy_keywords_and_clip_bounds():
    def f(x):
        same = anp.asarray(x, copy=True) + anp.astype(x, anp.float32, copy=False)
        return same, anp.clip(x, min=0.5), anp.clip(x)

    x = np.linspace(0, 1, 4)
    outs = arrjit.jit(f)(x)
    for out, ref in zip(outs, (x + x.astype(np.float32), np.clip(x, 0.5, None), x)):
        assert_same(out, ref)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        arrjit.jit(lambda x: anp.asarray(x, dtype=anp.float32, copy=False))(x)
    with pytest.raises(ValueError, match="more than one of `a_min` and `min`"):
        arrjit.jit(lambda x: anp.clip(x, 0, min=1))(x)
    with pytest.raises(ValueError, match="ddof and correction"):
        arrjit.jit(lambda x: anp.var(x, ddof=1, correction=1))(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sign_of_negative_zero_is_positive_zero_as_in_numpy(dtype):
    out = arrjit.jit(anp.sign)(np.array([-0.0, 0.0, -2.0, np.nan], dtype))
    assert_same(out, np.sign(np.array([-0.0, 0.0, -2.0, np.nan], dtype)))
    assert not np.signbit(out[:2]).any()


CREATORS = {
    "asarray": lambda **kw: anp.asarray([1.0, 2.0], **kw),
    "zeros": lambda **kw: anp.zeros((2, 3), **kw),
    "ones": lambda **kw: anp.ones(3, **kw),
    "empty": lambda **kw: anp.empty(2, **kw) * 0,
    "full": lambda **kw: anp.full(2, 7, **kw),
    "zeros_like": lambda **kw: anp.zeros_like(np.ones(2), **kw),
    "ones_like": lambda **kw: anp.ones_like(np.ones(2), **kw),
    "empty_like": lambda **kw: anp.empty_like(np.ones(2), **kw) * 0,
    "full_like": lambda **kw: anp.full_like(np.ones(2), 3, **kw),
    "arange": lambda **kw: anp.arange(4, **kw),
    "linspace": lambda **kw: anp.linspace(0, 1, 5, **kw),
    "eye": lambda **kw: anp.eye(3, **kw),
}


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_creation_functions_take_the_standards_device_keyword(name):
    make = CREATORS[name]
    plain = make()
    assert_same(make(device="cpu"), plain)
    assert_same(arrjit.jit(lambda: make(device="cpu") + 0)(), plain + 0)
    with pytest.raises(ValueError, match=rf"anp.{name}\(device='tpu'\).*devices here are"):
        make(device="tpu")
    with pytest.raises(ValueError, match="devices here are"):
        arrjit.jit(lambda: make(device="tpu"))()


def test_reshape_takes_numpy_2_1s_shape_and_copy_keywords():
    x = np.arange(6.0)
    assert anp.reshape(x, shape=(2, 3)).shape == anp.reshape(x, newshape=(3, 2)).shape[::-1]
    with pytest.raises(ValueError):
        anp.reshape(x.reshape(2, 3).T, 6, copy=False)      # NumPy cannot make that a view
    assert_same(arrjit.jit(lambda x: anp.reshape(x, shape=(3, -1), copy=True) * 2)(x),
                x.reshape(3, 2) * 2)


def test_finfo_and_iinfo_take_arrays_as_the_standard_says():
    assert anp.finfo(np.ones(2, np.float32)).bits == 32
    assert anp.finfo(np.ones(2, np.complex128)).eps == np.finfo(np.float64).eps
    assert anp.iinfo(np.ones(2, np.uint16)).max == 65535
    assert arrjit.jit(lambda x: x + anp.iinfo(x).max)(np.zeros(1, np.int8))[0] == 127
