"""Devices. This build compiles for the CPU; results are ``numpy.ndarray``.

>>> import arrjit
>>> arrjit.devices()
['cpu']
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .tree import tree_map


def devices() -> list[str]:
    """The devices arrjit can compile for in this process."""
    return ["cpu"]


def _check(device: str | None) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"device {device!r} is not available; available: {devices()}")


def device_put(x: Any, device: str | None = None) -> Any:
    """Place a pytree of arrays on ``device`` (on the CPU: as NumPy arrays, no copy)."""
    _check(device)
    return tree_map(np.asarray, x)


def device_get(x: Any) -> Any:
    """Bring a pytree of arrays to the host as NumPy arrays."""
    return tree_map(np.asarray, x)


def block_until_ready(x: Any) -> Any:
    """Wait for pending work on ``x``; CPU calls return finished results, so this returns x."""
    return x
