"""Functions whose result's length depends on the values: ``nonzero``, ``argwhere``,
``flatnonzero``, one-argument ``where``, ``unique`` (and the standard's ``unique_*``),
``extract``, ``compress`` and the set functions. Outside jit they are NumPy's. Inside jit
they need a static result length, ``size=`` (as in ``jax.numpy``): the first ``size``
results, padded with ``fill_value``; they are computed by a running count of the selected
elements and one scatter (no Python per element).

>>> import numpy as np, arrjit
>>> arrjit.jit(lambda x: nonzero(x, size=3))(np.array([0, 5, 0, 7]))
(array([1, 3, 0]),)
>>> arrjit.jit(lambda x: unique(x, size=4, fill_value=-1))(np.array([3, 1, 3, 2, 1]))
array([ 1,  2,  3, -1])
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import base as anp
from . import arrayapi, index_tricks, reductions, shapes
from ..core.trace import Tracer
from ..errors import ConcretizationTypeError


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _needs_size(name: str, x: Any) -> ConcretizationTypeError:
    return ConcretizationTypeError(
        f"anp.{name} of a traced array {x.aval}: the length of its result depends on the "
        f"values, which jit does not know while tracing. Pass a static size=... (the first "
        f"size results, padded with fill_value), keep the shape with anp.where(condition, x, "
        f"y), or call it outside jit.")


def _compact(values, keep, size: int, fill):
    """The elements of 1-d ``values`` where ``keep``, in order, in an array of ``size``
    (padded with ``fill``), and how many there were."""
    count = reductions.sum(keep, dtype=np.int64)
    position = anp.subtract(reductions.cumsum(anp.astype(keep, np.int64)), 1)
    target = anp.where(anp.logical_and(keep, anp.less(position, size)), position, size)
    out = anp.full((size + 1,), fill, values.dtype).at[target].set(values)
    return out[:size], count


def nonzero(a, *, size: int | None = None, fill_value=None):
    """``numpy.nonzero``: one index array per dimension; inside jit with ``size=``
    (``fill_value``, default 0, pads each)."""
    if not _traced(a):
        return np.nonzero(a)
    a = anp.asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        raise _needs_size("nonzero", a)
    flat = anp.ravel(anp.not_equal(a, 0))
    positions, count = _compact(anp.arange(flat.shape[0]), flat, size, 0)
    indices = index_tricks.unravel_index(positions, a.shape)
    fill = 0 if fill_value is None else fill_value
    fills = fill if isinstance(fill, tuple) else (fill,) * a.ndim
    padded = anp.greater_equal(anp.arange(size), count)
    return tuple(anp.where(padded, f, i) for i, f in zip(indices, fills))


def flatnonzero(a, *, size: int | None = None, fill_value=None):
    """``numpy.flatnonzero``: indices of the nonzero elements of the flattened array."""
    if not _traced(a):
        return np.flatnonzero(a)
    return nonzero(anp.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None):
    """``numpy.argwhere``: the nonzero elements' indices, one row each."""
    if not _traced(a):
        return np.argwhere(a)
    a = anp.asarray(a)
    if a.ndim == 0:
        a = anp.reshape(a, (1,))
        return anp.reshape(nonzero(a, size=size, fill_value=fill_value)[0], (-1, 0))
    return shapes.stack(nonzero(a, size=size, fill_value=fill_value), axis=-1)


def where(condition, x=None, y=None, *, size: int | None = None, fill_value=None):
    """``numpy.where``: ``where(condition, x, y)`` elementwise, or with ``condition`` alone
    the indices of its true elements (``nonzero``; inside jit with ``size=``)."""
    if x is None and y is None:
        if not _traced(condition):
            return np.where(condition)
        if size is None:
            raise _needs_size("where(condition)", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    return anp.where(condition, x, y)


def _first_of_runs(s):
    """Where a sorted 1-d array starts a run of equal values (NaNs count as equal)."""
    if s.shape[0] == 0:
        return anp.zeros((0,), np.bool_)
    differs = anp.not_equal(s[1:], s[:-1])
    if s.dtype.kind in "fc":
        differs = anp.logical_and(differs, anp.logical_not(anp.logical_and(
            anp.isnan(s[1:]), anp.isnan(s[:-1]))))
    return shapes.concatenate([anp.ones((1,), np.bool_), differs])


def _unique_sorted(values, keep, size: int, fill_value):
    """The distinct values of 1-d ``values`` where ``keep`` (the same for equal values),
    ascending, ``size`` long, padded with ``fill_value`` (default: the smallest of them)."""
    order = shapes.argsort(values, stable=True)
    s = values[order]
    first = anp.logical_and(_first_of_runs(s), keep[order])
    if fill_value is None:
        largest = np.inf if s.dtype.kind in "fc" else arrayapi.iinfo(s.dtype).max if (
            s.dtype.kind in "iu") else True
        fill_value = reductions.min(anp.where(keep, values, largest)) if s.shape[0] else 0
    return _compact(s, first, size, fill_value)[0]


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis=None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None):
    """``numpy.unique``: the sorted distinct values (NaNs as one); inside jit of the
    flattened array with ``size=`` (padded with ``fill_value``, default the smallest
    value), with ``return_index``, ``return_inverse`` and ``return_counts``."""
    if not _traced(ar):
        return np.unique(ar, return_index=return_index, return_inverse=return_inverse,
                         return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    ar = anp.asarray(ar)
    if size is None:
        raise _needs_size("unique", ar)
    if axis is not None:
        raise NotImplementedError("anp.unique(axis=...) inside jit: unique rows are "
                                  "supported outside jit only")
    flat = anp.ravel(ar)
    n = flat.shape[0]
    if n == 0:
        empty = anp.zeros((size,), ar.dtype)
        extras = [anp.zeros((size,), np.int64)] * (return_index + return_counts)
        return (empty, *extras) if extras or return_inverse else empty
    order = shapes.argsort(flat, stable=True)
    s = flat[order]
    starts = _first_of_runs(s)
    if not equal_nan and s.dtype.kind in "fc":
        starts = anp.logical_or(starts, anp.isnan(s))
    group = anp.subtract(reductions.cumsum(anp.astype(starts, np.int64)), 1)
    fill = s[0] if fill_value is None else fill_value
    values, count = _compact(s, starts, size, fill)
    results = [values]
    if return_index:
        results.append(_compact(order, starts, size, 0)[0])
    if return_inverse:
        inverse = anp.zeros((n,), np.int64).at[order].set(group)
        results.append(anp.reshape(inverse, ar.shape))
    if return_counts:
        counts = anp.zeros((size + 1,), np.int64).at[anp.minimum(group, size)].add(1)
        results.append(counts[:size])
    return tuple(results) if len(results) > 1 else values


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    """The array API's ``unique_values`` (inside jit with ``size=``)."""
    if not _traced(x):
        return np.unique_values(x)
    if size is None:
        raise _needs_size("unique_values", x)
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size: int | None = None, fill_value=None):
    """The array API's ``unique_counts``: ``(values, counts)``."""
    if not _traced(x):
        return np.unique_counts(x)
    if size is None:
        raise _needs_size("unique_counts", x)
    values, counts = unique(x, return_counts=True, size=size, fill_value=fill_value)
    return np.lib._arraysetops_impl.UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size: int | None = None, fill_value=None):
    """The array API's ``unique_inverse``: ``(values, inverse_indices)``."""
    if not _traced(x):
        return np.unique_inverse(x)
    if size is None:
        raise _needs_size("unique_inverse", x)
    values, inverse = unique(x, return_inverse=True, size=size, fill_value=fill_value)
    return np.lib._arraysetops_impl.UniqueInverseResult(values, inverse)


def unique_all(x, /, *, size: int | None = None, fill_value=None):
    """The array API's ``unique_all``: values, first indices, inverse indices, counts."""
    if not _traced(x):
        return np.unique_all(x)
    if size is None:
        raise _needs_size("unique_all", x)
    values, index, inverse, counts = unique(x, return_index=True, return_inverse=True,
                                            return_counts=True, size=size,
                                            fill_value=fill_value)
    return np.lib._arraysetops_impl.UniqueAllResult(values, index, inverse, counts)


def extract(condition, arr, *, size: int | None = None, fill_value=0):
    """``numpy.extract``: the elements of ``arr`` where ``condition`` (both flattened; a
    traced condition needs ``size=``)."""
    if not _traced(condition, arr):
        return np.extract(condition, arr)
    arr = anp.ravel(anp.asarray(arr))
    if not _traced(condition):
        return arr[np.flatnonzero(np.asarray(condition))]
    keep = anp.ravel(anp.not_equal(anp.asarray(condition), 0))
    if size is None:
        raise _needs_size("extract", arr)
    return _compact(arr, keep, size, fill_value)[0]


def compress(condition, a, axis=None, out=None, *, size: int | None = None, fill_value=0):
    """``numpy.compress``: the slices of ``a`` along ``axis`` where ``condition`` (a static
    condition selects directly; a traced one needs ``size=``)."""
    if not _traced(condition, a):
        return np.compress(condition, a, axis=axis, out=out)
    a = anp.asarray(a)
    if axis is None:
        a, axis = anp.ravel(a), 0
    if not _traced(condition):
        selected = np.flatnonzero(np.asarray(condition))
        return shapes.take(a, selected, axis=axis)
    if size is None:
        raise _needs_size("compress", anp.asarray(condition))
    condition = anp.ravel(anp.asarray(condition))
    n = a.shape[axis]
    keep = anp.not_equal(condition[:n], 0) if condition.shape[0] >= n else shapes.concatenate(
        [anp.not_equal(condition, 0), anp.zeros((n - condition.shape[0],), np.bool_)])
    rows, count = _compact(anp.arange(n), keep, size, n)
    moved = anp.moveaxis(a, axis, 0)
    padded = shapes.concatenate([moved, anp.full((1,) + moved.shape[1:], fill_value,
                                                 a.dtype)])
    return anp.moveaxis(padded[rows], 0, axis)


def _set_operation(name: str, ar1, ar2, size, fill_value, keep_of):
    flat1, flat2 = anp.ravel(anp.asarray(ar1)), anp.ravel(anp.asarray(ar2))
    if size is None:
        raise _needs_size(name, flat1 if isinstance(flat1, Tracer) else flat2)
    values, keep = keep_of(flat1, flat2)
    return _unique_sorted(values, keep, size, fill_value)


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
    """``numpy.union1d``: the sorted values in either array."""
    if not _traced(ar1, ar2):
        return np.union1d(ar1, ar2)
    return _set_operation("union1d", ar1, ar2, size, fill_value, lambda a, b: (
        shapes.concatenate([a, b]), anp.ones((a.shape[0] + b.shape[0],), np.bool_)))


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value=None):
    """``numpy.intersect1d``: the sorted values in both arrays."""
    if not _traced(ar1, ar2):
        return np.intersect1d(ar1, ar2, assume_unique, return_indices)
    if return_indices:
        raise NotImplementedError("anp.intersect1d(return_indices=True) is supported outside "
                                  "jit only")
    return _set_operation("intersect1d", ar1, ar2, size, fill_value,
                          lambda a, b: (a, arrayapi.isin(a, b)))


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
              fill_value=None):
    """``numpy.setdiff1d``: the sorted values of ``ar1`` that are not in ``ar2``."""
    if not _traced(ar1, ar2):
        return np.setdiff1d(ar1, ar2, assume_unique)
    return _set_operation("setdiff1d", ar1, ar2, size, fill_value,
                          lambda a, b: (a, arrayapi.isin(a, b, invert=True)))


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
             fill_value=None):
    """``numpy.setxor1d``: the sorted values in exactly one of the arrays."""
    if not _traced(ar1, ar2):
        return np.setxor1d(ar1, ar2, assume_unique)
    return _set_operation("setxor1d", ar1, ar2, size, fill_value, lambda a, b: (
        shapes.concatenate([a, b]), shapes.concatenate([arrayapi.isin(a, b, invert=True),
                                                        arrayapi.isin(b, a, invert=True)])))
