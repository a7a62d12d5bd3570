"""Gathers ``x[index]`` and scatters ``x.at[index].<mode>(updates)`` on the device, for any
index the namespace accepts.

NumPy works out the index, on the host: the index arrays (small next to ``x``, as a rule) are
read back, and NumPy applies the index to zero-stride coordinate views of ``x``'s shape, which
gives the flat position in ``x`` of every element of the result, NumPy's broadcasting of index
arrays, its placement of the indexed dimensions and its ``IndexError``, without touching
``x``. The device then moves the data: a gather reads ``x`` at those positions; a scatter
applies the updates grouped by destination, one thread per destination, in the order NumPy
applies them (``numpy.ufunc.at`` for the ufunc modes, the last write winning for ``set``), so
duplicate indices give NumPy's values bit for bit.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np
from numba import cuda      # a module global: the simulator swaps it inside kernels

from ...core.library import build_index
from .device import flat, to_device, to_host
from .launch import current_rule


def positions(shape: tuple[int, ...], template: tuple, arrays: Sequence[np.ndarray]
              ) -> np.ndarray:
    """The flat C-order position in an array of ``shape`` of each element of
    ``array[index]`` (int64, the result's shape).

    >>> positions((3, 4), (("array", 0), ("slice", None, None, 2)), [np.array([2, 0])])
    array([[ 8, 10],
           [ 0,  2]])
    """
    index = build_index(template, arrays)
    ndim = len(shape)
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(ndim)]
    out: np.ndarray | None = None
    for d in range(ndim):
        view = [1] * ndim
        view[d] = shape[d]
        coordinate = np.broadcast_to(np.arange(shape[d], dtype=np.int64).reshape(view), shape)
        term = coordinate[index] * strides[d]
        out = term if out is None else out + term
    if out is None:                         # a 0-d array: its one element
        out = np.zeros(np.broadcast_to(np.zeros((), np.int8), shape)[index].shape, np.int64)
    return np.ascontiguousarray(out, dtype=np.int64)


@cuda.jit
def _gather(x, pos, out):
    t = cuda.grid(1)
    while t < out.size:
        out[t] = x[pos[t]]
        t += cuda.gridsize(1)


def gather(x: Any, arrays: Sequence[Any], template: tuple, out_dtype: np.dtype) -> Any:
    """``x[index]`` as a new device array."""
    pos = positions(tuple(x.shape), template, [to_host(a) for a in arrays])
    out = cuda.device_array(pos.shape, out_dtype)
    if out.size:
        rule = current_rule()
        _gather[rule.blocks(out.size), rule.threads](flat(x), to_device(pos.ravel()), flat(out))
    return out


def transpose(x: Any, perm: tuple[int, ...]) -> Any:
    """``numpy.transpose(x, perm)`` as a new C-order device array."""
    shape = tuple(x.shape)
    pos = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    out = cuda.device_array(tuple(shape[p] for p in perm), x.dtype)
    if out.size:
        rule = current_rule()
        _gather[rule.blocks(out.size), rule.threads](
            flat(x), to_device(np.ascontiguousarray(pos.transpose(perm)).ravel()), flat(out))
    return out


_MODES = {"set": 0, "add": 1, "multiply": 2, "min": 3, "max": 4}


@functools.lru_cache(maxsize=None)
def _scatter_kernel(mode_name: str) -> Any:
    mode = _MODES[mode_name]        # an integer: kernels compare it at compile time

    def scatter(out, updates, starts, sources, destinations):
        s = cuda.grid(1)
        while s < destinations.size:
            dst = destinations[s]
            acc = out[dst]
            for e in range(starts[s], starts[s + 1]):
                u = updates[sources[e]]
                if mode == 0:
                    acc = u
                elif mode == 1:
                    acc = acc + u
                elif mode == 2:
                    acc = acc * u
                elif mode == 3:         # NumPy's minimum: a NaN on either side wins
                    if not (acc != acc) and (u != u or u < acc):
                        acc = u
                else:
                    if not (acc != acc) and (u != u or u > acc):
                        acc = u
            out[dst] = acc
            s += cuda.gridsize(1)

    return cuda.jit(scatter)


def scatter(x: Any, arrays: Sequence[Any], updates: Any, template: tuple, mode: str,
            in_place: bool = False) -> Any:
    """``x.at[index].<mode>(updates)``: a new device array, or ``x`` itself updated when the
    plan proved ``x`` donated and dead (``in_place``). ``updates`` has ``x``'s dtype."""
    indexed = positions(tuple(x.shape), template, [to_host(a) for a in arrays])
    out = x if in_place else _copy(x)
    if indexed.size == 0:
        return out
    pos, region = indexed.ravel(), indexed.shape
    updates_shape = tuple(updates.shape)
    source = np.broadcast_to(np.arange(int(np.prod(updates_shape, dtype=np.int64)),
                                       dtype=np.int64).reshape(updates_shape), region).ravel()
    order = np.argsort(pos, kind="stable")   # grouped by destination, in NumPy's order within
    grouped = pos[order]
    first = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    starts = np.r_[first, grouped.size].astype(np.int64)
    rule = current_rule()
    _scatter_kernel(mode)[rule.blocks(first.size), rule.threads](
        flat(out), flat(updates), to_device(starts), to_device(np.ascontiguousarray(source[order])),
        to_device(np.ascontiguousarray(grouped[first])))
    return out


def _copy(x: Any) -> Any:
    out = cuda.device_array(tuple(x.shape), x.dtype)
    if out.size:
        flat(out).copy_to_device(flat(x))
    return out
