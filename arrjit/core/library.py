"""Library calls: primitives whose best implementation already exists in NumPy (BLAS matmul,
sorting, fancy indexing, scatter with duplicates). A plan runs them between kernels on
materialised operands; the interpreter uses the same table, so both agree by construction.

Each entry: ``fn(*operands, **params) -> ndarray`` (a tuple of them for an op with several
results: the dense linear algebra of ``LINALG_IMPLS``).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .ir import Op


def is_array_item(item) -> bool:
    """Whether a template entry is ``("array", k)``: the k-th index-array operand."""
    return isinstance(item, tuple) and bool(item) and item[0] == "array"


def is_position_item(item) -> bool:
    """Whether a template entry selects along one axis of the indexed array: an int, a slice or
    an index array (``None`` and ``Ellipsis`` move axes)."""
    return isinstance(item, int) or (isinstance(item, tuple) and bool(item)
                                     and item[0] in ("array", "slice"))


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


def _complex_results(w, v=None):
    """``numpy.linalg.eig``'s results as complex arrays, whatever the eigenvalues are (NumPy
    returns real arrays when they all are real: a dtype a compiled program cannot wait for)."""
    dtype = np.result_type(w, np.complex64)
    return np.asarray(w, dtype) if v is None else (np.asarray(w, dtype), np.asarray(v, dtype))


LINALG_IMPLS: dict[Op, Callable[..., Any]] = {
    Op.SOLVE: lambda a, b: np.linalg.solve(a, b),
    Op.INV: lambda a: np.linalg.inv(a),
    Op.DET: lambda a: np.linalg.det(a),
    Op.SLOGDET: lambda a: tuple(np.linalg.slogdet(a)),
    Op.CHOLESKY: lambda a, upper: np.linalg.cholesky(a, upper=upper),
    Op.QR: lambda a, mode: (np.linalg.qr(a, mode="r") if mode == "r" else
                            tuple(np.linalg.qr(a, mode=mode))),
    Op.EIGH: lambda a, UPLO, vectors: (tuple(np.linalg.eigh(a, UPLO)) if vectors else
                                       np.linalg.eigvalsh(a, UPLO)),
    Op.SVD: lambda a, full_matrices, vectors: (
        tuple(np.linalg.svd(a, full_matrices=full_matrices)) if vectors else
        np.linalg.svd(a, compute_uv=False)),
    Op.EIG: lambda a, vectors: (_complex_results(*np.linalg.eig(a)) if vectors else
                                _complex_results(np.linalg.eigvals(a))),
}

LIBRARY_IMPLS: dict[Op, Callable[..., Any]] = {
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
    Op.CONVOLVE: lambda a, v, mode: np.convolve(a, v, mode=mode),
    **LINALG_IMPLS,
}


def call(op: Op, operands: Sequence[np.ndarray], params: dict[str, Any],
         dtypes: np.dtype | tuple[np.dtype, ...]) -> Any:
    """Run one library op; each result is C-ordered, as every kernel that reads it assumes
    (NumPy's ``a[:, idx]`` and ``einsum`` may answer with transposed layouts). ``dtypes``:
    the result's dtype, or a tuple of them for an op with several results (a tuple of
    arrays then comes back)."""
    out = LIBRARY_IMPLS[op](*operands, **params)
    if isinstance(dtypes, tuple):
        return tuple(_owned(np.asarray(x, dtype=dt, order="C"), operands)
                     for x, dt in zip(out, dtypes))
    result = np.asarray(out, dtype=dtypes, order="C")
    return result if op is Op.SCATTER else _owned(result, operands)


def _owned(result: np.ndarray, operands: Sequence[np.ndarray]) -> np.ndarray:
    """``result``, copied when it may be a view of an operand (a gather of a slice, einsum's
    ``ij->ji``): a plan gives each result a buffer of its own, and hands an operand's buffer
    to a later value once the operand is dead. (A scatter's in-place result is its operand's
    buffer on purpose: the plan proved that operand dead.)"""
    if any(isinstance(x, np.ndarray) and np.may_share_memory(result, x) for x in operands):
        return result.copy()
    return result
