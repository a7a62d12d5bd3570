"""Matmul on the device: NumPy's ``matmul`` (batch broadcasting, 1-d operands) as a tiled
kernel. Each block computes a TILE x TILE tile of one batch entry's result, stepping along
the contracted axis through TILE x TILE tiles of both operands in shared memory; operands are
read in their own dtypes and multiplied in the result's (bool: counted in int64), as NumPy
does. TILE is 16 on a GPU (256 threads), 4 on the simulator.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import cuda      # a module global: the simulator swaps it inside kernels
from numba.np.numpy_support import from_dtype

from .device import flat, simulated

MAX_GRID_Z = 65535


@functools.lru_cache(maxsize=None)
def tiled_kernel(tile: int, out_dtype: np.dtype) -> Any:
    """The kernel ``matmul(a, b, c, a_offsets, b_offsets, m, n, k)`` for ``out_dtype``: flat
    C-order operands, ``c[batch, m, n]``, per-batch element offsets into ``a`` and ``b``."""
    acc_dtype = np.dtype(np.int64) if out_dtype == np.bool_ else out_dtype
    cell = from_dtype(acc_dtype)
    zero = acc_dtype.type(0)

    def matmul(a, b, c, a_offsets, b_offsets, m, n, k):
        sa = cuda.shared.array((tile, tile), cell)
        sb = cuda.shared.array((tile, tile), cell)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        batch = cuda.blockIdx.z
        while batch < a_offsets.size:
            ao, bo = a_offsets[batch], b_offsets[batch]
            acc = zero
            for t in range((k + tile - 1) // tile):
                ka, kb = t * tile + tx, t * tile + ty
                sa[ty, tx] = a[ao + row * k + ka] if row < m and ka < k else zero
                sb[ty, tx] = b[bo + kb * n + col] if kb < k and col < n else zero
                cuda.syncthreads()
                for q in range(tile):
                    acc += sa[ty, q] * sb[q, tx]
                cuda.syncthreads()
            if row < m and col < n:
                c[(batch * m + row) * n + col] = acc
            batch += cuda.gridDim.z

    return cuda.jit(matmul)


def tile_size() -> int:
    return 4 if simulated() else 16


@functools.lru_cache(maxsize=256)
def _offsets(a_batch: tuple, b_batch: tuple, a_block: int, b_block: int) -> tuple:
    """Per entry of the broadcast batch: the element offset of its matrix in each operand."""
    batch = np.broadcast_shapes(a_batch, b_batch)

    def entry_offsets(own: tuple, block: int) -> np.ndarray:
        own_index = np.arange(int(np.prod(own, dtype=np.int64)), dtype=np.int64).reshape(own)
        return np.ascontiguousarray(np.broadcast_to(own_index, batch).ravel() * block)

    return (batch, cuda.to_device(entry_offsets(a_batch, a_block)),
            cuda.to_device(entry_offsets(b_batch, b_block)))


def matmul(a: Any, b: Any, out_dtype: np.dtype) -> Any:
    """``numpy.matmul(a, b)`` of two C-contiguous device arrays, as ``out_dtype``."""

    a_shape = tuple(a.shape) if a.ndim > 1 else (1,) + tuple(a.shape)
    b_shape = tuple(b.shape) if b.ndim > 1 else tuple(b.shape) + (1,)
    m, k = a_shape[-2:]
    n = b_shape[-1]
    batch, a_offsets, b_offsets = _offsets(a_shape[:-2], b_shape[:-2], m * k, k * n)
    out = cuda.device_array(batch + (m, n), out_dtype)
    if out.size:
        tile = tile_size()
        grid = (-(-n // tile), -(-m // tile), max(1, min(MAX_GRID_Z, int(np.prod(batch)))))
        tiled_kernel(tile, np.dtype(out_dtype))[grid, (tile, tile)](
            flat(a), flat(b), flat(out), a_offsets, b_offsets, m, n, k)
    shape = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
    return out.reshape(shape) if shape != tuple(out.shape) else out
