"""Arrays that live on a device, described by the CUDA array interface (numba-cuda, CuPy,
PyTorch) or numba-cuda's simulator arrays: their shape and dtype without touching the
device, so signatures can key on them and no module outside the CUDA backend imports it.

>>> import numpy as np
>>> device_info(np.zeros(3)) is None
True
"""
from __future__ import annotations

from typing import Any

import numpy as np


def device_info(x: Any) -> tuple[tuple[int, ...], np.dtype, bool] | None:
    """(shape, dtype, C-contiguous) of a CUDA array (anything with
    ``__cuda_array_interface__``: numba-cuda, CuPy, PyTorch; or a simulator array), else
    None."""
    iface = getattr(x, "__cuda_array_interface__", None)
    if iface is not None:
        shape = tuple(int(n) for n in iface["shape"])
        dtype = np.dtype(iface["typestr"])
        strides = iface.get("strides")
        contiguous = strides is None or tuple(strides) == _c_strides(shape, dtype.itemsize)
        return shape, dtype, contiguous
    if is_numba_device_array(x):   # the simulator's arrays carry no interface
        return tuple(x.shape), np.dtype(x.dtype), bool(x.is_c_contiguous())
    return None


def is_numba_device_array(x: Any) -> bool:
    return all(hasattr(x, a) for a in ("copy_to_host", "shape", "dtype", "is_c_contiguous"))


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


