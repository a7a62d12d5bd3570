"""Library calls on the CUDA backend (matmul, sort, gather/scatter, cumsum...).

Every library op runs on the device: matmul (``matmul``: a tiled kernel),
sort and argsort (``sorting``), gathers and scatters (``indexing``; the row gather ``x[idx]``
never reads its index back: ``device_library``), cumsum, cumprod, concatenate and
searchsorted (``device_library``), einsum (``contraction``). Where CuPy is importable and
has a GPU, floating-point matmul and the sorts go through it instead (``cupy_library``:
cuBLAS and CUB). What a device function declines (a boolean einsum, a 0-d sort) runs
NumPy's implementation (``core.library``, the table the CPU and the interpreter use) on
host copies of the operands, and the result is copied back.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...core import library
from ...core.ir import Op
from ...executor import store_results
from ...plan import LibraryStep
from . import cupy_library, indexing
from .contraction import einsum
from .device import to_device, to_host
from .device_library import concatenate, cumulative, gather_rows, searchsorted, takes_rows
from .matmul import matmul
from .sorting import sort_lines


def _gather(operands: Sequence[Any], out_dtype: np.dtype, index: tuple) -> Any:
    x, arrays = operands[0], operands[1:]
    if takes_rows(x, tuple(arrays), index):
        out = gather_rows(x, arrays[0], out_dtype)
        if out is not None:
            return out          # else an index is out of range: the general gather raises
    return indexing.gather(x, arrays, index, out_dtype)


def _sort(indices: bool) -> Callable[..., Any]:
    def run(operands: Sequence[Any], out_dtype: np.dtype, axis: int, **_: Any) -> Any:
        x = operands[0]
        return sort_lines(x, axis, out_dtype, indices) if x.ndim else None
    return run


# op -> fn(device operands, out_dtype, **params) -> a device array, or None where NumPy on the
# host must answer (its error, or nothing to compute)
ON_DEVICE: dict[Op, Callable[..., Any]] = {
    Op.MATMUL: lambda ops, out_dtype: matmul(ops[0], ops[1], out_dtype),
    Op.CUMSUM: lambda ops, out_dtype, axis: cumulative(ops[0], out_dtype, axis, multiply=False),
    Op.CUMPROD: lambda ops, out_dtype, axis: cumulative(ops[0], out_dtype, axis, multiply=True),
    Op.CONCATENATE: lambda ops, out_dtype, axis: concatenate(*ops, out_dtype=out_dtype,
                                                             axis=axis),
    Op.SEARCHSORTED: lambda ops, out_dtype, side: searchsorted(ops[0], ops[1], out_dtype, side),
    Op.SORT: _sort(indices=False),
    Op.ARGSORT: _sort(indices=True),
    Op.GATHER: _gather,
    Op.EINSUM: lambda ops, out_dtype, subscripts: einsum(ops, out_dtype, subscripts),
    Op.SCATTER: lambda ops, out_dtype, index, mode, in_place=False: indexing.scatter(
        ops[0], ops[1:-1], ops[-1], index, mode, in_place),
}


class LibraryRun:
    """A library step on device arrays: CuPy, a device routine, or NumPy on host copies."""

    sources: tuple[str, ...] = ()

    def __init__(self, step: LibraryStep):
        self.node = step.node
        self.in_slots = list(step.in_slots)
        self.out_slots = list(step.out_slots)
        self.in_place = step.in_place
        self.perms = step.in_perms if any(step.in_perms) else ()

    def compute(self, *operands: Any) -> Any:
        node = self.node
        if self.perms:   # the device kernels read C-order operands: gather the transposes
            operands = tuple(x if perm is None else indexing.transpose(x, perm)
                             for x, perm in zip(operands, self.perms))
        through_cupy = cupy_library.call(node.op, operands, node.out.dtype, node.param)
        if through_cupy is not None:
            return through_cupy
        device_fn = ON_DEVICE.get(node.op)
        if device_fn is not None:
            params = dict(node.param, in_place=True) if self.in_place else node.param
            out = device_fn(operands, node.out.dtype, **params)
            if out is not None:
                return out
        host = [to_host(x) for x in operands]
        if node.extra:
            dtypes = tuple(v.dtype for v in node.outs)
            return tuple(to_device(x) for x in library.call(node.op, host, node.param, dtypes))
        return to_device(library.call(node.op, host, node.param, node.out.dtype))

    def __call__(self, bufs: list) -> None:
        """Run on ``bufs``; a scatter the plan proved safe updates its operand in place."""
        result = self.compute(*(bufs[s] for s in self.in_slots))
        store_results(bufs, self.out_slots, result if len(self.out_slots) > 1 else (result,))
