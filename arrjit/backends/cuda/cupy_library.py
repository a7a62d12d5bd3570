"""Library ops through CuPy, where CuPy is importable and has a GPU: floating-point matmul on
cuBLAS, sort and argsort on CUB's radix sort (CuPy's sorts are stable and put NaN last, the
order of ``sorting``'s network, so results do not depend on whether CuPy is there).

Gathers and scatters keep arrjit's kernels (``indexing``): CuPy wraps out-of-range indices
around instead of raising NumPy's ``IndexError``, and applies duplicate scatter indices in no
fixed order. Operands and results cross without copies (``__cuda_array_interface__``), and
CuPy runs on the legacy default stream, where arrjit launches its kernels, so the order of
work on the device is the program's.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from ...core.ir import Op
from .device import simulated


@functools.lru_cache(maxsize=1)
def cupy_module() -> Any | None:
    """CuPy, when it is importable and sees a GPU (never on numba-cuda's simulator, whose
    arrays are host memory); else None."""
    if simulated():
        return None
    try:
        import cupy
    except ImportError:
        return None
    try:
        return cupy if cupy.is_available() else None
    except Exception:       # a CuPy built for another CUDA major version, a broken driver
        return None


def _as_numba(x: Any) -> Any:
    from numba import cuda

    return cuda.as_cuda_array(x)


def _matmul(cp: Any, operands: Sequence[Any], out_dtype: np.dtype) -> Any | None:
    if np.dtype(out_dtype).kind != "f" or any(np.dtype(x.dtype).kind != "f" for x in operands):
        return None             # integer and boolean products: arrjit's tiled kernel
    a, b = (cp.asarray(x) for x in operands)
    return _as_numba(cp.ascontiguousarray(cp.matmul(a, b).astype(out_dtype, copy=False)))


def _sort(indices: bool) -> Callable[..., Any]:
    def run(cp: Any, operands: Sequence[Any], out_dtype: np.dtype, axis: int, **_: Any) -> Any:
        x = cp.asarray(operands[0])
        if x.ndim == 0:
            return None
        out = cp.argsort(x, axis=axis) if indices else cp.sort(x, axis=axis)
        return _as_numba(cp.ascontiguousarray(out.astype(out_dtype, copy=False)))
    return run


# op -> fn(cupy, device operands, out_dtype, **params) -> a device array, or None where
# arrjit's own kernel should run instead
THROUGH_CUPY: dict[Op, Callable[..., Any]] = {
    Op.MATMUL: _matmul,
    Op.SORT: _sort(indices=False),
    Op.ARGSORT: _sort(indices=True),
}


def call(op: Op, operands: Sequence[Any], out_dtype: np.dtype, params: dict) -> Any | None:
    """``op`` through CuPy, or None (no CuPy, or an op or dtype it does not take)."""
    cp = cupy_module()
    fn = THROUGH_CUPY.get(op)
    if cp is None or fn is None:
        return None
    with cp.cuda.Stream.null:
        return fn(cp, operands, out_dtype, **params)
