"""Devices and placement: the backends registered in this build (``backends.REGISTRY``).
On the CPU, results are ``numpy.ndarray``. (Not named ``devices``: importing such a module
would shadow the ``arrjit.devices`` function.)

>>> devices()
['cpu']
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .backends import available, get_backend
from .core.tree import tree_map


def devices() -> list[str]:
    """The devices arrjit can compile for in this process."""
    return available()


def device_put(x: Any, device: str | None = None) -> Any:
    """Place a pytree of arrays on ``device`` (on the CPU: as NumPy arrays, no copy)."""
    return tree_map(get_backend(device or "cpu").to_device, x)


def device_get(x: Any) -> Any:
    """Bring a pytree of arrays to the host as NumPy arrays."""
    return tree_map(np.asarray, x)


def block_until_ready(x: Any) -> Any:
    """Wait for pending work on ``x``; CPU calls return finished results, so this returns x."""
    return x
