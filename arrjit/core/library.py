"""Library calls: primitives whose best implementation already exists in NumPy (BLAS matmul,
sorting, fancy indexing, scatter with duplicates). A plan runs them between native segments on
materialised operands; the interpreter uses the same table, so both agree by construction.

Each entry: ``fn(*operands, **params) -> ndarray``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .ir import Op


def is_array_item(item) -> bool:
    """Whether a template entry is ``("array", k)``: the k-th index-array operand."""
    return isinstance(item, tuple) and bool(item) and item[0] == "array"


def build_index(template: tuple, arrays: Sequence[np.ndarray]) -> tuple:
    """Rebuild a NumPy index from its static template: ``("array", k)`` entries take the k-th
    array operand; ints, slices, None and Ellipsis stand for themselves."""
    out: list = []
    for item in template:
        if is_array_item(item):
            out.append(arrays[item[1]])
        elif isinstance(item, tuple) and item and item[0] == "slice":
            out.append(slice(*item[1:]))
        else:
            out.append(item)
    return tuple(out)


def indexed_shape(x_shape, template: tuple, arrays: Sequence) -> tuple[int, ...]:
    """The result shape of ``x[index]``, computed by NumPy on a zero-stride stand-in; index
    operands that are not arrays (tracers, avals) stand in as zeros of their shape (constant
    index arrays are checked against the bounds here, as NumPy would)."""
    probe = np.broadcast_to(np.zeros((), np.int8), x_shape)
    concrete = [a if isinstance(a, np.ndarray) else np.zeros(a.shape, np.intp) for a in arrays]
    return probe[build_index(template, concrete)].shape


def gather(x: np.ndarray, *arrays: np.ndarray, index: tuple) -> np.ndarray:
    return x[build_index(index, arrays)]


# the ufunc each combining scatter mode applies (``x.at[i].add`` -> ``numpy.add``)
SCATTER_UFUNCS = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def scatter(x: np.ndarray, *operands: np.ndarray, index: tuple, mode: str,
            in_place: bool = False) -> np.ndarray:
    """``x.at[index].<mode>(updates)``: a new array (or ``x`` itself, updated, when the plan
    proved ``x`` donated and dead); duplicate indices accumulate for the ufunc modes
    (``numpy.ufunc.at``), and the last write wins for ``set``."""
    *arrays, updates = operands
    out = x if in_place else np.array(x, copy=True)
    idx = build_index(index, arrays)
    if mode == "set":
        out[idx] = updates
    elif arrays:
        SCATTER_UFUNCS[mode].at(out, idx, updates)
    else:   # ints and slices name each element once: no duplicates to accumulate
        out[idx] = SCATTER_UFUNCS[mode](out[idx], updates)
    return out


LIBRARY_IMPLS: dict[Op, Callable[..., np.ndarray]] = {
    Op.MATMUL: lambda a, b: np.matmul(a, b),
    Op.EINSUM: lambda *ops, subscripts: np.einsum(subscripts, *ops, optimize=True),
    Op.CONCATENATE: lambda *xs, axis: np.concatenate(xs, axis=axis),
    Op.SORT: lambda x, axis: np.sort(x, axis=axis),
    Op.ARGSORT: lambda x, axis, stable: np.argsort(x, axis=axis, stable=stable),
    Op.CUMSUM: lambda x, axis: np.cumsum(x, axis=axis),
    Op.CUMPROD: lambda x, axis: np.cumprod(x, axis=axis),
    Op.SEARCHSORTED: lambda a, v, side: np.asarray(np.searchsorted(a, v, side=side)),
    Op.GATHER: gather,
    Op.SCATTER: scatter,
}


def call(op: Op, operands: Sequence[np.ndarray], params: dict[str, Any],
         dtype: np.dtype) -> np.ndarray:
    """Run one library op; the result is C-ordered, as every kernel that reads it assumes
    (NumPy's ``a[:, idx]`` and ``einsum`` may answer with transposed layouts)."""
    out = LIBRARY_IMPLS[op](*operands, **params)
    return np.asarray(out, dtype=dtype, order="C")
