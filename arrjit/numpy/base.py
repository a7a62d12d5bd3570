"""The namespace's base: dtypes and constants, creation and elementwise functions (one
primitive each), with the views of ``views``. The topic modules build on these.

>>> reshape(arange(6.0), (2, 3)).shape
(2, 3)
>>> where(arange(3) > 0, 1.0, -1.0)
array([-1.,  1.,  1.])
"""
from __future__ import annotations

import builtins
import operator as _operator
from typing import Any as _Any

import numpy as _np

from ..core import primitives as _p
from ..core.dtypes import check_supported as _check_supported, result_type as _result_type
from ..core.ir import Op as _Op
from ..core.trace import Tracer as _Tracer, current_trace as _current_trace
from .views import *  # noqa: F401,F403  (re-exported: the topic modules use base's names)
from .views import _normalize_axis, _shape_tuple, _size  # noqa: F401

# dtypes and constants, as in numpy / jax.numpy
bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float32, float64 = _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
dtype = _np.dtype
ndarray = _np.ndarray


def _is_traced(*xs: _Any) -> bool:
    return builtins.any(isinstance(x, _Tracer) for x in xs)


def _checked_dtype(dtype, what: str):
    return None if dtype is None else _check_supported(dtype, what)


# --------------------------------------------------------------------------------------------
# creation
# --------------------------------------------------------------------------------------------
def array(object, dtype=None, copy=True, ndmin: int = 0):
    """``numpy.array``: a new array (a traced array is returned as the same value)."""
    dt = _checked_dtype(dtype, "array")
    if isinstance(object, _Tracer):
        out = object if dt is None else astype(object, dt)
        while out.ndim < ndmin:
            out = expand_dims(out, 0)
        return out
    if isinstance(object, (list, tuple)) and _contains_tracer(object):
        out = _stack_nested(object)
        out = out if dt is None else astype(out, dt)
        while out.ndim < ndmin:
            out = expand_dims(out, 0)
        return out
    result = _np.array(object, dtype=dt, copy=copy, ndmin=ndmin)
    _check_supported(result.dtype, "array")
    return _traced_constant(result)


def _traced_constant(result: _np.ndarray):
    """``result`` as the namespace returns a new array: inside jit, as in jax.numpy, a
    (constant) traced array, which has ``.at`` and fuses; outside, the ndarray itself."""
    ctx = _current_trace()
    if ctx is not None:
        return _p.Tracer(ctx, ctx.constant(result), frozenset())
    return result


def _placed(result, device, function: str):
    """``result`` on ``device`` (the array API's keyword of the creation functions). Inside
    jit arrays live where the jitted function runs, so only the name is checked there."""
    if device is None:
        return result
    from .. import placement

    names = placement.devices()
    if device not in names:
        raise ValueError(f"anp.{function}(device={device!r}): the devices here are {names}; "
                         f"pass one of them, or leave device=None")
    if isinstance(result, _Tracer):
        return result
    return placement.device_put(result, device)


def _stack_nested(obj, depth: int = 0):
    """``numpy.array`` of nested lists holding traced arrays, as ``jax.numpy.array`` does:
    each level stacked along a new leading axis, the dtype promoted as NumPy's ``array``
    would (Python scalars count as their default dtypes)."""
    if isinstance(obj, _Tracer):
        return obj
    if not isinstance(obj, (list, tuple)):
        return asarray(_np.asarray(obj))
    parts = [_stack_nested(o, depth + 1) for o in obj]
    shapes = {_p.aval_of(x).shape for x in parts}
    if len(shapes) != 1:
        raise ValueError(f"anp.array: setting an array element with a sequence. The requested "
                         f"array has an inhomogeneous shape after {depth + 1} dimension(s): "
                         f"elements of shapes {sorted(shapes)}; give every element one shape")
    dt = _result_type(*(_p.aval_of(x) for x in parts))[0]
    parts = [expand_dims(x if x.dtype == dt else astype(x, dt), 0) for x in parts]
    return _p.bind_library(_Op.CONCATENATE, tuple(parts),
                           _p.Aval((len(parts),) + shapes.pop(), dt), None, axis=0)


def _contains_tracer(obj) -> bool:
    if isinstance(obj, _Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return builtins.any(_contains_tracer(o) for o in obj)
    return False


def asarray(a, dtype=None, *, copy=None, device=None):
    """``numpy.asarray``: no copy when ``a`` already is an array of that dtype; ``copy=False``
    refuses a conversion that must copy, as NumPy does. A traced array is immutable, so a
    copy of it is itself. ``device`` places the result (see ``arrjit.devices()``).

    >>> asarray([1, 2], dtype="float32", device="cpu")
    array([1., 2.], dtype=float32)
    """
    if isinstance(a, _Tracer):
        if copy is False and dtype is not None and _np.dtype(dtype) != a.dtype:
            raise ValueError(f"Unable to avoid copy while creating an array as requested: "
                             f"{a.aval} cast to {_np.dtype(dtype).name}")
        return _placed(a if dtype is None else astype(a, dtype), device, "asarray")
    return _placed(array(a, dtype=dtype, copy=copy), device, "asarray")


def _filled(shape, fill_value, dtype) -> _Any:
    shape = _shape_tuple(shape)
    if isinstance(fill_value, _Tracer):
        value = fill_value if dtype is None else astype(fill_value, dtype)
        return broadcast_to(value, shape)
    if dtype is None:
        dtype = _np.array(fill_value).dtype
    dt = _check_supported(dtype, "array")
    ctx = _current_trace()
    if ctx is not None:
        # Inside jit a constant fill is a broadcast scalar: fused as a literal, never stored.
        scalar = _p.Tracer(ctx, ctx.constant(_np.asarray(fill_value, dtype=dt)), frozenset())
        return broadcast_to(scalar, shape)
    return _np.full(shape, fill_value, dtype=dt)


def zeros(shape, dtype=None, *, device=None):
    """``numpy.zeros``; the default dtype is float64; ``device`` as in ``asarray``.

    >>> zeros((2,), dtype="int8")
    array([0, 0], dtype=int8)
    """
    return _placed(_filled(shape, 0, float64 if dtype is None else dtype), device, "zeros")


def ones(shape, dtype=None, *, device=None):
    """``numpy.ones``; the default dtype is float64; ``device`` as in ``asarray``."""
    return _placed(_filled(shape, 1, float64 if dtype is None else dtype), device, "ones")


def empty(shape, dtype=None, *, device=None):
    """``numpy.empty``; inside jit the contents are zeros (never uninitialised memory)."""
    if _current_trace() is not None:
        return zeros(shape, dtype, device=device)
    return _placed(_np.empty(_shape_tuple(shape), dtype=_check_supported(
        float64 if dtype is None else dtype, "empty")), device, "empty")


def full(shape, fill_value, dtype=None, *, device=None):
    """``numpy.full``; ``device`` as in ``asarray``."""
    return _placed(_filled(shape, fill_value, dtype), device, "full")


def _like(a, dtype, shape):
    return (dtype if dtype is not None else a.dtype), (a.shape if shape is None else shape)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    return _placed(zeros(*reversed(_like(a, dtype, shape))), device, "zeros_like")


def ones_like(a, dtype=None, shape=None, *, device=None):
    return _placed(ones(*reversed(_like(a, dtype, shape))), device, "ones_like")


def empty_like(a, dtype=None, shape=None, *, device=None):
    return _placed(empty(*reversed(_like(a, dtype, shape))), device, "empty_like")


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    dt, sh = _like(a, dtype, shape)
    return _placed(full(sh, fill_value, dt), device, "full_like")


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """``numpy.arange`` (bounds must be concrete: the length is part of the shape)."""
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, _Tracer):
            raise _p.errors.ConcretizationTypeError(
                f"anp.arange {name} is a traced value {v.aval}: the length of an array must be "
                f"known while tracing. Mark that argument static (static_argnames=...).")
    out = _np.arange(start, stop, step, dtype=_checked_dtype(dtype, "arange"))
    _check_supported(out.dtype, "arange")
    return _placed(_traced_constant(out), device, "arange")


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, device=None):
    """``numpy.linspace``; ``num`` is static (it is the length), the bounds may be traced
    (arrays of bounds give one sequence per element, along ``axis``). Computed as NumPy
    computes it: ``arange(num) * step + start`` in the bounds' inexact dtype, the last
    element exactly ``stop``.

    >>> import arrjit
    >>> arrjit.jit(lambda a, b: linspace(a, b, 5))(0.0, 1.0)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = _operator.index(num) if not isinstance(num, _Tracer) else num
    if isinstance(num, _Tracer):
        raise _p.errors.ConcretizationTypeError(
            f"anp.linspace num is a traced value {num.aval}: the length of an array must be "
            f"known while tracing. Mark that argument static (static_argnames=...).")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    out_dtype = _checked_dtype(dtype, "linspace")
    if not _is_traced(start, stop):
        out = _np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep,
                           dtype=out_dtype, axis=axis)
        values = out[0] if retstep else out
        _check_supported(values.dtype, "linspace")
        values = _placed(_traced_constant(values), device, "linspace")
        return (values, out[1]) if retstep else values
    start, stop = asarray(start), asarray(stop)
    dt = _result_type(_p.aval_of(start), _p.aval_of(stop))[0]
    if dt.kind not in "fc":
        dt = _np.dtype(float64)
    div = (num - 1) if endpoint else num
    delta = subtract(astype(stop, dt), astype(start, dt))  # noqa: F821
    ramp = reshape(arange(0, num, dtype=dt), (-1,) + (1,) * delta.ndim)
    if div > 0:
        step = true_divide(delta, div)  # noqa: F821
        y = where(equal(step, 0), multiply(true_divide(ramp, div), delta),  # noqa: F821
                  multiply(ramp, step))  # noqa: F821
    else:
        step = full(delta.shape, _np.nan, dt)
        y = multiply(ramp, delta)  # noqa: F821
    y = add(y, start)  # noqa: F821
    if endpoint and num > 1:
        last = reshape(equal(arange(num), num - 1), (-1,) + (1,) * delta.ndim)  # noqa: F821
        y = where(last, astype(stop, dt), y)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if out_dtype is not None:
        if out_dtype.kind in "iu":
            y = floor(y)  # noqa: F821
        y = astype(y, out_dtype)
    return (y, step) if retstep else y


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):
    """``numpy.logspace``: ``base ** linspace(start, stop, num)``; bounds may be traced."""
    if not _is_traced(start, stop, base):
        return _traced_constant(_np.logspace(start, stop, num, endpoint=endpoint, base=base,
                                             dtype=_checked_dtype(dtype, "logspace"), axis=axis))
    y = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    if _np.ndim(base) if not isinstance(base, _Tracer) else base.ndim:
        base = expand_dims(asarray(base), axis)
    y = power(base, y)  # noqa: F821
    return y if dtype is None else astype(y, _check_supported(dtype, "logspace"))


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """``numpy.geomspace``: a geometric sequence from ``start`` to ``stop`` (bounds may be
    traced, and must be nonzero), computed as NumPy computes it: in at least float64, by
    ``logspace`` between the logarithms of the bounds rotated onto the positive reals, with
    the end points exact."""
    if not _is_traced(start, stop):
        return _traced_constant(_np.geomspace(start, stop, num, endpoint=endpoint,
                                              dtype=_checked_dtype(dtype, "geomspace"),
                                              axis=axis))
    start, stop = asarray(start), asarray(stop)
    dt = _result_type(_p.aval_of(start), _p.aval_of(stop), _p.Aval((), _np.dtype(float64)))[0]
    start, stop = astype(start, dt), astype(stop, dt)
    sign = _np_sign(start)
    y = logspace(log10(true_divide(start, sign)),  # noqa: F821
                 log10(true_divide(stop, sign)), num,  # noqa: F821
                 endpoint=endpoint)
    bounds_shape = (-1,) + (1,) * (y.ndim - 1)
    if num:
        first = reshape(equal(arange(num), 0), bounds_shape)  # noqa: F821
        y = where(first, true_divide(start, sign), y)  # noqa: F821
        if endpoint and num > 1:
            last = reshape(equal(arange(num), num - 1), bounds_shape)  # noqa: F821
            y = where(last, true_divide(stop, sign), y)  # noqa: F821
    y = multiply(y, sign)  # noqa: F821
    if axis != 0:
        y = moveaxis(y, 0, axis)
    return y if dtype is None else astype(y, _check_supported(dtype, "geomspace"))


def _np_sign(x):
    """NumPy 2's ``sign``: ``x / |x|`` for complex values."""
    if x.dtype.kind == "c":
        return true_divide(x, absolute(x))  # noqa: F821
    return sign(x)  # noqa: F821


# --------------------------------------------------------------------------------------------
# elementwise (one primitive each; NumPy's ufunc defines the semantics)
# --------------------------------------------------------------------------------------------
def _ufunc(op: _Op, name: str):
    nin = 1 if op in _UNARY_OPS else 2

    if nin == 1:
        def fn(x):
            return _p.bind_ufunc(op, x)
    else:
        def fn(x1, x2):
            return _p.bind_ufunc(op, x1, x2)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``numpy.{op.value}`` with NumPy's dtype and broadcasting rules."
    return fn


from ..core.ir import UNARY as _UNARY_OPS, UFUNC_OPS as _UFUNC_OPS  # noqa: E402

for _op in _UFUNC_OPS:
    globals()[_op.value] = _ufunc(_op, _op.value)

divide = true_divide  # noqa: F821
mod = remainder  # noqa: F821
abs = absolute  # noqa: F821,A001
bitwise_not = invert  # noqa: F821
bitwise_invert = invert  # noqa: F821
bitwise_left_shift = left_shift  # noqa: F821
bitwise_right_shift = right_shift  # noqa: F821
pow = power  # noqa: F821,A001
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2  # noqa: F821
asinh, acosh, atanh = arcsinh, arccosh, arctanh  # noqa: F821
_float_signbit = signbit  # noqa: F821


def signbit(x):
    """``numpy.signbit``: the sign bit of floats (``-0.0`` and negative NaNs included); for
    integers ``x < 0`` (NumPy answers those through a float16 loop, which arrjit does not
    compile, with the same result)."""
    if isinstance(x, _Tracer) and x.dtype.kind in "iub":
        return less(x, 0) if x.dtype.kind == "i" else zeros(x.shape, _np.bool_)  # noqa: F821
    return _float_signbit(x)


def positive(x):
    """``numpy.positive``: a copy with the same dtype."""
    if isinstance(x, _Tracer):
        _p.resolve_ufunc(_np.positive, [x.aval])
        return x
    return _np.positive(x)


def conjugate(x):
    """``numpy.conjugate``: the complex conjugate; real values are themselves (bool becomes
    int8, as in NumPy).

    >>> conjugate(_np.array([1 + 2j]))
    array([1.-2.j])
    """
    if not isinstance(x, _Tracer):
        return _np.conjugate(x)
    if x.dtype.kind == "c":
        return _p.bind_ufunc(_Op.CONJ, x)
    return astype(x, _np.int8) if x.dtype == _np.bool_ else x


conj = conjugate


def real(x):
    """``numpy.real``: the real part (a real array is its own).

    >>> real(_np.array([1 + 2j]))
    array([1.])
    """
    if isinstance(x, _Tracer):
        return _p.bind_complex_part(_Op.REAL, x) if x.dtype.kind == "c" else x
    return _np.real(x)


def imag(x):
    """``numpy.imag``: the imaginary part (zeros of a real array's dtype).

    >>> imag(_np.array([1 + 2j]))
    array([2.])
    """
    if isinstance(x, _Tracer):
        return _p.bind_complex_part(_Op.IMAG, x) if x.dtype.kind == "c" else zeros(
            x.shape, x.dtype)
    return _np.imag(x)


def angle(z, deg: bool = False):
    """``numpy.angle``: the argument of a complex value, ``arctan2(imag, real)``.

    >>> angle(_np.array([1j]))
    array([1.57079633])
    """
    if not isinstance(z, _Tracer):
        return _np.angle(z, deg)
    # NumPy's own spelling: a real input's imaginary part is the weak scalar 0, so
    # angle(uint8) is float16 there (refused here) and angle(bool) float64.
    out = arctan2(imag(z), real(z)) if z.dtype.kind == "c" else arctan2(0, z)  # noqa: F821
    return multiply(out, 180.0 / pi) if deg else out  # noqa: F821


def where(condition, x=None, y=None):
    """``numpy.where(condition, x, y)``. The one-argument form has a value-dependent shape and
    is only available outside jit."""
    if x is None and y is None:
        if _is_traced(condition):
            raise _p.errors.ConcretizationTypeError(
                "anp.where(condition) with one argument returns indices whose number depends on "
                "the values, so it cannot be traced; use anp.where(condition, x, y)")
        return _np.where(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _p.bind_select(condition, x, y)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x.astype(dtype)`` (the array API's function form; ``copy`` changes nothing for a
    traced array, which is immutable)."""
    if not isinstance(x, _Tracer):
        return _np.asarray(x).astype(dtype, copy=copy)
    return _p.bind_cast(x, dtype)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """``numpy.clip``: ``minimum(maximum(a, a_min), a_max)``, NaN propagating; the bounds
    also as the array API's ``min=``/``max=``; with neither, ``a`` itself."""
    for name, positional, keyword in (("min", a_min, min), ("max", a_max, max)):
        if positional is not None and keyword is not None:
            raise ValueError(f"Passing more than one of `a_{name}` and `{name}` is not allowed")
    a_min = a_min if a_min is not None else min
    a_max = a_max if a_max is not None else max
    if not isinstance(a, _Tracer):
        return _np.clip(a, a_min, a_max)
    if a.dtype.kind in "iu":
        # NumPy drops a Python-int bound beyond the integer dtype's range on that side
        info = _np.iinfo(a.dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        return positive(a)          # NumPy's clip without bounds (which refuses booleans)
    out = a
    if a_min is not None:
        out = maximum(out, a_min)  # noqa: F821
    if a_max is not None:
        out = minimum(out, a_max)  # noqa: F821
    return out


def round(a, decimals: int = 0):  # noqa: A001
    """``numpy.round``: round half to even, at ``decimals`` places."""
    if _p.aval_of(a).dtype == _np.bool_:
        raise _p.errors.UnsupportedDtypeError(
            "anp.round of a bool array is float16 in NumPy, which arrjit does not compile; "
            "cast first: anp.round(x.astype(anp.float32))")
    if not isinstance(a, _Tracer):
        return _np.round(a, decimals)
    if a.dtype.kind in "iu":
        if decimals < 0:
            raise NotImplementedError("anp.round of integers with negative decimals under jit")
        return a
    if decimals == 0:
        return rint(a)  # noqa: F821
    if decimals > 0:
        factor = 10.0 ** decimals
        return true_divide(rint(multiply(a, factor)), factor)  # noqa: F821
    factor = 10.0 ** (-decimals)
    return multiply(rint(true_divide(a, factor)), factor)  # noqa: F821


around = round
