"""Library ops as simple device kernels: cumulative sums and products (one thread per line,
in NumPy's sequential order, so results are NumPy's bit for bit), concatenation (one copy
launch per operand) and searchsorted (a binary search per value, NaN sorting last as in
NumPy). Operands arrive in the result dtype (the namespace casts them)."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import cuda      # a module global: the simulator swaps it inside kernels

from .device import flat
from .launch import current_rule


@functools.lru_cache(maxsize=None)
def _cumulative_kernel(multiply: bool) -> Any:
    def cumulative(x, out, outer, length, inner):
        t = cuda.grid(1)
        while t < outer * inner:
            base = (t // inner) * length * inner + t % inner
            acc = x[base]
            out[base] = acc
            for j in range(1, length):
                acc = acc * x[base + j * inner] if multiply else acc + x[base + j * inner]
                out[base + j * inner] = acc
            t += cuda.gridsize(1)

    return cuda.jit(cumulative)


def cumulative(x: Any, out_dtype: np.dtype, axis: int, multiply: bool) -> Any:
    shape = tuple(x.shape)
    out = cuda.device_array(shape, out_dtype)
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    length, inner = shape[axis], int(np.prod(shape[axis + 1:], dtype=np.int64))
    if out.size:
        rule = current_rule()
        _cumulative_kernel(multiply)[rule.blocks(outer * inner), rule.threads](
            flat(x), flat(out), outer, length, inner)
    return out


@cuda.jit
def _place(x, out, inner_x, inner_out, offset):
    t = cuda.grid(1)
    while t < x.size:
        out[(t // inner_x) * inner_out + offset + t % inner_x] = x[t]
        t += cuda.gridsize(1)


def concatenate(*xs: Any, out_dtype: np.dtype, axis: int) -> Any:
    shape = list(xs[0].shape)
    shape[axis] = sum(int(x.shape[axis]) for x in xs)
    out = cuda.device_array(tuple(shape), out_dtype)
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    rule, offset = current_rule(), 0
    for x in xs:
        if x.size:
            _place[rule.blocks(x.size), rule.threads](flat(x), flat(out), x.shape[axis] * inner,
                                                      shape[axis] * inner, offset)
        offset += int(x.shape[axis]) * inner
    return out


@cuda.jit
def _searchsorted(a, v, out, right):
    t = cuda.grid(1)
    while t < v.size:
        x = v[t]
        lo, hi = 0, a.size
        while lo < hi:
            mid = (lo + hi) // 2
            am = a[mid]
            if right:   # the first index whose value sorts after x
                go_right = not (x < am or (am != am and x == x))
            else:       # the first index whose value does not sort before x
                go_right = am < x or (x != x and am == am)
            if go_right:
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo
        t += cuda.gridsize(1)


def searchsorted(a: Any, v: Any, out_dtype: np.dtype, side: str) -> Any:
    out = cuda.device_array(tuple(v.shape), out_dtype)
    if out.size:
        rule = current_rule()
        _searchsorted[rule.blocks(out.size), rule.threads](flat(a), flat(v), flat(out),
                                                           int(side == "right"))
    return out


@cuda.jit
def _take_rows(x, idx, out, rows, row_size, bad):
    t = cuda.grid(1)
    while t < idx.size * row_size:
        k = idx[t // row_size]
        if k < 0:
            k += rows
        if k < 0 or k >= rows:
            bad[0] = 1
        else:
            out[t] = x[k * row_size + t % row_size]
        t += cuda.gridsize(1)


def takes_rows(x: Any, arrays: tuple, index: tuple) -> bool:
    """Whether a gather is ``x[idx]`` (one integer array indexing the leading axis), which
    ``gather_rows`` runs without reading the index back."""
    return (len(arrays) == 1 and index == (("array", 0),) and x.ndim >= 1
            and np.dtype(arrays[0].dtype).kind in "iu")


def gather_rows(x: Any, idx: Any, out_dtype: np.dtype) -> Any | None:
    """``x[idx]`` for an integer array ``idx`` on the leading axis; None when an index is out
    of range or the result is empty (the caller then takes the general gather, which raises
    NumPy's IndexError)."""
    rows = int(x.shape[0])
    row_size = int(np.prod(x.shape[1:], dtype=np.int64))
    out = cuda.device_array(tuple(idx.shape) + tuple(x.shape[1:]), out_dtype)
    if out.size == 0:
        return None
    bad = cuda.to_device(np.zeros(1, np.int8))
    rule = current_rule()
    _take_rows[rule.blocks(out.size), rule.threads](flat(x), flat(idx), flat(out), rows,
                                                    row_size, bad)
    return None if bad.copy_to_host()[0] else out
