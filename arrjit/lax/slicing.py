"""Dynamic slicing: ``dynamic_slice``, ``dynamic_update_slice`` and their one-axis forms.

JAX's semantics: a negative start counts from the end of its axis, then every start is
clamped so that the window lies inside the array (an out-of-range start never raises). A
start known while tracing becomes a slice, a traced start an index vector (one traced axis
among slices, or a scalar position for the ``*_index_in_dim`` forms, runs inside a native
loop body).

>>> import numpy as np, arrjit
>>> from arrjit import lax
>>> window = arrjit.jit(lambda x, i: lax.dynamic_slice(x, (i,), (3,)))
>>> window(np.arange(10.0), 8)          # clamped: the window starts at 7
array([7., 8., 9.])
>>> lax.dynamic_update_slice(np.zeros(4), np.ones(2), (-1,))
array([0., 0., 1., 1.])
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import numpy as anp
from ..core import primitives
from ..core.trace import Tracer


def _normalise_axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of range for an operand of {ndim} "
                         f"dimensions")
    return axis % ndim


def _start_list(start_indices: Any, ndim: int, what: str) -> list:
    if isinstance(start_indices, (Tracer, np.ndarray)):
        shape = tuple(primitives.aval_of(start_indices).shape)
        if shape != (ndim,):
            raise TypeError(f"{what}: start_indices has shape {shape}; give one start per "
                            f"dimension of the operand, shape ({ndim},)")
        return [start_indices[k] for k in range(ndim)]
    starts = list(start_indices)
    if len(starts) != ndim:
        raise TypeError(f"{what}: {len(starts)} start indices for an operand of {ndim} "
                        f"dimensions; give one start per dimension")
    return starts


def _check_sizes(sizes: Sequence[int], shape: tuple, what: str, name: str) -> None:
    if len(sizes) != len(shape) or any(not 0 <= s <= d for s, d in zip(sizes, shape)):
        raise TypeError(f"{what}: {name} {tuple(sizes)} must have one entry per dimension "
                        f"of the operand and each at most its length; the operand's shape "
                        f"is {tuple(shape)}")


def _clamped_start(start: Any, dim: int, size: int, allow_negative: bool, what: str,
                   axis: int):
    """The window's first index along ``axis``: a Python int when ``start`` is known, else a
    traced int64 scalar."""
    if not isinstance(start, Tracer):
        value = np.asarray(start)
        if value.shape != () or value.dtype.kind not in "iub":
            raise TypeError(f"{what}: the start index for axis {axis} must be an integer "
                            f"scalar, got {start!r}")
        s = int(value)
        if allow_negative and s < 0:
            s += dim
        return min(max(s, 0), dim - size)
    if start.shape != () or start.dtype.kind not in "iu":
        raise TypeError(f"{what}: the start index for axis {axis} must be an integer scalar, "
                        f"got a traced {start.aval}; index with x[i] for an integer i")
    s = start.astype(np.int64)
    if allow_negative:
        s = anp.where(s < 0, s + dim, s)
    return anp.clip(s, 0, dim - size)


def _firsts(shape: tuple, starts: list, sizes: Sequence[int], allow_negative: Any,
            what: str) -> list:
    """Each axis's clamped first index (``_clamped_start``)."""
    flags = ([allow_negative] * len(shape) if isinstance(allow_negative, bool)
             else list(allow_negative))
    return [_clamped_start(s, d, n, neg, what, axis) for axis, (s, d, n, neg)
            in enumerate(zip(starts, shape, sizes, flags))]


def _window(shape: tuple, starts: list, sizes: Sequence[int], allow_negative: Any,
            what: str) -> tuple:
    """The index that selects the clamped window: slices for known starts, an index vector
    for a traced one; with several traced starts, index vectors for every axis arranged as
    an outer product (``numpy.ix_``), so the result has the window's shape in order."""
    firsts = _firsts(shape, starts, sizes, allow_negative, what)
    traced = [isinstance(f, Tracer) for f in firsts]
    if sum(traced) <= 1:
        return tuple(f + anp.arange(n) if t else slice(f, f + n)
                     for f, n, t in zip(firsts, sizes, traced))
    index = []
    for axis, (f, n) in enumerate(zip(firsts, sizes)):
        vector = f + anp.arange(n)
        index.append(anp.reshape(vector, [n if k == axis else 1 for k in range(len(shape))]))
    return tuple(index)


def dynamic_slice(operand, start_indices, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True):
    """``operand[start:start + size]`` along every axis, with starts that may be traced
    (``jax.lax.dynamic_slice``); ``slice_sizes`` are static."""
    what = "lax.dynamic_slice"
    x = anp.asarray(operand)
    sizes = tuple(int(s) for s in slice_sizes)
    _check_sizes(sizes, tuple(x.shape), what, "slice_sizes")
    starts = _start_list(start_indices, x.ndim, what)
    firsts = _firsts(tuple(x.shape), starts, sizes, allow_negative_indices, what)
    # known starts as one slice, then one traced axis at a time: a window along one axis
    # (its start plus a run of positions) reads inside a fused kernel (``passes.windows``)
    x = x[tuple(slice(None) if isinstance(f, Tracer) else slice(f, f + n)
                for f, n in zip(firsts, sizes))]
    for axis, (f, n) in enumerate(zip(firsts, sizes)):
        if isinstance(f, Tracer):
            x = x[(slice(None),) * axis + (f + anp.arange(n),)]
    return x


def dynamic_update_slice(operand, update, start_indices, *,
                         allow_negative_indices: bool | Sequence[bool] = True):
    """``operand`` with the window at ``start_indices`` replaced by ``update`` (a new array;
    ``jax.lax.dynamic_update_slice``). ``update`` has the operand's rank and dtype."""
    what = "lax.dynamic_update_slice"
    x, u = anp.asarray(operand), anp.asarray(update)
    if u.ndim != x.ndim or u.dtype != x.dtype:
        raise TypeError(f"{what}: update {primitives.aval_of(u)} must have the operand's "
                        f"rank and dtype, {primitives.aval_of(x)}; reshape or astype it "
                        f"first")
    sizes = tuple(int(s) for s in u.shape)
    _check_sizes(sizes, tuple(x.shape), what, "the update's shape")
    starts = _start_list(start_indices, x.ndim, what)
    return _replaced(x, _window(tuple(x.shape), starts, sizes, allow_negative_indices, what),
                     u)


def _replaced(x, index: tuple, value):
    """``x.at[index].set(value)``; outside ``jit`` (NumPy arrays) a copy written in place."""
    if isinstance(value, Tracer) and not isinstance(x, Tracer):
        x = Tracer(value.ctx, primitives.as_var(value.ctx, x), frozenset())
    if isinstance(x, Tracer):
        return x.at[index].set(value)
    out = np.array(x, copy=True)
    out[index] = value
    return out


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """``dynamic_slice`` along one ``axis``; the other axes are kept whole."""
    x = anp.asarray(operand)
    axis = _normalise_axis(axis, x.ndim, "lax.dynamic_slice_in_dim")
    starts = [start_index if k == axis else 0 for k in range(x.ndim)]
    sizes = [int(slice_size) if k == axis else d for k, d in enumerate(x.shape)]
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """``dynamic_update_slice`` whose window starts at ``start_index`` along ``axis`` and at
    0 along the others."""
    x = anp.asarray(operand)
    axis = _normalise_axis(axis, x.ndim, "lax.dynamic_update_slice_in_dim")
    starts = [start_index if k == axis else 0 for k in range(x.ndim)]
    return dynamic_update_slice(x, update, starts,
                                allow_negative_indices=allow_negative_indices)


def _position(x, index, axis: int, allow_negative: bool, what: str) -> tuple:
    first = _clamped_start(index, x.shape[axis], 1, allow_negative, what, axis)
    return (slice(None),) * axis + (first,)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """The entry at ``index`` (clamped) along ``axis``, keeping that axis with length 1
    unless ``keepdims=False``."""
    what = "lax.dynamic_index_in_dim"
    x = anp.asarray(operand)
    axis = _normalise_axis(axis, x.ndim, what)
    if x.shape[axis] == 0:
        raise IndexError(f"{what}: axis {axis} of the operand has length 0")
    picked = x[_position(x, index, axis, allow_negative_indices, what)]
    return anp.expand_dims(picked, axis) if keepdims else picked


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
    """``operand`` with the entry at ``index`` (clamped) along ``axis`` replaced by
    ``update``, given with or without that axis of length 1."""
    what = "lax.dynamic_update_index_in_dim"
    x, u = anp.asarray(operand), anp.asarray(update)
    axis = _normalise_axis(axis, x.ndim, what)
    if u.ndim == x.ndim:
        if u.shape[axis] != 1:
            raise TypeError(f"{what}: update {primitives.aval_of(u)} must have length 1 "
                            f"along axis {axis} (or lack that axis)")
        u = anp.squeeze(u, axis)
    expected = tuple(d for k, d in enumerate(x.shape) if k != axis)
    if tuple(u.shape) != expected or u.dtype != x.dtype:
        raise TypeError(f"{what}: update {primitives.aval_of(u)} must be the operand's "
                        f"slice along axis {axis}, {x.dtype.name}{list(expected)}")
    return _replaced(x, _position(x, index, axis, allow_negative_indices, what), u)
