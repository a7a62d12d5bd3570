"""Reductions of ``arrjit.numpy``: sum, prod, max, min, argmax, argmin, any, all, mean, var,
std, logsumexp, cumulative sums and the NaN-aware variants. NumPy decides every result dtype
(probed on a one-element array), so ``sum(int8)`` is int64 and ``mean(float32)`` float32.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from . import base as anp
from ..core import primitives as p
from ..core.dtypes import check_supported
from ..core.ir import Op
from ..core.sizes import Size
from ..core.trace import Tracer


def _axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for ax in items:
        ax = operator.index(ax)
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(f"axis {ax} is out of bounds for array of dimension "
                                          f"{ndim}")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def _keep(result, x, axes, keepdims: bool):
    if not keepdims:
        return result
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return anp.reshape(result, shape)


def _probe_dtype(np_fn, dtype_in: np.dtype, **kwargs) -> np.dtype:
    out = np.asarray(np_fn(np.ones(1, dtype_in), **kwargs)).dtype
    return check_supported(out, np_fn.__name__)


# how an ``initial`` value joins each reduction's result
_WITH_INITIAL = {Op.REDUCE_SUM: "add", Op.REDUCE_PROD: "multiply", Op.REDUCE_MAX: "maximum",
                 Op.REDUCE_MIN: "minimum", Op.REDUCE_AND: "logical_and",
                 Op.REDUCE_OR: "logical_or"}
_IDENTITY = {Op.REDUCE_SUM: 0, Op.REDUCE_PROD: 1, Op.REDUCE_AND: True, Op.REDUCE_OR: False}


def _masked(a, where, fill):
    """``a`` with ``fill`` where the mask ``where`` (broadcast to ``a``'s shape) is False."""
    mask = anp.asarray(where)
    if mask.dtype != np.bool_:
        raise TypeError(f"where= must be a boolean mask, got {mask.dtype}")
    try:
        np.broadcast_shapes(mask.shape, a.shape)
    except ValueError:
        raise ValueError(f"where= of shape {mask.shape} does not broadcast to the array's "
                         f"shape {a.shape}") from None
    return anp.where(mask, a, fill)


def _reduction(op: Op, np_fn, identity: bool, name: str):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, *, initial=None,
               where=None):
        if out is not None:
            raise TypeError(f"anp.{name}: out= is not supported; arrays are immutable")
        if not builtins.any(isinstance(v, Tracer) for v in (a, initial, where)):
            kwargs = {} if dtype is None or not _takes_dtype else {"dtype": dtype}
            if initial is not None:
                kwargs["initial"] = initial
            if where is not None:
                kwargs["where"] = where
            return np_fn(np.asarray(a) if p.is_python_scalar(a) else a, axis=axis,
                         keepdims=keepdims, **kwargs)
        a = anp.asarray(a)
        axes = _axes(axis, a.ndim)
        kwargs = {"dtype": dtype} if (dtype is not None and _takes_dtype) else {}
        result_dtype = _probe_dtype(np_fn, a.dtype, **kwargs)
        if where is not None:
            fill = initial if op not in _IDENTITY else _IDENTITY[op]
            if fill is None:
                ufunc = {"max": "maximum", "min": "minimum"}[name]
                raise ValueError(f"reduction operation '{ufunc}' does not have an identity, "
                                 f"so to use a where mask one has to specify 'initial'")
            a = _masked(a, where, fill)
        if initial is None and not identity and builtins.any(a.shape[i] == 0 for i in axes):
            ufunc = {"max": "maximum", "min": "minimum"}.get(name, name)
            raise ValueError(f"zero-size array to reduction operation {ufunc} which has no "
                             f"identity")
        if op in (Op.REDUCE_AND, Op.REDUCE_OR):
            a = anp.not_equal(a, 0) if a.dtype != np.bool_ else a
        res = p.bind_reduce(op, a, axes, result_dtype, None)
        if initial is not None:
            res = getattr(anp, _WITH_INITIAL[op])(res, anp.asarray(initial).astype(
                result_dtype))
        return _keep(res, a, axes, keepdims)

    _takes_dtype = op in (Op.REDUCE_SUM, Op.REDUCE_PROD)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"``numpy.{name}`` over ``axis`` (int, tuple or None), ``keepdims``, "
                      f"``initial`` and a ``where`` mask.")
    return reduce


sum = _reduction(Op.REDUCE_SUM, np.sum, True, "sum")  # noqa: A001
prod = _reduction(Op.REDUCE_PROD, np.prod, True, "prod")
max = _reduction(Op.REDUCE_MAX, np.max, False, "max")  # noqa: A001
min = _reduction(Op.REDUCE_MIN, np.min, False, "min")  # noqa: A001
all = _reduction(Op.REDUCE_AND, np.all, True, "all")  # noqa: A001
any = _reduction(Op.REDUCE_OR, np.any, True, "any")  # noqa: A001
amax, amin = max, min


def _arg_reduction(op: Op, np_fn, name: str):
    def arg(a, axis=None, out=None, *, keepdims=False):
        if not isinstance(a, Tracer):
            return np_fn(a, axis=axis, keepdims=keepdims)
        if a.ndim == 0:
            return anp.zeros((), np.int64)
        axes = tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim)
        if builtins.any(a.shape[i] == 0 for i in axes):
            raise ValueError(f"attempt to get {name} of an empty sequence")
        res = p.bind_reduce(op, a, axes, np.dtype(np.int64), None)
        if keepdims:
            shape = (1,) * a.ndim if axis is None else tuple(
                1 if i in axes else d for i, d in enumerate(a.shape))
            res = anp.reshape(res, shape)
        return res

    arg.__name__ = arg.__qualname__ = name
    arg.__doc__ = f"``numpy.{name}``: first index of the extreme value (NaN counts as one)."
    return arg


argmax = _arg_reduction(Op.ARGMAX, np.argmax, "argmax")
argmin = _arg_reduction(Op.ARGMIN, np.argmin, "argmin")


def _count(a, axes) -> int:
    """The number of elements reduced (a ``Size``: kernels read it at run time)."""
    return Size(int(np.prod([a.shape[i] for i in axes], dtype=np.int64)))


def _where_count(a, axes, where, keepdims: bool, dtype):
    """How many elements each reduction group holds: all of them, or where the mask is
    True."""
    if where is None:
        return _count(a, axes)
    mask = anp.broadcast_to(anp.asarray(where), a.shape)
    return sum(mask, axis=axes, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """``numpy.mean``: float64 for integer inputs, float32 (and complex) stays as it is;
    ``where`` averages the masked elements only."""
    if not (isinstance(a, Tracer) or isinstance(where, Tracer)):
        extra = {} if where is None else {"where": where}
        return np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims, **extra)
    a = anp.asarray(a)
    axes = _axes(axis, a.ndim)
    acc = np.dtype(dtype) if dtype is not None else (
        a.dtype if a.dtype.kind in "fc" else np.dtype(np.float64))
    total = sum(a, axis=axes, dtype=acc, keepdims=keepdims, where=where)
    return anp.true_divide(total, _where_count(a, axes, where, keepdims, acc)).astype(acc)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``numpy.average``: the mean, or ``sum(a * weights) / sum(weights)`` along ``axis``;
    1-d ``weights`` of ``a.shape[axis]`` broadcast along that axis; ``returned`` adds the sum
    of the weights, broadcast to the result. Integer and boolean inputs average in float64.
    Inside jit, weights that sum to zero give ``nan``/``inf`` (as in ``jax.numpy``) where
    NumPy raises ``ZeroDivisionError``.

    >>> average(anp.arange(4.0), weights=[0.0, 0.0, 1.0, 1.0])
    np.float64(2.5)
    """
    if not (isinstance(a, Tracer) or isinstance(weights, Tracer)):
        return np.average(a, axis=axis, weights=weights, returned=returned, keepdims=keepdims)
    a = anp.asarray(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        count = anp.asarray(_count(a, _axes(axis, a.ndim)), avg.dtype)
        return (avg, anp.broadcast_to(count, avg.shape)) if returned else avg
    w = anp.asarray(weights)
    exact = np.float64 if a.dtype.kind in "biu" else a.dtype
    dtype = np.result_type(a.dtype, w.dtype, exact)
    if w.shape != a.shape:
        if axis is None:
            raise TypeError(f"average: axis must be specified when shapes of a {a.shape} and "
                            f"weights {w.shape} differ")
        if w.ndim != 1:
            raise TypeError(f"average: 1D weights expected when shapes of a {a.shape} and "
                            f"weights {w.shape} differ")
        (ax,) = _axes(axis, a.ndim)
        if w.shape[0] != a.shape[ax]:
            raise ValueError(f"average: length of weights {w.shape[0]} not compatible with "
                             f"axis {axis} of a {a.shape}")
        w = anp.reshape(w, tuple(-1 if d == ax else 1 for d in range(a.ndim)))
        w = anp.broadcast_to(w, a.shape)
    scale = sum(w, axis=axis, dtype=dtype, keepdims=keepdims)
    avg = sum(anp.multiply(a.astype(dtype), w.astype(dtype)), axis=axis,
              keepdims=keepdims) / scale
    return (avg, anp.broadcast_to(scale, avg.shape)) if returned else avg


def _ddof(ddof, correction):
    """NumPy's ``correction`` (the array API's name) stands for ``ddof``."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """``numpy.var``: mean of squared deviations, divided by ``n - ddof`` (``correction``:
    the array API's ``ddof``); for complex input the squared magnitudes, a real result;
    ``where`` counts the masked elements only."""
    ddof = _ddof(ddof, correction)
    if not (isinstance(a, Tracer) or isinstance(where, Tracer)):
        extra = {} if where is None else {"where": where}
        return np.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **extra)
    a = anp.asarray(a)
    axes = _axes(axis, a.ndim)
    acc = np.dtype(dtype) if dtype is not None else (
        a.dtype if a.dtype.kind in "fc" else np.dtype(np.float64))
    n = _where_count(a, axes, where, True, acc)
    centered = anp.subtract(a, anp.true_divide(sum(a, axis=axes, dtype=acc, keepdims=True,
                                                   where=where), n))
    centered = centered.astype(acc) if centered.dtype != acc else centered
    if acc.kind == "c":
        re, im = anp.real(centered), anp.imag(centered)
        squares = anp.add(anp.multiply(re, re), anp.multiply(im, im))
    else:
        squares = anp.multiply(centered, centered)
    total = sum(squares, axis=axes, keepdims=keepdims, where=where)
    if where is not None:
        n = _where_count(a, axes, where, keepdims, acc)
    return anp.true_divide(total, anp.maximum(anp.subtract(n, ddof), 0) if where is not None
                           else builtins.max(n - ddof, 0)).astype(squares.dtype)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """``numpy.std``: the square root of ``var``."""
    ddof = _ddof(ddof, correction)
    if not (isinstance(a, Tracer) or isinstance(where, Tracer)):
        extra = {} if where is None else {"where": where}
        return np.std(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **extra)
    return anp.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))


def logsumexp(a, axis=None, keepdims=False):
    """``scipy.special.logsumexp``: ``log(sum(exp(a)))`` without overflow."""
    axes = _axes(axis, np.ndim(a) if not isinstance(a, Tracer) else a.ndim)
    a_max = max(a, axis=axes, keepdims=True)
    a_max = anp.where(anp.isfinite(a_max), a_max, 0)
    s = sum(anp.exp(anp.subtract(a, a_max)), axis=axes, keepdims=True)
    out = anp.add(anp.log(s), a_max)
    if not keepdims:
        out = anp.squeeze(out, axis=axes) if axes else out
    return out


def _cumulative(op: Op, np_fn, name: str):
    def cum(a, axis=None, dtype=None, out=None):
        if not isinstance(a, Tracer):
            return np_fn(a, axis=axis, dtype=dtype)
        if axis is None:
            a = anp.ravel(a)
            axis = 0
        (ax,) = _axes(axis, a.ndim)
        result_dtype = _probe_dtype(np_fn, a.dtype, **({"dtype": dtype} if dtype else {}))
        a = a.astype(result_dtype) if a.dtype != result_dtype else a
        return p.bind_library(op, (a,), p.Aval(a.shape, result_dtype), None, axis=ax)

    cum.__name__ = cum.__qualname__ = name
    cum.__doc__ = f"``numpy.{name}`` along ``axis`` (flattened when None)."
    return cum


cumsum = _cumulative(Op.CUMSUM, np.cumsum, "cumsum")
cumprod = _cumulative(Op.CUMPROD, np.cumprod, "cumprod")


def nansum(a, axis=None, dtype=None, keepdims=False):
    """``numpy.nansum``: NaNs count as zero."""
    if not isinstance(a, Tracer):
        return np.nansum(a, axis=axis, dtype=dtype, keepdims=keepdims)
    if a.dtype.kind in "fc":
        a = anp.where(anp.isnan(a), 0, a)
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


def _ignoring_nans(reduce, a, fill, all_nan, axis, keepdims):
    """``reduce`` of ``a`` with its NaNs replaced by ``fill`` (a value that loses to every
    other), and ``all_nan`` where a slice holds nothing but NaNs."""
    nan = anp.isnan(a)
    # a complex fill is below (above) every value in NumPy's lexicographic order
    fill_value = complex(fill, fill) if a.dtype.kind == "c" else fill
    found = reduce(anp.where(nan, fill_value, a), axis=axis, keepdims=keepdims)
    return anp.where(all(nan, axis=axis, keepdims=keepdims), all_nan, found)


def _nan_extreme(fn, np_fn, fill):
    def nan_ext(a, axis=None, keepdims=False):
        if not isinstance(a, Tracer):
            return np_fn(a, axis=axis, keepdims=keepdims)
        if a.dtype.kind not in "fc":
            return fn(a, axis=axis, keepdims=keepdims)
        return _ignoring_nans(fn, a, fill, np.nan, axis, keepdims)
    nan_ext.__name__ = np_fn.__name__
    nan_ext.__doc__ = f"``numpy.{np_fn.__name__}``: NaNs are ignored; an all-NaN slice is NaN."
    return nan_ext


nanmax = _nan_extreme(max, np.nanmax, -np.inf)
nanmin = _nan_extreme(min, np.nanmin, np.inf)


def nanmean(a, axis=None, keepdims=False):
    """``numpy.nanmean``: the mean of the non-NaN values."""
    if not isinstance(a, Tracer):
        return np.nanmean(a, axis=axis, keepdims=keepdims)
    if a.dtype.kind not in "fc":
        return mean(a, axis=axis, keepdims=keepdims)
    valid = anp.logical_not(anp.isnan(a))
    return anp.true_divide(nansum(a, axis=axis, keepdims=keepdims),
                           sum(valid, axis=axis, keepdims=keepdims)).astype(a.dtype)


def count_nonzero(a, axis=None, *, keepdims=False):
    """``numpy.count_nonzero``."""
    if not isinstance(a, Tracer):
        return np.count_nonzero(a, axis=axis, keepdims=keepdims)
    return sum(anp.not_equal(a, 0), axis=axis, dtype=np.int64, keepdims=keepdims)



def _nan_filled(a, fill):
    """``a`` with its NaNs replaced by ``fill`` (floats and complex; others as they are)."""
    return anp.where(anp.isnan(a), fill, a) if a.dtype.kind in "fc" else a


def nanprod(a, axis=None, dtype=None, keepdims=False):
    """``numpy.nanprod``: NaNs count as one."""
    if not isinstance(a, Tracer):
        return np.nanprod(a, axis=axis, dtype=dtype, keepdims=keepdims)
    return prod(_nan_filled(a, 1), axis=axis, dtype=dtype, keepdims=keepdims)


def nancumsum(a, axis=None, dtype=None):
    """``numpy.nancumsum``: NaNs count as zero."""
    if not isinstance(a, Tracer):
        return np.nancumsum(a, axis=axis, dtype=dtype)
    return cumsum(_nan_filled(a, 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None):
    """``numpy.nancumprod``: NaNs count as one."""
    if not isinstance(a, Tracer):
        return np.nancumprod(a, axis=axis, dtype=dtype)
    return cumprod(_nan_filled(a, 1), axis=axis, dtype=dtype)


def nanvar(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """``numpy.nanvar``: the variance of the values that are not NaN."""
    ddof = _ddof(ddof, correction)
    if not isinstance(a, Tracer):
        return np.nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    where = anp.logical_not(anp.isnan(a)) if a.dtype.kind in "fc" else None
    return var(_nan_filled(a, 0), axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
               where=where)


def nanstd(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """``numpy.nanstd``: the square root of ``nanvar``."""
    ddof = _ddof(ddof, correction)
    if not isinstance(a, Tracer):
        return np.nanstd(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return anp.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _nan_arg(arg, np_fn, fill):
    def nan_arg(a, axis=None, out=None, *, keepdims=False):
        if not isinstance(a, Tracer):
            return np_fn(a, axis=axis, keepdims=keepdims)
        if a.dtype.kind not in "fc":
            return arg(a, axis=axis, keepdims=keepdims)
        # an all-NaN slice: NumPy raises ValueError, which needs the values; -1 marks it
        return _ignoring_nans(arg, a, fill, -1, axis, keepdims)
    nan_arg.__name__ = np_fn.__name__
    nan_arg.__doc__ = (f"``numpy.{np_fn.__name__}``: NaNs are ignored. Inside jit an all-NaN "
                       f"slice gives -1 (NumPy raises ValueError: a check of the values).")
    return nan_arg


nanargmax = _nan_arg(argmax, np.nanargmax, -np.inf)
nanargmin = _nan_arg(argmin, np.nanargmin, np.inf)


def ptp(a, axis=None, out=None, keepdims=False):
    """``numpy.ptp``: the range ``max - min`` along ``axis``."""
    if not isinstance(a, Tracer):
        return np.ptp(a, axis=axis, out=out, keepdims=keepdims)
    return anp.subtract(max(a, axis=axis, keepdims=keepdims),
                        min(a, axis=axis, keepdims=keepdims))
