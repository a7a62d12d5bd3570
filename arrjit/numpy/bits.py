"""Bits of ``arrjit.numpy``: ``packbits`` and ``unpackbits`` (shifts and masks of uint8,
fused).

>>> import numpy as np, arrjit
>>> arrjit.jit(unpackbits)(np.array([5], np.uint8))
array([0, 0, 0, 0, 0, 1, 0, 1], dtype=uint8)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import base as anp
from . import shapes
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _bit_weights(bitorder: str) -> np.ndarray:
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    return shifts.astype(np.uint8)


def unpackbits(a, axis=None, count=None, bitorder: str = "big"):
    """``numpy.unpackbits``: each uint8 as its 8 bits along ``axis`` (flattened: None)."""
    if not _traced(a):
        return np.unpackbits(a, axis=axis, count=count, bitorder=bitorder)
    a = anp.asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"Expected an input array of unsigned byte data type, got {a.dtype}")
    if axis is None:
        a, axis = anp.ravel(a), 0
    axis = anp._normalize_axis(axis, a.ndim, "axis")
    moved = anp.moveaxis(a, axis, -1)
    bits = anp.bitwise_and(anp.right_shift(moved[..., None], _bit_weights(bitorder)),
                           np.uint8(1))
    bits = anp.reshape(bits, tuple(moved.shape[:-1]) + (moved.shape[-1] * 8,))
    if count is not None:
        bits = bits[..., :count] if count >= 0 else bits[..., :bits.shape[-1] + count]
    return anp.moveaxis(bits, -1, axis)


def packbits(a, axis=None, bitorder: str = "big"):
    """``numpy.packbits``: groups of 8 truth values along ``axis`` as uint8 (zero-padded)."""
    if not _traced(a):
        return np.packbits(a, axis=axis, bitorder=bitorder)
    a = anp.asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if axis is None:
        a, axis = anp.ravel(a), 0
    axis = anp._normalize_axis(axis, a.ndim, "axis")
    moved = anp.astype(anp.not_equal(anp.moveaxis(a, axis, -1), 0), np.uint8)
    n = moved.shape[-1]
    padded = -(-n // 8) * 8
    if padded != n:
        moved = shapes.concatenate([moved, anp.zeros(tuple(moved.shape[:-1]) + (padded - n,),
                                                     np.uint8)], axis=-1)
    groups = anp.reshape(moved, tuple(moved.shape[:-1]) + (padded // 8, 8))
    packed = anp.left_shift(groups, _bit_weights(bitorder))
    total = groups[..., 0] * 0
    for k in range(8):
        total = anp.bitwise_or(total, packed[..., k])
    return anp.moveaxis(anp.astype(total, np.uint8), -1, axis)
