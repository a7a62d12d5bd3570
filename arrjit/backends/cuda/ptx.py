"""Compiling a plan's CUDA kernels without a GPU: every generated function to PTX for an
explicit compute capability (numba-cuda needs ``cc=`` when no device is present), and the PTX
linked into a cubin by nvJitLink (``cuda.core``'s ``Linker``, which runs ptxas and rejects bad
PTX with its log). The tests use this as the type check that the simulator does not do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba.np.numpy_support import from_dtype

from ...passes.kernel import Kernel
from ...plan import KernelStep, LoopStep, Plan
from .codegen import RenderedKernel, module_source, render_kernel
from .kernels import signatures


@dataclass(frozen=True)
class KernelPtx:
    name: str
    strategy: str
    ptx: str


def plan_kernels(plan: Plan) -> list[Kernel]:
    """Every fused kernel of ``plan``, those of its loops' condition and body included."""
    kernels: list[Kernel] = []
    for step in plan.steps:
        if isinstance(step, KernelStep):
            kernels.append(step.kernel)
        elif isinstance(step, LoopStep):
            kernels += plan_kernels(step.cond) + plan_kernels(step.body)
    return kernels


def compile_ptx(kernels: list[Kernel], cc: tuple[int, int], threads: int = 256
                ) -> list[KernelPtx]:
    """PTX for every function of ``kernels`` as the GPU backend renders them."""
    from numba import cuda

    rendered: list[RenderedKernel] = [render_kernel(k, threads) for k in kernels]
    namespace: dict = {}
    exec(compile(module_source(rendered, simulated=False), "<arrjit cuda ptx>", "exec"),
         namespace)
    out = []
    for kernel, r in zip(kernels, rendered):
        for suffix, sig in signatures(kernel, r).items():
            name = r.name + suffix
            ptx, _ = cuda.compile_ptx(namespace[name].py_func, sig, cc=cc)
            out.append(KernelPtx(name, r.strategy, ptx))
    return out


def library_ptx(cc: tuple[int, int], dtypes=("float32", "float64", "int64", "uint8", "bool")
                ) -> list[KernelPtx]:
    """PTX of the hand-written device kernels of library ops (matmul at the GPU tile size,
    cumulative, concatenate, searchsorted, row gather, sort, gather, scatter in each mode,
    einsum) for each dtype."""
    from numba import cuda, types

    from . import contraction, device_library as lib, indexing, sorting
    from .matmul import tiled_kernel

    i64, i8 = types.int64, types.Array(types.int8, 1, "C")
    indices = types.Array(types.int64, 1, "C")
    out = []
    for name in dtypes:
        array = types.Array(from_dtype(np.dtype(name)), 1, "C")
        kernels = {
            "matmul": (tiled_kernel(16, np.dtype(name)),
                       (array, array, array, indices, indices, i64, i64, i64)),
            "cumsum": (lib._cumulative_kernel(False), (array, array, i64, i64, i64)),
            "cumprod": (lib._cumulative_kernel(True), (array, array, i64, i64, i64)),
            "concatenate": (lib._place, (array, array, i64, i64, i64)),
            "searchsorted": (lib._searchsorted, (array, array, indices, i64)),
            "gather_rows": (lib._take_rows, (array, indices, array, i64, i64, i8)),
            "sort_load": (sorting._load, (array, array, indices, i64, i64, i64, i64)),
            "sort_step": (sorting._compare_exchange,
                          (array, indices, i64, i64, i64, i64, i64)),
            "sort_values": (sorting._store, (array, array, i64, i64, i64, i64)),
            "sort_order": (sorting._store, (indices, indices, i64, i64, i64, i64)),
            "gather": (indexing._gather, (array, indices, array)),
            "einsum": (contraction._contract, (array, indices, types.Array(types.int64, 2, "C"),
                                               indices, i64, array, array)),
            **{f"scatter_{mode}": (indexing._scatter_kernel(mode),
                                   (array, array, indices, indices, indices))
               for mode in ("set", "add", "multiply", "min", "max")},
        }
        for kind, (kernel, sig) in kernels.items():
            ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
            out.append(KernelPtx(f"{kind}_{name}", "library", ptx))
    return out


def link_cubin(ptx: str, arch: str) -> bytes:
    """Link ``ptx`` into a cubin for ``arch`` (``'sm_90'``); raises with ptxas' log."""
    from cuda.core import Linker, LinkerOptions, ObjectCode

    linker = Linker(ObjectCode.from_ptx(ptx.encode()), options=LinkerOptions(arch=arch))
    return bytes(linker.link("cubin").code)
