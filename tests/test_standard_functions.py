"""Every function of the array API standard (2024.12) through ``jit`` against NumPy, on
hypothesis-drawn shapes, dtypes (complex included) and values (NaN, infinities and signed
zeros among them). Functions are called in groups, one jitted program per group, so that an
example costs a few compiles; a table of calls covers the standard's whole function list."""
import os

import array_api_strict as xps
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import arrjit
import arrjit.numpy as anp

from helpers import assert_same

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]

UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
         "conj", "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan",
         "log", "log10", "log1p", "log2", "logical_not", "negative", "positive", "real",
         "reciprocal", "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "tan",
         "tanh", "trunc"]
BINARY = ["add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or",
          "bitwise_right_shift", "bitwise_xor", "copysign", "divide", "equal", "floor_divide",
          "greater", "greater_equal", "hypot", "less", "less_equal", "logaddexp", "logical_and",
          "logical_or", "logical_xor", "maximum", "minimum", "multiply", "nextafter",
          "not_equal", "pow", "remainder", "subtract"]


def _reductions(xp, x, axis, keepdims):
    real = x.dtype.kind != "c"
    out = {"sum": xp.sum(x, axis=axis, keepdims=keepdims),
           "prod": xp.prod(x, axis=axis, keepdims=keepdims),
           "all": xp.all(x, axis=axis, keepdims=keepdims),
           "any": xp.any(x, axis=axis, keepdims=keepdims),
           "count_nonzero": xp.count_nonzero(x, axis=axis, keepdims=keepdims),
           "cumulative_sum": xp.cumulative_sum(x, axis=(axis or 0) if x.ndim > 1 else None,
                                               include_initial=keepdims),
           "cumulative_prod": xp.cumulative_prod(x, axis=-1 if x.ndim > 1 else None),
           "diff": xp.diff(x, axis=-1 if axis is None else axis)}
    if x.dtype != np.bool_ and real:
        out.update(max=xp.max(x, axis=axis, keepdims=keepdims),
                   min=xp.min(x, axis=axis, keepdims=keepdims),
                   argmax=xp.argmax(x, axis=axis, keepdims=keepdims),
                   argmin=xp.argmin(x, axis=axis, keepdims=keepdims))
    if x.dtype.kind in "fc":
        out.update(mean=xp.mean(x, axis=axis, keepdims=keepdims),
                   std=xp.std(x, axis=axis, keepdims=keepdims, correction=1),
                   var=xp.var(x, axis=axis, keepdims=keepdims, correction=0))
    return out


def _manipulations(xp, x, y):
    last = x.ndim - 1
    out = {"broadcast_arrays": xp.broadcast_arrays(x, y)[0],
           "broadcast_to": xp.broadcast_to(x, (2,) + x.shape),
           "concat": xp.concat([x, x], axis=last),
           "expand_dims": xp.expand_dims(x, axis=0),
           "flip": xp.flip(x, axis=last),
           "moveaxis": xp.moveaxis(x, 0, -1),
           "permute_dims": xp.permute_dims(x, tuple(reversed(range(x.ndim)))),
           "repeat": xp.repeat(x, 2, axis=last),
           "reshape": xp.reshape(x, (-1,)),
           "roll": xp.roll(x, 1, axis=last),
           "squeeze": xp.squeeze(xp.expand_dims(x, axis=0), axis=0),
           "stack": xp.stack([x, x], axis=0),
           "tile": xp.tile(x, (2,) * x.ndim),
           "unstack": xp.unstack(x, axis=0)[-1],
           "take": xp.take(x, xp.asarray([0, x.shape[0] - 1, 0]), axis=0),
           "where": xp.where(xp.not_equal(x, 0), x, y),
           "isin": xp.isin(x, y),
           "astype": xp.astype(x, xp.float64 if x.dtype.kind != "c" else xp.complex128),
           "from_dlpack": xp.from_dlpack(x)}
    if x.ndim >= 2:
        out.update(matrix_transpose=xp.matrix_transpose(x), tril=xp.tril(x, k=-1),
                   triu=xp.triu(x))
    if x.dtype.kind != "c":
        order = xp.argsort(x, axis=last, stable=True)
        # NumPy's sort has no ``descending``: the standard's is its reverse (the values)
        descending = (np.flip(np.sort(x, axis=last), axis=last) if xp is np
                      else xp.sort(x, axis=last, descending=True))
        out.update(sort=descending,
                   argsort=order, take_along_axis=xp.take_along_axis(x, order, axis=last))
        if x.dtype != np.bool_:
            lo, hi = xp.min(x), xp.max(x)
            out.update(clip=xp.clip(x, min=lo + 0, max=hi - 0),
                       searchsorted=xp.searchsorted(xp.sort(xp.reshape(x, (-1,))), y))
    return out


def _contractions(xp, a, b, v):
    return {"matmul": xp.matmul(a, b), "tensordot": xp.tensordot(a, b, axes=1),
            "vecdot": xp.vecdot(a, v)}


def _creations(xp, x):
    dt = x.dtype
    return {"arange": xp.arange(1, 7, 2, dtype=None if dt.kind in "cb" else dt),
            "asarray": xp.asarray(x, dtype=dt, copy=True),
            "empty": xp.empty((2, 3), dtype=dt).shape,
            "empty_like": xp.empty_like(x).shape,
            "eye": xp.eye(3, 4, k=1, dtype=dt),
            "full": xp.full((2, 2), 1, dtype=dt),
            "full_like": xp.full_like(x, 0),
            "linspace": xp.linspace(0, 1, 5, endpoint=False),
            "meshgrid": xp.meshgrid(xp.reshape(x, (-1,))[:3], xp.reshape(x, (-1,))[:2])[1],
            "ones": xp.ones(3, dtype=dt), "ones_like": xp.ones_like(x),
            "zeros": xp.zeros((1, 2), dtype=dt), "zeros_like": xp.zeros_like(x)}


def _dtype_functions(xp, x, y):
    return {"can_cast": xp.can_cast(x.dtype, y.dtype),
            "result_type": xp.result_type(x, y),
            "isdtype": [xp.isdtype(x.dtype, k) for k in ("bool", "integral", "real floating",
                                                         "complex floating", "numeric")],
            "finfo": xp.finfo(x.dtype).eps if x.dtype.kind in "fc" else None,
            "iinfo": xp.iinfo(x.dtype).max if x.dtype.kind in "iu" else None,
            "broadcast_shapes": xp.broadcast_shapes(x.shape, y.shape)}


# only their outputs' shapes depend on the values: eager (outside jit) in arrjit, as the
# standard allows ("data-dependent shapes": False in the inspection API)
EAGER = ["nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values"]
# array-api-strict's own configuration, not functions of the standard
NOT_STANDARD = {"get_array_api_strict_flags", "reset_array_api_strict_flags",
                "set_array_api_strict_flags"}


def test_the_table_covers_every_function_of_the_standard():
    x = np.ones((2, 3))
    covered = set(UNARY) | set(BINARY) | set(EAGER)
    for dtype in ("bool", "int8", "float64", "complex128"):
        z = x.astype(dtype)
        covered |= set(_reductions(np, z, 0, False)) | set(_manipulations(np, z, z))
        covered |= set(_creations(np, z)) | set(_dtype_functions(np, z, z))
    covered |= set(_contractions(np, x, x.T, x[0]))
    standard = {n for n in dir(xps) if not n.startswith("_") and callable(getattr(xps, n))
                and not isinstance(getattr(xps, n), type)} - NOT_STANDARD
    assert standard - covered == set()


def sample(dtype, shape, rng, small=False):
    """Random values of ``dtype`` with edges: extremes for integers; NaN, infinities and
    signed zeros for floats (in both parts of complex values). ``small``: integers in
    [0, 5), so that powers and shifts stay defined, and finite floats (how BLAS and NumPy's
    contractions propagate infinities is not specified)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        if small:
            return rng.integers(0, 5, shape).astype(dt)
        info = np.iinfo(dt)
        vals = rng.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True)
        vals = vals.astype(dt)
        vals.flat[0] = info.max
        return vals
    real = np.zeros(1, dt).real.dtype
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], real)

    def part():
        vals = (rng.standard_normal(shape) * 3).astype(real)
        mask = rng.random(shape) < (0 if small else 0.3)
        vals[mask] = rng.choice(specials, size=int(mask.sum()))
        return vals

    if dt.kind == "c":
        out = np.empty(shape, dt)
        out.real, out.imag = part(), part()
        return out
    return part()


def assert_agrees(name, out, ref):
    if isinstance(ref, (list, tuple)):
        assert type(out) is type(ref) or isinstance(out, (list, tuple)), name
        for o, r in zip(out, ref):
            assert_agrees(name, o, r)
        return
    if ref is None or isinstance(ref, (bool, int, float, np.dtype)) and not isinstance(
            ref, np.generic):
        assert out == ref, (name, out, ref)
        return
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.dtype == ref.dtype and out.shape == ref.shape, (name, out.dtype, ref.dtype,
                                                               out.shape, ref.shape)
    if ref.dtype.kind not in "fc":
        np.testing.assert_array_equal(out, ref, err_msg=name)
        return
    narrow = ref.dtype in (np.float32, np.complex64)
    finite = np.isfinite(ref)
    scale = np.max(np.abs(ref[finite]), initial=1.0)
    for o, r in ((out.real, ref.real), (out.imag, ref.imag)):
        np.testing.assert_array_equal(np.isnan(o), np.isnan(r), err_msg=f"{name}: NaNs")
        inf = np.isinf(r)
        np.testing.assert_array_equal(o[inf], r[inf], err_msg=f"{name}: infinities")
        ok = np.isfinite(r)
        np.testing.assert_allclose(o[ok], r[ok], rtol=1e-5 if narrow else 1e-12,
                                   atol=(1e-6 if narrow else 1e-13) * scale, err_msg=name)


def run_both(name, fn, *args):
    """``fn(np, *args)`` and ``fn(anp, *traced args)`` under jit, compared entry by entry."""
    with np.errstate(all="ignore"):
        refs = fn(np, *args)
    outs = arrjit.jit(lambda *xs: fn(anp, *xs))(*args)
    assert set(outs) == set(refs), name
    for key in refs:
        assert_agrees(f"{name}:{key}", outs[key], refs[key])


def run_at_trace_time(name, fn, *args):
    """``fn(np, *args)`` and ``fn(anp, *traced args)``, whose results are Python values (dtypes,
    shapes, flags) computed while tracing."""
    refs, seen = fn(np, *args), {}

    def traced(*xs):
        seen.update(fn(anp, *xs))
        return xs[0]

    arrjit.jit(traced)(*args)
    assert seen == refs, (name, seen, refs)


def _accepted(names, *args):
    """The names NumPy computes for ``args`` (not in float16); the rest must be refused by
    arrjit at trace time with NumPy's TypeError (or arrjit's float16 refusal)."""
    kept = []
    for name in names:
        try:
            with np.errstate(all="ignore"):
                ref = getattr(np, name)(*args)
        except TypeError:
            with pytest.raises((TypeError, arrjit.errors.UnsupportedDtypeError)):
                arrjit.make_graph(getattr(anp, name))(*args)
            continue
        if np.asarray(ref).dtype == np.float16:
            with pytest.raises(arrjit.errors.UnsupportedDtypeError):
                arrjit.make_graph(getattr(anp, name))(*args)
            continue
        kept.append(name)
    return kept


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    # y broadcasts against x: x's shape with some leading axes dropped or set to 1
    drop = draw(st.integers(0, ndim - 1))
    y_shape = tuple(1 if draw(st.booleans()) else d for d in shape[drop:])
    return (draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES)), shape, y_shape,
            draw(st.one_of(st.none(), st.integers(0, ndim - 1))), draw(st.booleans()),
            draw(st.integers(0, 2 ** 16)))


EXAMPLES = int(os.environ.get("ARRJIT_TEST_EXAMPLES", "12"))


# no shrinking: each step compiles anew (minutes); the failing case is reported as drawn
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(cases())
def test_the_standard_functions_agree_with_numpy(case):
    dtype, other, shape, y_shape, axis, keepdims, seed = case
    rng = np.random.default_rng(seed)
    x = sample(dtype, shape, rng)
    y = sample(other, y_shape, rng, small=True)
    unary = _accepted(UNARY, x)
    run_both("unary", lambda xp, x: {n: getattr(xp, n)(x) for n in unary}, x)
    binary = _accepted(BINARY, x, y)
    run_both("binary", lambda xp, x, y: {n: getattr(xp, n)(x, y) for n in binary}, x, y)
    run_both("reductions", lambda xp, x: _reductions(xp, x, axis, keepdims), x)
    run_both("manipulations", _manipulations, x, y.astype(x.dtype))
    run_both("creations", _creations, x)
    run_at_trace_time("dtype functions", _dtype_functions, x, y)
    a, b = sample(dtype, (3, 4), rng, small=True), sample(dtype, (4, 2), rng, small=True)
    if x.dtype != np.bool_:
        run_both("contractions", _contractions, a, b, a[0])
    for name in EAGER:
        out, ref = getattr(anp, name)(x), getattr(np, name)(x)
        assert_agrees(name, tuple(out) if isinstance(out, tuple) else out,
                      tuple(ref) if isinstance(ref, tuple) else ref)
