"""Differences and integrals of sampled data in ``arrjit.numpy``: ``gradient``,
``trapezoid``, ``ediff1d`` and ``unwrap``, NumPy's formulas step for step (central
differences inside, one-sided ones of first or second order at the edges).

>>> import numpy as np, arrjit
>>> arrjit.jit(gradient)(np.array([1.0, 2.0, 4.0, 7.0]))
array([1. , 1.5, 2.5, 3. ])
>>> float(arrjit.jit(trapezoid)(np.array([1.0, 2.0, 3.0])))
4.0
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import base as anp
from . import arrayapi, reductions, shapes
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _along(f, axis: int, index) -> Any:
    full = [slice(None)] * f.ndim
    full[axis] = index
    return f[tuple(full)]


def _spacing(distances, n: int):
    """A scalar spacing, or the differences of coordinates (a scalar when NumPy finds them
    uniform: static coordinates only)."""
    if not _traced(distances) and np.ndim(distances) == 0:
        return distances
    if _traced(distances) and anp.ndim(distances) == 0:
        return distances
    if anp.ndim(distances) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if anp.shape(distances)[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if not _traced(distances):
        coords = np.asarray(distances)
        coords = coords.astype(np.float64) if coords.dtype.kind in "iub" else coords
        step = np.diff(coords)
        return step[0] if (step == step[0]).all() else step
    coords = anp.asarray(distances)
    coords = anp.astype(coords, np.float64) if coords.dtype.kind in "iub" else coords
    return arrayapi.diff(coords)


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """``numpy.gradient``: second-order central differences inside, first- or second-order
    one-sided differences at the edges (``edge_order``), for each axis; spacings as scalars
    or coordinate arrays."""
    if not _traced(f, *varargs):
        return np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    f = anp.asarray(f)
    axes = tuple(range(f.ndim)) if axis is None else tuple(
        anp._normalize_axis(a, f.ndim, "axis") for a in ((axis,) if isinstance(
            axis, (int, np.integer)) else axis))
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and anp.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_spacing(v, f.shape[a]) for v, a in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if f.dtype.kind in "iu":         # integers in float64; NumPy leaves booleans (to fail)
        f = anp.astype(f, np.float64)
    results = [_gradient_along(f, a, dx, edge_order) for a, dx in zip(axes, spacings)]
    return results[0] if len(results) == 1 else tuple(results)


def _gradient_along(f, axis: int, dx, edge_order: int):
    if f.shape[axis] < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    uniform = anp.ndim(dx) == 0
    shape = [1] * f.ndim
    shape[axis] = -1

    def column(values):
        return anp.reshape(values, tuple(shape))

    if uniform:
        inner = anp.true_divide(anp.subtract(_along(f, axis, slice(2, None)),
                                             _along(f, axis, slice(None, -2))),
                                anp.multiply(2.0, dx))
    else:
        dx1, dx2 = dx[:-1], dx[1:]
        a = anp.true_divide(anp.negative(dx2), anp.multiply(dx1, anp.add(dx1, dx2)))
        b = anp.true_divide(anp.subtract(dx2, dx1), anp.multiply(dx1, dx2))
        c = anp.true_divide(dx1, anp.multiply(dx2, anp.add(dx1, dx2)))
        inner = anp.add(anp.add(anp.multiply(column(a), _along(f, axis, slice(None, -2))),
                                anp.multiply(column(b), _along(f, axis, slice(1, -1)))),
                        anp.multiply(column(c), _along(f, axis, slice(2, None))))
    first, last = _edges(f, axis, dx, uniform, edge_order)
    pieces = [anp.expand_dims(first, axis), inner, anp.expand_dims(last, axis)]
    return anp.astype(shapes.concatenate(pieces, axis=axis), f.dtype)


def _edges(f, axis: int, dx, uniform: bool, edge_order: int):
    f0, f1, fn, fm = (_along(f, axis, k) for k in (0, 1, -1, -2))
    if edge_order == 1:
        return (anp.true_divide(anp.subtract(f1, f0), dx if uniform else dx[0]),
                anp.true_divide(anp.subtract(fn, fm), dx if uniform else dx[-1]))
    f2, fl = _along(f, axis, 2), _along(f, axis, -3)
    if uniform:
        a, b, c = (anp.true_divide(k, dx) for k in (-1.5, 2.0, -0.5))
        a2, b2, c2 = (anp.true_divide(k, dx) for k in (0.5, -2.0, 1.5))
    else:
        d1, d2 = dx[0], dx[1]
        a = anp.true_divide(anp.negative(anp.add(anp.multiply(2.0, d1), d2)),
                            anp.multiply(d1, anp.add(d1, d2)))
        b = anp.true_divide(anp.add(d1, d2), anp.multiply(d1, d2))
        c = anp.true_divide(anp.negative(d1), anp.multiply(d2, anp.add(d1, d2)))
        d1, d2 = dx[-2], dx[-1]
        a2 = anp.true_divide(d2, anp.multiply(d1, anp.add(d1, d2)))
        b2 = anp.true_divide(anp.negative(anp.add(d2, d1)), anp.multiply(d1, d2))
        c2 = anp.true_divide(anp.add(anp.multiply(2.0, d2), d1),
                             anp.multiply(d2, anp.add(d1, d2)))
    first = anp.add(anp.add(anp.multiply(a, f0), anp.multiply(b, f1)), anp.multiply(c, f2))
    last = anp.add(anp.add(anp.multiply(a2, fl), anp.multiply(b2, fm)), anp.multiply(c2, fn))
    return first, last


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """``numpy.trapezoid``: the integral of samples ``y`` by the trapezoidal rule."""
    if not _traced(y, x, dx):
        return np.trapezoid(y, x, dx, axis)
    y = anp.asarray(y)
    axis = anp._normalize_axis(axis, y.ndim, "axis")
    if x is None:
        d = dx
    else:
        x = anp.asarray(x)
        if x.ndim == 1:
            shape = [1] * y.ndim
            shape[axis] = x.shape[0]
            d = anp.reshape(arrayapi.diff(x), tuple(s - 1 if k == axis else s
                                                    for k, s in enumerate(shape)))
        else:
            d = arrayapi.diff(x, axis=axis)
    summed = anp.add(_along(y, axis, slice(1, None)), _along(y, axis, slice(None, -1)))
    return reductions.sum(anp.true_divide(anp.multiply(d, summed), 2.0), axis=axis)


def ediff1d(ary, to_end=None, to_begin=None):
    """``numpy.ediff1d``: differences of the flattened array, with values around them."""
    if not _traced(ary, to_end, to_begin):
        return np.ediff1d(ary, to_end, to_begin)
    flat = anp.ravel(anp.asarray(ary))
    parts = [arrayapi.diff(flat)]
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            continue
        extra = anp.ravel(anp.asarray(extra))
        if not np.can_cast(extra.dtype, flat.dtype, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under "
                            f"the `same_kind` rule.")
        extra = anp.astype(extra, flat.dtype)
        parts.insert(0, extra) if name == "to_begin" else parts.append(extra)
    return shapes.concatenate(parts) if len(parts) > 1 else parts[0]


def unwrap(p, discont=None, axis: int = -1, *, period=2 * math.pi):
    """``numpy.unwrap``: jumps larger than ``max(discont, period / 2)`` along ``axis``
    replaced by their ``period`` complement, accumulated."""
    if not _traced(p, discont, period):
        return np.unwrap(p, discont, axis, period=period)
    p = anp.asarray(p)
    axis = anp._normalize_axis(axis, p.ndim, "axis")
    dd = arrayapi.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    integer = p.dtype.kind in "iu" and isinstance(period, int)
    if integer:
        interval_high, remainder = divmod(period, 2)
        ambiguous = remainder == 0
    else:
        interval_high, ambiguous = period / 2, True
    interval_low = -interval_high
    ddmod = anp.add(anp.remainder(anp.subtract(dd, interval_low), period), interval_low)
    if ambiguous:
        ddmod = anp.where(anp.logical_and(anp.equal(ddmod, interval_low), anp.greater(dd, 0)),
                          interval_high, ddmod)
    correction = anp.subtract(ddmod, dd)
    correction = anp.where(anp.less(anp.absolute(dd), discont), 0, correction)
    first = _along(p, axis, slice(0, 1))
    rest = anp.add(_along(p, axis, slice(1, None)), reductions.cumsum(correction, axis=axis))
    out = shapes.concatenate([first, rest], axis=axis)
    return out if integer else anp.astype(out, np.result_type(p.dtype, np.float64)
                                          if p.dtype.kind in "iub" else p.dtype)
