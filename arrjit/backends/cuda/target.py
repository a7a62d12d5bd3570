"""What the CUDA backend's machine code depends on: its part of the disk-cache key (code
generator, compute capability, the CUDA runtime, NVVM and numba-cuda versions, flags)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ...runtime.cache import fingerprint
from .codegen import CODEGEN_VERSION, JIT_OPTIONS
from .device import properties, simulated

_fields: dict[str, Any] | None = None

# the code that decides what generated source means (its edits invalidate cached entries)
_GENERATOR_FILES = ("backends/source.py", "backends/cuda/codegen.py",
                    "backends/cuda/expressions.py", "backends/cuda/reduce.py",
                    "passes/fuse.py", "passes/kernel.py", "runtime/compile.py",
                    "backends/cuda/gpumath.py", "backends/cuda/simmath.py", "core/special.py")


def _version(read: Callable[[], Any]) -> str:
    try:
        return str(read())
    except Exception as err:   # a library that cannot be loaded still gives a key
        return f"unknown ({type(err).__name__})"


def _runtime_version() -> Any:
    from numba.cuda.cudadrv.runtime import runtime

    return runtime.get_version()


def _nvvm_version() -> Any:
    from numba.cuda.cudadrv import nvvm

    return nvvm.NVVM().get_version()


def _numba_cuda_version() -> Any:
    import numba_cuda

    return numba_cuda.__version__


def cache_key_fields() -> dict[str, Any]:
    global _fields
    if _fields is None:
        package = Path(__file__).resolve().parents[2]
        cc, _, name = properties()
        _fields = {
            "backend": "cuda",
            "codegen": fingerprint([package / rel for rel in _GENERATOR_FILES]),
            "codegen_version": CODEGEN_VERSION,
            "compute_capability": list(cc),
            "device": name,
            "simulator": simulated(),
            "cuda_runtime": _version(_runtime_version),
            "nvvm": _version(_nvvm_version),
            "numba_cuda": _version(_numba_cuda_version),
            "flags": [JIT_OPTIONS],
        }
    return _fields
