"""The CUDA device as numba-cuda sees it: whether one is usable (a GPU, or numba-cuda's
simulator under ``NUMBA_ENABLE_CUDASIM=1``), its compute capability and SM count, and moving
arrays on and off it. numba-cuda is imported on first use only.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...core.foreign import device_info, is_numba_device_array

SIMULATOR_HINT = ("to run CUDA code without a GPU, start Python with NUMBA_ENABLE_CUDASIM=1 "
                  "(numba-cuda's simulator: one OS thread per GPU thread, for tests on tiny "
                  "arrays)")


def simulated() -> bool:
    """Whether numba-cuda runs kernels on its simulator in this process."""
    from numba import config as numba_config

    return bool(getattr(numba_config, "ENABLE_CUDASIM", 0))


def has_warp_shuffles() -> bool:
    """Whether kernels may use warp shuffles: on a GPU; numba-cuda's simulator has none
    (unless something has given it ``shfl_down_sync``)."""
    if not simulated():
        return True
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    return hasattr(FakeCUDAModule, "shfl_down_sync")


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """Why ``device='cuda'`` cannot run here, or None when it can."""
    try:
        from numba import cuda
    except ImportError:
        return ("numba-cuda is not installed; install arrjit's CUDA extra: "
                "pip install 'arrjit[cuda]'")
    if simulated():
        return None
    try:
        if cuda.is_available():
            return None
        detail = "numba-cuda found no CUDA driver or GPU"
    except Exception as err:   # a broken driver install reports itself here
        detail = f"{type(err).__name__}: {err}"
    return f"no CUDA device is available ({detail}); {SIMULATOR_HINT}"


@functools.lru_cache(maxsize=1)
def properties() -> tuple[tuple[int, int], int, str]:
    """(compute capability, SM count, name) of the current device; the simulator reports a
    fixed small device."""
    if simulated():
        return (0, 0), 1, "numba-cuda simulator"
    from numba import cuda

    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    return tuple(dev.compute_capability), int(dev.MULTIPROCESSOR_COUNT), name


def to_device(x: Any) -> Any:
    """``x`` as a C-contiguous numba-cuda device array: CUDA arrays without a copy (a strided
    one is copied), anything else copied from the host once."""
    from numba import cuda

    info = device_info(x)
    if info is not None:
        arr = x if is_numba_device_array(x) else cuda.as_cuda_array(x)
        if info[2]:
            return arr
        return cuda.to_device(np.ascontiguousarray(arr.copy_to_host()))
    host = np.asarray(x, dtype=np.int64) if type(x) is int else np.asarray(x)
    return cuda.to_device(np.ascontiguousarray(host) if host.ndim else host)


def to_host(x: Any) -> np.ndarray:
    if is_numba_device_array(x):
        return x.copy_to_host()
    if hasattr(x, "__cuda_array_interface__"):
        from numba import cuda

        return cuda.as_cuda_array(x).copy_to_host()
    return np.asarray(x)


def device_pointer(x: Any) -> tuple[int, int]:
    """(start, end) of a device array's bytes, for aliasing checks."""
    iface = getattr(x, "__cuda_array_interface__", None)
    if iface is not None:
        start = int(iface["data"][0])
    else:
        start = id(x._ary) if hasattr(x, "_ary") else id(x)   # simulator: the host copy
    return start, start + int(np.prod(x.shape, dtype=np.int64)) * np.dtype(x.dtype).itemsize


def flat(x: Any) -> Any:
    """A 1-d view of a C-contiguous device array (kernels index arrays flat)."""
    return x if x.ndim == 1 else x.reshape(int(np.prod(x.shape, dtype=np.int64)))


def synchronize() -> None:
    from numba import cuda

    cuda.synchronize()
