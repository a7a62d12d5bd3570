"""Comparisons and numeric helpers of ``arrjit.numpy``: isclose, allclose, array_equal,
nan_to_num, interp, histogram (static bins), cross and trace."""
from __future__ import annotations

import numpy as np

from . import base as anp
from . import reductions, shapes
from ..core import primitives as p
from ..core.trace import Tracer


def _traced(*xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``numpy.isclose``: ``|a - b| <= atol + rtol * |b|``, infinities equal only to
    themselves."""
    if not _traced(a, b):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    y = b
    y_aval = p.aval_of(y)
    if y_aval.dtype.kind != "f":
        y = anp.asarray(y).astype(np.result_type(y_aval.dtype, 1.0)) if isinstance(
            y, (Tracer, np.ndarray)) else float(y)
    close = anp.less_equal(anp.absolute(anp.subtract(a, y)),
                           anp.add(atol, anp.multiply(rtol, anp.absolute(y))))
    result = anp.logical_or(anp.logical_and(close, anp.isfinite(y)), anp.equal(a, y))
    if equal_nan:
        result = anp.logical_or(result, anp.logical_and(anp.isnan(a), anp.isnan(y)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``numpy.allclose`` (a 0-d bool array inside jit)."""
    if not _traced(a, b):
        return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return reductions.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """``numpy.array_equal`` (a 0-d bool array inside jit)."""
    if not _traced(a1, a2):
        return np.array_equal(a1, a2, equal_nan=equal_nan)
    if p.aval_of(a1).shape != p.aval_of(a2).shape:
        return anp.asarray(False)
    eq = anp.equal(a1, a2)
    if equal_nan:
        eq = anp.logical_or(eq, anp.logical_and(anp.isnan(a1), anp.isnan(a2)))
    return reductions.all(eq)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``numpy.nan_to_num``: NaN -> ``nan``, +-inf -> the largest finite values (for complex
    values, in each part)."""
    if not _traced(x):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    if x.dtype.kind == "c":
        return p.bind_complex(*(nan_to_num(part, nan=nan, posinf=posinf, neginf=neginf)
                                for part in (anp.real(x), anp.imag(x))))
    if x.dtype.kind != "f":
        return x
    info = np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = -info.max if neginf is None else neginf
    out = anp.where(anp.isnan(x), nan, x)
    out = anp.where(anp.logical_and(anp.isinf(x), x > 0), big, out)
    return anp.where(anp.logical_and(anp.isinf(x), x < 0), small, out).astype(x.dtype)


def interp(x, xp, fp, left=None, right=None):
    """``numpy.interp``: piecewise-linear interpolation on increasing ``xp``."""
    if not _traced(x, xp, fp):
        return np.interp(x, xp, fp, left=left, right=right)
    xp, fp = anp.asarray(xp).astype(np.float64), anp.asarray(fp).astype(np.float64)
    x = anp.asarray(x).astype(np.float64)
    n = p.aval_of(xp).shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    if n == 1:
        return anp.full_like(x, 0.0) + fp[0]
    j = anp.clip(shapes.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    x0, x1, f0, f1 = xp[j], xp[j + 1], fp[j], fp[j + 1]
    slope = (f1 - f0) / (x1 - x0)
    y = slope * (x - x0) + f0
    y = anp.where(x == x1, f1, y)
    y = anp.where(x < xp[0], fp[0] if left is None else left, y)
    y = anp.where(x > xp[n - 1], fp[n - 1] if right is None else right, y)
    return anp.where(anp.isnan(x), np.nan, y)


def histogram(a, bins=10, range=None, weights=None, density=False):  # noqa: A002
    """``numpy.histogram`` with a static number of equal bins (edges may depend on the data)
    or static edges. Returns ``(hist, bin_edges)``."""
    if not _traced(a, weights):
        return np.histogram(a, bins=bins, range=range, weights=weights, density=density)
    a = anp.ravel(anp.asarray(a))
    if not isinstance(bins, (int, np.integer)):
        edges = np.asarray(bins, dtype=np.float64)
        index = shapes.searchsorted(edges, a, side="right") - 1
        index = anp.where(a == edges[-1], len(edges) - 2, index)
        valid = anp.logical_and(index >= 0, index < len(edges) - 1)
        return _counts(index, valid, len(edges) - 1, weights, density, anp.asarray(edges))
    n = int(bins)
    bin_type = np.result_type(a.dtype, 0.0)  # NumPy's: float32 stays, integers -> float64
    steps = np.arange(n + 1, dtype=np.float64)
    if range is not None:  # static edges, computed exactly as numpy.linspace does
        first, last = float(range[0]), float(range[1])
        if first == last:
            first, last = first - 0.5, last + 0.5
        edges = anp.asarray(np.linspace(first, last, n + 1).astype(bin_type))
        denom = last - first
    else:  # data-dependent edges, in the dtype NumPy's linspace would use for them
        lo, hi = reductions.min(a), reductions.max(a)
        same = lo == hi
        first = anp.where(same, lo - 0.5, lo).astype(bin_type)
        last = anp.where(same, hi + 0.5, hi).astype(bin_type)
        denom = last - first
        ramp = steps.astype(bin_type) * (denom / n) + first
        edges = anp.where(steps == n, last, ramp).astype(bin_type)
    af = a.astype(bin_type)
    keep = anp.logical_and(af >= first, af <= last)
    index = ((af - first) / denom * n).astype(np.int64)
    index = anp.clip(anp.where(index == n, n - 1, index), 0, n - 1)
    index = anp.where(anp.logical_and(af < edges[index], index > 0), index - 1, index)
    index = anp.where(anp.logical_and(af >= edges[anp.minimum(index + 1, n)], index != n - 1),
                      index + 1, index)
    return _counts(index, keep, n, weights, density, edges)


def _counts(index, valid, nbins, weights, density, edges):
    w = anp.where(valid, 1 if weights is None else anp.ravel(anp.asarray(weights)), 0)
    dtype = np.int64 if weights is None else np.result_type(p.aval_of(weights).dtype, 0.0)
    index = anp.clip(index, 0, nbins - 1)  # out-of-range values carry zero weight
    hist = anp.zeros(nbins, dtype).at[index].add(w.astype(dtype))
    if density:
        widths = edges[1:] - edges[:-1]
        return hist / reductions.sum(hist) / widths, edges
    return hist, edges


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``numpy.trace``: the sum of the ``offset`` diagonal along ``axis1`` and ``axis2``."""
    if out is not None:
        raise TypeError("anp.trace: out= is not supported; arrays are immutable")
    if not _traced(a):
        return np.trace(a, offset, axis1, axis2, dtype=dtype)
    return reductions.sum(shapes.diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``numpy.cross``: the cross product of 2- or 3-vectors along the given axes (a 2-d
    product is the scalar z component, as in NumPy)."""
    if not _traced(a, b):
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = anp.moveaxis(anp.asarray(a), axisa, -1)
    b = anp.moveaxis(anp.asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    z = anp.subtract(anp.multiply(a0, b1), anp.multiply(a1, b0))
    if a2 is None and b2 is None:
        return z
    if a2 is None:
        x, y = anp.multiply(a1, b2), anp.negative(anp.multiply(a0, b2))
    elif b2 is None:
        x, y = anp.negative(anp.multiply(a2, b1)), anp.multiply(a2, b0)
    else:
        x = anp.subtract(anp.multiply(a1, b2), anp.multiply(a2, b1))
        y = anp.subtract(anp.multiply(a2, b0), anp.multiply(a0, b2))
    return anp.moveaxis(shapes.stack([x, y, z], axis=-1), -1, axisc)

