"""Index helpers of ``arrjit.numpy``: ``mgrid``, ``ogrid``, ``r_``, ``c_``, ``s_``,
``index_exp``, ``ix_``, ``indices``, the ``tril``/``triu``/``diag`` index functions and
``unravel_index``/``ravel_multi_index``. Shapes are static, so grids and index arrays are
constants (inside jit: constant traced arrays that fuse); ``r_``/``c_`` of traced arrays
concatenate them.

>>> import arrjit.numpy as anp
>>> anp.mgrid[0:2, 0:3].shape
(2, 2, 3)
>>> [g.shape for g in anp.ogrid[0:2, 0:3]]
[(2, 1), (1, 3)]
>>> anp.r_[1:4, 7]
array([1, 2, 3, 7])
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import base as anp
from . import shapes
from ..core.trace import Tracer

s_ = np.s_
index_exp = np.index_exp


def _constant(x: Any) -> Any:
    return anp._traced_constant(np.asarray(x))


class _Grid:
    """``mgrid`` / ``ogrid``: NumPy's grids of static slices, as constants."""

    def __init__(self, numpy_grid: Any, name: str):
        self._grid = numpy_grid
        self._name = name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        for item in items:
            parts = (item.start, item.stop, item.step) if isinstance(item, slice) else (item,)
            if any(isinstance(v, Tracer) for v in parts):
                raise TypeError(f"anp.{self._name}[...] takes static slice bounds: the grid's "
                                f"shape depends on them. Use anp.arange / anp.linspace with "
                                f"static sizes, or make the bounds static arguments.")
        result = self._grid[key]
        if isinstance(result, (tuple, list)):
            return tuple(_constant(part) for part in result)
        return _constant(result)

    def __repr__(self) -> str:
        return f"anp.{self._name}"


mgrid = _Grid(np.mgrid, "mgrid")
ogrid = _Grid(np.ogrid, "ogrid")


class _Concatenator:
    """``r_`` (along the first axis) and ``c_`` (columns along the last): slices become
    ranges, scalars one element, arrays themselves; traced arrays join by ``concatenate``."""

    def __init__(self, numpy_concatenator: Any, columns: bool, name: str):
        self._numpy = numpy_concatenator
        self._columns = columns
        self._name = name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        if not any(isinstance(item, Tracer) for item in items):
            return _constant(self._numpy[key])
        if items and isinstance(items[0], str):
            raise TypeError(f"anp.{self._name}[...] with a string directive takes NumPy arrays "
                            f"only; use anp.concatenate / anp.stack for traced arrays")
        pieces = []
        for item in items:
            if isinstance(item, slice):
                piece = anp.asarray(np.r_[item])
            else:
                piece = anp.asarray(item)
                if piece.ndim == 0:
                    piece = anp.reshape(piece, (1,))
            if self._columns and piece.ndim == 1:
                piece = anp.reshape(piece, (-1, 1))
            pieces.append(piece)
        return shapes.concatenate(pieces, axis=-1 if self._columns else 0)

    def __len__(self) -> int:
        return 0


r_ = _Concatenator(np.r_, False, "r_")
c_ = _Concatenator(np.c_, True, "c_")


def ix_(*args):
    """``numpy.ix_``: open-mesh index arrays from 1-d sequences (traced ones too)."""
    if not any(isinstance(a, Tracer) for a in args):
        return tuple(_constant(x) for x in np.ix_(*args))
    out = []
    for k, a in enumerate(args):
        a = anp.asarray(a)
        if a.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if a.dtype == np.bool_:
            raise TypeError("anp.ix_ of a traced boolean mask: its length depends on the "
                            "values; pass integer indices")
        out.append(anp.reshape(a, (1,) * k + (-1,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def indices(dimensions, dtype=int, sparse: bool = False):
    """``numpy.indices`` (a constant: the dimensions are static)."""
    result = np.indices(tuple(int(d) for d in dimensions), dtype=dtype, sparse=sparse)
    if sparse:
        return tuple(_constant(r) for r in result)
    return _constant(result)


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """``numpy.tril_indices`` (constants)."""
    return tuple(_constant(r) for r in np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """``numpy.triu_indices`` (constants)."""
    return tuple(_constant(r) for r in np.triu_indices(n, k, m))


def tril_indices_from(arr, k: int = 0):
    """``numpy.tril_indices_from``: of an array's (static) shape."""
    shape = anp.shape(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(shape[-2], k, shape[-1])


def triu_indices_from(arr, k: int = 0):
    """``numpy.triu_indices_from``: of an array's (static) shape."""
    shape = anp.shape(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(shape[-2], k, shape[-1])


def diag_indices(n: int, ndim: int = 2):
    """``numpy.diag_indices`` (constants)."""
    return tuple(_constant(r) for r in np.diag_indices(n, ndim))


def diag_indices_from(arr):
    """``numpy.diag_indices_from``: of an array's (static) shape; all sides equal."""
    shape = anp.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def unravel_index(indices, shape, order: str = "C"):
    """``numpy.unravel_index``: flat indices to one index array per dimension (traced
    indices too; out-of-range values are not checked inside jit)."""
    if not isinstance(indices, Tracer):
        return tuple(_constant(r) for r in np.unravel_index(indices, shape, order=order))
    shape = tuple(int(d) for d in shape)
    dims = shape if order == "C" else shape[::-1]
    flat = anp.asarray(indices)
    out = []
    for d in reversed(dims):
        out.append(anp.remainder(flat, d))
        flat = anp.floor_divide(flat, d)
    out.reverse()
    return tuple(out) if order == "C" else tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C"):
    """``numpy.ravel_multi_index``: index arrays to flat indices; inside jit ``mode`` is
    ``'wrap'`` or ``'clip'`` (``'raise'`` would need the values: it clips, as in JAX)."""
    if not any(isinstance(i, Tracer) for i in multi_index):
        return _constant(np.ravel_multi_index(multi_index, dims, mode=mode, order=order))
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    order_dims = list(range(len(dims))) if order == "C" else list(range(len(dims)))[::-1]
    flat = None
    for k in order_dims:
        idx = anp.asarray(multi_index[k])
        if mode == "wrap":
            idx = anp.remainder(idx, dims[k])
        else:
            idx = anp.clip(idx, 0, dims[k] - 1)
        flat = idx if flat is None else anp.add(anp.multiply(flat, dims[k]), idx)
    return flat
