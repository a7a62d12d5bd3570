"""The CUDA backend: numba-cuda kernels generated from the same ``Kernel`` data as the CPU's
(``codegen``), launched by a documented rule (``launch``), on device arrays that stay on the
device between calls.

Results are numba-cuda device arrays that also export DLPack (``arrays``;
``__cuda_array_interface__`` and ``__dlpack__``: CuPy, PyTorch, JAX and numba take them
without a copy); inputs may be NumPy arrays (copied once per call) or any CUDA
array. Without a GPU it runs on numba-cuda's simulator when ``NUMBA_ENABLE_CUDASIM=1`` is set
before numba is imported.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...core.dtypes import Aval
from ...errors import UnsupportedDtypeError
from ...passes.kernel import Compute, Const, Kernel, Reduce
from ...plan import KernelStep, LoopStep, Plan
from . import codegen
from .arrays import result
from .device import (device_info, has_warp_shuffles, synchronize, to_device, to_host,
                     unavailable_reason)
from .launch import current_rule
from .runner import CudaExecutable
from .target import cache_key_fields


def _refuse_complex(plan: Plan) -> None:
    """Complex values compile for the CPU only (their math library is the CPU's)."""
    dtypes = [aval.dtype for aval in plan.slot_avals]
    for step in plan.steps:
        if isinstance(step, KernelStep):
            dtypes += [s.dtype for s in step.kernel.stmts + step.kernel.reductions
                       if isinstance(s, (Compute, Const, Reduce))]
        elif isinstance(step, LoopStep):
            _refuse_complex(step.cond)
            _refuse_complex(step.body)
    complex_ = sorted({d.name for d in dtypes if d.kind == "c"})
    if complex_:
        raise UnsupportedDtypeError(
            f"device='cuda' does not compile {' or '.join(complex_)} values yet (this function "
            f"computes some); run it with device='cpu', or carry the real and imaginary parts "
            f"(anp.real(z), anp.imag(z)) as float arrays.")


class CudaBackend:
    """Runs plans on the current CUDA device (or numba-cuda's simulator)."""

    name = "cuda"
    # a kernel cannot raise NumPy's IndexError for a position out of range: gathers at
    # run-time positions stay device library calls
    reads_positions = False

    def unavailable_reason(self) -> str | None:
        return unavailable_reason()

    def cache_key_fields(self) -> Mapping[str, Any]:
        return cache_key_fields()

    def render_kernel(self, kernel: Kernel) -> str:
        return codegen.render_kernel(kernel, current_rule().threads, has_warp_shuffles()).source

    def prepare(self, plan: Plan) -> CudaExecutable:
        _refuse_complex(plan)
        return CudaExecutable(plan, current_rule())

    def converts(self, x: Any) -> bool:
        return False          # ``run`` moves every input to the device itself

    def allocate(self, aval: Aval) -> Any:
        from numba import cuda

        return result(cuda.device_array(aval.shape, aval.dtype))

    def to_device(self, x: Any) -> Any:
        return result(to_device(x))

    def to_host(self, x: Any) -> np.ndarray:
        return to_host(x)

    def is_device_array(self, x: Any) -> bool:
        return device_info(x) is not None

    def synchronize(self) -> None:
        synchronize()


BACKEND = CudaBackend()
