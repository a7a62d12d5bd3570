"""Library calls on the CUDA backend (matmul, sort, gather/scatter, cumsum...).

Matmul (``matmul``: a tiled kernel), cumsum, cumprod, concatenate, searchsorted and the
gather ``x[idx]`` (``device_library``) run on the device. The others (sort, argsort, other
gathers, scatter, einsum) run through NumPy's implementation (``core.library``, the table the CPU and the interpreter use) on host copies
of the operands, and the result is copied back: values, dtypes and errors are exactly the
CPU's, at the price of two transfers per call; kernels before and after stay on the device.
"""
from __future__ import annotations

from typing import Any, Callable

from ...core import library
from ...core.ir import Op
from ...plan import LibraryStep
from .device import to_device, to_host
from .device_library import concatenate, cumulative, gather, searchsorted, takes_rows
from .matmul import matmul

# op -> fn(*device operands, out_dtype, **params): library ops with a device implementation
ON_DEVICE: dict[Op, Callable[..., Any]] = {
    Op.MATMUL: matmul,
    Op.CUMSUM: lambda x, out_dtype, axis: cumulative(x, out_dtype, axis, multiply=False),
    Op.CUMPROD: lambda x, out_dtype, axis: cumulative(x, out_dtype, axis, multiply=True),
    Op.CONCATENATE: lambda *operands, axis: concatenate(*operands[:-1], out_dtype=operands[-1],
                                                        axis=axis),
    Op.SEARCHSORTED: searchsorted,
}


class LibraryCall:
    sources: tuple[str, ...] = ()

    def __init__(self, step: LibraryStep):
        self.node = step.node
        self.in_slots = list(step.in_slots)
        self.out_slot = step.out_slot

    def compute(self, *operands: Any) -> Any:
        node = self.node
        device_fn = ON_DEVICE.get(node.op)
        if device_fn is not None:
            return device_fn(*operands, node.out.dtype, **node.param)
        if node.op is Op.GATHER and takes_rows(operands[0], operands[1:], node.param["index"]):
            out = gather(operands[0], operands[1], node.out.dtype)
            if out is not None:
                return out          # else an index is out of range: NumPy's error below
        host = [to_host(x) for x in operands]
        return to_device(library.call(node.op, host, node.param, node.out.dtype))

    def __call__(self, bufs: list) -> None:
        bufs[self.out_slot] = self.compute(*(bufs[s] for s in self.in_slots))
