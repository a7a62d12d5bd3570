"""Joins, splits and rearrangements of ``arrjit.numpy``. Views stay index maps; joins are one
copy (``concatenate``); masks of ``tril``/``triu`` are constants fused into the loop."""
from __future__ import annotations

import operator

import numpy as np

from . import base as anp
from ..core import primitives as p
from ..core.dtypes import result_type
from ..core.ir import Op
from ..core.trace import Tracer


def _traced(*xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _seq_traced(xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def concatenate(arrays, axis=0, dtype=None):
    """``numpy.concatenate`` (``axis=None`` flattens first)."""
    arrays = list(arrays)
    if not _seq_traced(arrays):
        return np.concatenate(arrays, axis=axis, dtype=dtype)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays = [anp.ravel(anp.asarray(a)) for a in arrays]
        axis = 0
    avals = [p.aval_of(a) for a in arrays]
    nd = avals[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = operator.index(axis)
    if not -nd <= ax < nd:
        raise np.exceptions.AxisError(f"axis {ax} is out of bounds for array of dimension {nd}")
    ax %= nd
    for k, a in enumerate(avals):
        if a.ndim != nd:
            raise ValueError(f"all the input array dimensions except for the concatenation axis "
                             f"must match exactly, but along dimension 0, the array at index 0 "
                             f"has {nd} dimension(s) and the array at index {k} has {a.ndim}")
        for d in range(nd):
            if d != ax and a.shape[d] != avals[0].shape[d]:
                raise ValueError(
                    f"all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{avals[0].shape[d]} and the array at index {k} has size {a.shape[d]}")
    dt = np.dtype(dtype) if dtype is not None else result_type(*avals)[0]
    arrays = [anp.asarray(a).astype(dt) if p.aval_of(a).dtype != dt else a for a in arrays]
    shape = list(avals[0].shape)
    shape[ax] = sum(a.shape[ax] for a in avals)
    return p.bind_library(Op.CONCATENATE, tuple(arrays), p.Aval(tuple(shape), dt), None,
                          axis=ax)


def stack(arrays, axis=0):
    """``numpy.stack``: join along a new axis."""
    arrays = list(arrays)
    if not _seq_traced(arrays):
        return np.stack(arrays, axis=axis)
    shapes = {p.aval_of(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    return concatenate([anp.expand_dims(a, axis) for a in arrays], axis=axis)


def _at_least(arrays: tuple, reshaped):
    """One array per argument (a tuple of them for several, as NumPy 2 returns)."""
    out = tuple(reshaped(anp.asarray(a)) for a in arrays)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """``numpy.atleast_1d``: 0-d arrays become shape (1,); several arrays give a tuple."""
    return _at_least(arys, lambda a: a if a.ndim >= 1 else anp.reshape(a, (1,)))


def atleast_2d(*arys):
    """``numpy.atleast_2d``: (N,) becomes (1, N), 0-d (1, 1)."""
    return _at_least(arys, lambda a: a if a.ndim >= 2 else anp.reshape(
        a, (1, -1) if a.ndim == 1 else (1, 1)))


def atleast_3d(*arys):
    """``numpy.atleast_3d``: (N,) becomes (1, N, 1), (M, N) becomes (M, N, 1), 0-d
    (1, 1, 1)."""
    def reshaped(a):
        if a.ndim >= 3:
            return a
        return anp.reshape(a, {0: (1, 1, 1), 1: (1, -1, 1)}.get(a.ndim, a.shape + (1,)))
    return _at_least(arys, reshaped)


def hstack(tup):
    """``numpy.hstack``."""
    tup = list(tup)
    if not _seq_traced(tup):
        return np.hstack(tup)
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, axis=0 if p.aval_of(arrs[0]).ndim == 1 else 1)


def vstack(tup):
    """``numpy.vstack``."""
    tup = list(tup)
    if not _seq_traced(tup):
        return np.vstack(tup)
    return concatenate([atleast_2d(a) for a in tup], axis=0)


def split(ary, indices_or_sections, axis=0):
    """``numpy.split`` with static sections: views of the input."""
    if not _traced(ary):
        return np.split(ary, indices_or_sections, axis=axis)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = operator.index(indices_or_sections)
        if n % sections:
            raise ValueError("array split does not result in an equal division")
        bounds = [n // sections * k for k in range(sections + 1)]
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
    index = [slice(None)] * ary.ndim
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index[axis] = slice(lo, max(lo, hi))
        out.append(ary[tuple(index)])
    return out


def flip(m, axis=None):
    """``numpy.flip``: a reversed view."""
    if not _traced(m):
        return np.flip(m, axis=axis)
    axes = range(m.ndim) if axis is None else [
        ax % m.ndim for ax in ((axis,) if isinstance(axis, (int, np.integer)) else axis)]
    index = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(m.ndim))
    return m[index]


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    """``numpy.roll``. A static shift is an index map (``(i - shift) mod n``), no copy; a
    traced shift gathers along the axis at those positions."""
    shift_traced = _traced(shift) or (isinstance(shift, (tuple, list)) and _seq_traced(shift))
    if not _traced(a) and not shift_traced:
        return np.roll(a, shift, axis=axis)
    if not _traced(a):
        a = anp.asarray(a)     # a traced shift means a trace: this is a traced constant
    if axis is None:
        return anp.reshape(roll(anp.ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, (int, np.integer, Tracer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift!r} and axis {axis!r} must have the same length, "
                         f"or shift be one integer")
    out = a
    for s, ax in zip(shifts, axes):
        ax = operator.index(ax)
        if not -a.ndim <= ax < a.ndim:
            raise np.exceptions.AxisError(f"axis {ax} is out of bounds for array of dimension "
                                          f"{a.ndim}")
        out = (_roll_by_traced(out, s, ax % a.ndim) if _traced(s)
               else p.bind_roll(out, operator.index(s), ax % a.ndim))
    return out


def _roll_by_traced(x, shift: Tracer, axis: int):
    if shift.shape != () or shift.dtype.kind not in "iu":
        raise TypeError(f"roll: shift must be an integer scalar, got a traced {shift.aval}")
    n = x.shape[axis]
    if n == 0:
        return x
    positions = anp.remainder(anp.arange(n) - shift.astype(np.int64), n)
    return x[(slice(None),) * axis + (positions,)]


def tile(A, reps):
    """``numpy.tile``."""
    if not _traced(A):
        return np.tile(A, reps)
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    nd = max(len(reps), A.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    a = anp.reshape(A, (1,) * (nd - A.ndim) + A.shape)
    inter = []
    for r, d in zip(reps, a.shape):
        inter += [1, d]
    big = []
    for r, d in zip(reps, a.shape):
        big += [r, d]
    expanded = anp.broadcast_to(anp.reshape(a, inter), tuple(big))
    return anp.reshape(expanded, tuple(r * d for r, d in zip(reps, a.shape)))


def repeat(a, repeats, axis=None):
    """``numpy.repeat`` with static repeats."""
    if not _traced(a):
        return np.repeat(a, repeats, axis=axis)
    if axis is None:
        a, axis = anp.ravel(a), 0
    axis %= a.ndim
    if isinstance(repeats, (int, np.integer)):
        r = operator.index(repeats)
        shape = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
        expanded = anp.broadcast_to(anp.expand_dims(a, axis + 1), shape)
        return anp.reshape(expanded, a.shape[:axis] + (a.shape[axis] * r,) + a.shape[axis + 1:])
    index = np.repeat(np.arange(a.shape[axis]), np.asarray(repeats))
    return take(a, index, axis=axis)


def pad(array, pad_width, mode="constant", constant_values=0):
    """``numpy.pad`` with ``mode`` 'constant' or 'edge' and static widths."""
    if not _traced(array):
        return np.pad(array, pad_width, mode=mode, **(
            {"constant_values": constant_values} if mode == "constant" else {}))
    if mode not in ("constant", "edge"):
        raise NotImplementedError(f"anp.pad mode={mode!r}: arrjit supports 'constant' and "
                                  f"'edge'")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (array.ndim, 2))
    out = array
    for ax, (before, after) in enumerate(widths.tolist()):
        parts = []
        for width, edge in ((before, 0), (after, -1)):
            if width == 0:
                parts.append(None)
                continue
            shape = out.shape[:ax] + (width,) + out.shape[ax + 1:]
            if mode == "constant":
                block = anp.full(shape, constant_values, out.dtype)
            else:
                index = [slice(None)] * out.ndim
                index[ax] = slice(edge, None) if edge == -1 else slice(0, 1)
                block = anp.broadcast_to(out[tuple(index)], shape)
            parts.append(block)
        pieces = [x for x in (parts[0], out, parts[1]) if x is not None]
        out = concatenate(pieces, axis=ax) if len(pieces) > 1 else out
    return out


def diag(v, k=0):
    """``numpy.diag``: extract a diagonal (2-D input) or build a diagonal matrix (1-D)."""
    if not _traced(v):
        return np.diag(v, k)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        rows = np.arange(v.shape[0]) + max(-k, 0)
        cols = np.arange(v.shape[0]) + max(k, 0)
        return anp.zeros((n, n), v.dtype).at[rows, cols].set(v)
    if v.ndim != 2:
        raise ValueError("Input must be 1- or 2-d.")
    rows, cols = v.shape
    start_r, start_c = max(-k, 0), max(k, 0)
    length = max(0, min(rows - start_r, cols - start_c))
    idx = np.arange(length)
    return v[idx + start_r, idx + start_c]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``numpy.diagonal``: the ``offset`` diagonal of the 2-d slices along ``axis1`` and
    ``axis2``, as a new last axis. A view: a strided window over the matrices' elements."""
    if not _traced(a):
        return np.diagonal(a, offset, axis1, axis2)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = (anp._normalize_axis(ax, a.ndim, name) for ax, name in ((axis1, "axis1"),
                                                                       (axis2, "axis2")))
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = anp.moveaxis(a, (ax1, ax2), (-2, -1))
    n, m = x.shape[-2:]
    k = operator.index(offset)
    length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    batch = tuple(x.shape[:-2])
    if length == 0:
        return anp.zeros(batch + (0,), a.dtype)
    flat = anp.reshape(x, batch + (n * m,))
    start = k if k >= 0 else -k * m
    return p.bind_slice(flat, (0,) * len(batch) + (start,), (1,) * len(batch) + (m + 1,),
                        batch + (length,))


def tril(m, k=0):
    """``numpy.tril``: zero above the ``k``-th diagonal."""
    if not _traced(m):
        return np.tril(m, k)
    mask = np.tri(*m.shape[-2:], k=k, dtype=bool)
    return anp.where(mask, m, anp.zeros((), m.dtype))


def triu(m, k=0):
    """``numpy.triu``: zero below the ``k``-th diagonal."""
    if not _traced(m):
        return np.triu(m, k)
    mask = np.tri(*m.shape[-2:], k=k - 1, dtype=bool)
    return anp.where(mask, anp.zeros((), m.dtype), m)


def eye(N, M=None, k=0, dtype=float, *, device=None):
    """``numpy.eye`` (a constant); ``device`` as in ``asarray``."""
    return anp._placed(anp._traced_constant(np.eye(N, M, k, dtype=p.check_supported(dtype))),
                       device, "eye")


def identity(n, dtype=float):
    return anp._traced_constant(np.identity(n, dtype=p.check_supported(dtype)))


def tri(N, M=None, k=0, dtype=float):
    return anp._traced_constant(np.tri(N, M, k, dtype=p.check_supported(dtype)))


def meshgrid(*xi, indexing="xy"):
    """``numpy.meshgrid`` (broadcast views)."""
    if not _seq_traced(xi):
        return np.meshgrid(*xi, indexing=indexing)
    arrays = [anp.ravel(x) for x in xi]
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for k, a in enumerate(arrays):
        pos = k
        if indexing == "xy" and len(arrays) > 1 and k < 2:
            pos = 1 - k
        view = [1] * len(arrays)
        view[pos] = a.shape[0]
        out.append(anp.broadcast_to(anp.reshape(a, tuple(view)), tuple(shape)))
    return out


def sort(a, axis=-1, kind=None, stable=None, *, descending=False):
    """``numpy.sort`` along ``axis`` (flattened when None); ``descending`` (the array API's)
    reverses the order, NaN first, as array-api-strict does."""
    if descending:
        return flip(sort(a, axis=axis, kind=kind, stable=stable), axis=-1 if axis is None
                    else axis)
    if not _traced(a):
        return np.sort(a, axis=axis, kind=kind, stable=stable)
    if axis is None:
        a, axis = anp.ravel(a), 0
    return p.bind_library(Op.SORT, (a,), a.aval, None, axis=axis % max(a.ndim, 1))


def argsort(a, axis=-1, kind=None, stable=None, *, descending=False):
    """``numpy.argsort`` along ``axis`` (same tie order as NumPy: it runs NumPy's sort);
    ``descending`` (the array API's): largest first, NaN first, equal values in their
    original order (a stable ascending sort of the reversed line, reversed back)."""
    if descending:
        line = a if axis is not None else (anp.ravel(a) if _traced(a) else np.ravel(a))
        axis = 0 if axis is None else axis
        n = line.shape[axis]
        order = flip(argsort(flip(line, axis=axis), axis=axis, stable=True), axis=axis)
        return (n - 1) - order
    if not _traced(a):
        return np.argsort(a, axis=axis, kind=kind, stable=stable)
    if axis is None:
        a, axis = anp.ravel(a), 0
    return p.bind_library(Op.ARGSORT, (a,), p.Aval(a.shape, np.dtype(np.int64)), None,
                          axis=axis % max(a.ndim, 1), stable=stable)


def take(a, indices, axis=None):
    """``numpy.take`` (out-of-range indices raise IndexError, as in NumPy)."""
    if not _traced(a, indices):
        return np.take(a, indices, axis=axis)
    a = anp.asarray(a)
    if axis is None:
        return anp.ravel(a)[indices]
    axis %= a.ndim
    return a[(slice(None),) * axis + (anp.asarray(indices),)]


def take_along_axis(arr, indices, axis):
    """``numpy.take_along_axis``."""
    if not _traced(arr, indices):
        return np.take_along_axis(arr, indices, axis=axis)
    if axis is None:
        return anp.ravel(arr)[indices]
    axis %= arr.ndim
    index = []
    for d in range(arr.ndim):
        if d == axis:
            index.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            index.append(np.arange(arr.shape[d]).reshape(shape))
    return arr[tuple(index)]


def searchsorted(a, v, side="left", sorter=None):
    """``numpy.searchsorted`` on a 1-D sorted ``a``."""
    if not _traced(a, v):
        return np.searchsorted(a, v, side=side, sorter=sorter)
    if sorter is not None:
        a = take(a, sorter)
    dt = result_type(p.aval_of(a), p.aval_of(v))[0]
    a = anp.asarray(a).astype(dt) if p.aval_of(a).dtype != dt else a
    v = anp.asarray(v).astype(dt) if p.aval_of(v).dtype != dt else v
    return p.bind_library(Op.SEARCHSORTED, (a, v), p.Aval(p.aval_of(v).shape,
                                                           np.dtype(np.int64)), None, side=side)
