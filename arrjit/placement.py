"""Devices and placement: the backends that can run in this process (``backends``). On the
CPU, results are ``numpy.ndarray``; on CUDA, numba-cuda device arrays. (Not named
``devices``: importing such a module would shadow the ``arrjit.devices`` function.)

>>> "cpu" in devices()
True
>>> device_get({"x": 1.5})
{'x': array(1.5)}
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .backends import _loaded, available, get_backend
from .core.foreign import device_info
from .core.tree import tree_map
from .signature import as_array


def devices() -> list[str]:
    """The devices arrjit can compile for in this process (``'cpu'``, and ``'cuda'`` where
    a GPU or numba-cuda's simulator is usable)."""
    return available()


def device_put(x: Any, device: str | None = None) -> Any:
    """Place a pytree of arrays on ``device`` (default: the ``default_device`` option). On the
    CPU: NumPy arrays, no copy for C-contiguous ones; on CUDA: device arrays, copied from the
    host once (CUDA arrays are taken as they are)."""
    from .config import config

    return tree_map(get_backend(device or config.default_device).to_device, x)


def device_get(x: Any) -> Any:
    """Bring a pytree of arrays to the host as NumPy arrays (device arrays are copied)."""
    return tree_map(lambda leaf: as_array(leaf) if device_info(leaf) is not None
                    else np.asarray(leaf), x)


def block_until_ready(x: Any) -> Any:
    """Wait until the work that computes ``x`` has finished; returns ``x``. CPU calls return
    finished results; CUDA launches are asynchronous, so this waits for the device."""
    leaves: list = []
    tree_map(leaves.append, x)
    if any(device_info(leaf) is not None for leaf in leaves) and "cuda" in _loaded:
        _loaded["cuda"].synchronize()
    return x
