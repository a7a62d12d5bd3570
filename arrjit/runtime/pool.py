"""Pooled host buffers for the arrays a plan allocates: its outputs and intermediates.

A fresh large array costs more than the kernel that fills it: its pages are mapped on first
touch, one fault per page, and the allocator hands them back to the kernel at ``free``. The
pool keeps blocks of memory in size classes and lends one per array; the lent array's base is a
``Lease`` that gives the block back when the last array or view of it dies, so ``y = f(x)``
called in a loop reuses warm pages and a plan's intermediates keep theirs between calls.

* Arrays under ``MIN_POOLED_BYTES`` come from ``np.empty``: small blocks are reused by
  ``malloc`` itself, and a lease costs about a microsecond. A lent array starts on a
  cache line (``ALIGNMENT``).
* A block is lent only while nothing else holds it: a ``Lease`` is referenced by every array
  that sees the memory (NumPy stops collapsing a view's base at a non-array), and the block goes
  back only from ``Lease.__del__``.
* The blocks kept free are capped by ``config.pool_max_size`` (a block over the cap is freed);
  ``clear()`` (also ``arrjit.clear_caches()``) frees them all.

>>> pool = BufferPool()
>>> a = pool.empty((512, 512), np.dtype(np.float64))
>>> a.shape, a.dtype, pool.lent
((512, 512), dtype('float64'), 1)
>>> address = a.ctypes.data
>>> del a
>>> pool.lent, pool.held_bytes()
(0, 2097152)
>>> pool.empty((1024, 256), np.dtype(np.float64)).ctypes.data == address
True
"""
from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..config import config

MIN_POOLED_BYTES = 1 << 18
# Lent arrays start at a multiple of this many bytes (a cache line, the widest vector): a
# large block from ``malloc`` starts 16 bytes into one, where BLAS's matrix-vector product
# and a kernel's vector loads split lines.
ALIGNMENT = 64
SUBCLASSES_BITS = 3   # classes per doubling of size: 2**(SUBCLASSES_BITS - 1)
PAGE_BITS = 12


def size_class(nbytes: int) -> int:
    """The block size that serves ``nbytes``: rounded up to a multiple of a quarter of the
    power of two below it (at most a quarter more), and to whole pages.

    >>> size_class(1 << 20), size_class((1 << 20) + 1)
    (1048576, 1310720)
    """
    shift = max(nbytes.bit_length() - SUBCLASSES_BITS, PAGE_BITS)
    return -(-nbytes >> shift) << shift


class Lease:
    """The base object of one lent array: exposes the block as the array's memory
    (``__array_interface__``) and gives it back to its pool when it dies."""

    __slots__ = ("pool", "size", "block", "__array_interface__")

    def __init__(self, pool: "BufferPool", size: int, block: np.ndarray,
                 interface: dict[str, Any]):
        self.pool, self.size, self.block = pool, size, block
        self.__array_interface__ = interface

    def __del__(self) -> None:
        self.pool.give_back(self.size, self.block)


class BufferPool:
    """Free blocks by size class, and a count of the arrays lent now."""

    def __init__(self) -> None:
        self.free: dict[int, list[np.ndarray]] = {}
        self.lent = 0         # arrays lent now
        self.allocated = 0    # blocks allocated so far (the rest were reused)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialised C-contiguous array, as ``np.empty(shape, dtype)``."""
        nbytes = dtype.itemsize
        for n in shape:
            nbytes *= n
        if nbytes < MIN_POOLED_BYTES or dtype.hasobject:
            return np.empty(shape, dtype)
        size = size_class(nbytes)
        try:
            block = self.free[size].pop()
        except (KeyError, IndexError):
            block = np.empty(size + ALIGNMENT, np.uint8)
            self.allocated += 1
        start = block.ctypes.data
        interface = {"shape": tuple(shape), "typestr": dtype.str, "version": 3,
                     "data": (start + _to_line(start), False)}
        if dtype.fields is not None or dtype.subdtype is not None:
            interface["descr"] = dtype.descr
        self.lent += 1
        return np.asarray(Lease(self, size, block, interface))

    def give_back(self, size: int, block: np.ndarray) -> None:
        self.lent -= 1
        if self.held_bytes() + size <= config.pool_max_size:
            self.free.setdefault(size, []).append(block)

    def held_bytes(self) -> int:
        """Bytes of the free blocks kept for reuse."""
        return sum(size * len(blocks) for size, blocks in list(self.free.items()))

    def clear(self) -> None:
        """Free every block kept for reuse."""
        self.free = {}


_pool = BufferPool()


def pool() -> BufferPool:
    """The process's buffer pool."""
    return _pool


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` from the process's pool."""
    return _pool.empty(shape, dtype)


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` starting on a cache line (``ALIGNMENT``), not pooled: for
    buffers kept and reused by their owner.

    >>> aligned_empty((3, 5), np.dtype(np.float32)).ctypes.data % ALIGNMENT
    0
    """
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize * math.prod(shape)
    block = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = _to_line(block.ctypes.data)
    return block[start:start + nbytes].view(dtype).reshape(shape)


def line_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` starting on a cache line when it spans a page or more (lent
    from the pool from ``MIN_POOLED_BYTES``, else ``aligned_empty``); a smaller one from
    ``np.empty``, where lining it up would cost more than filling it.

    >>> line_empty((64, 8), np.dtype(np.float64)).ctypes.data % ALIGNMENT
    0
    """
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize * math.prod(shape)
    if nbytes >= MIN_POOLED_BYTES:
        return _pool.empty(shape, dtype)
    if nbytes >= 1 << PAGE_BITS:
        return aligned_empty(shape, dtype)
    return np.empty(shape, dtype)


def line_copy(array: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``array`` in a buffer of ``line_empty``."""
    if array.nbytes < 1 << PAGE_BITS:
        return np.array(array)
    out = line_empty(array.shape, array.dtype)
    np.copyto(out, array)
    return out


def _to_line(address: int) -> int:
    """Bytes from ``address`` to the next multiple of ``ALIGNMENT`` (0 on one)."""
    return -address % ALIGNMENT


def _forget_after_fork() -> None:
    _pool.clear()   # a child's copies of the free blocks are pages it has not touched


os.register_at_fork(after_in_child=_forget_after_fork)
