"""Dot products for the loop drivers' vector products (``backends/cpu/products.py``).

Each sums in four interleaved partial sums, added pairwise at the end. For C-contiguous
operands the elements are read with ``load`` at indices known to be in range, so LLVM
vectorises the loop; other layouts go through numba's general indexing (correct, scalar).
The overloads choose by the operands' layouts while numba types the caller.
"""
from __future__ import annotations

from numba.extending import overload

from .bits import flat, load

__all__ = ["dot_rows", "dot_vectors"]


def dot_vectors(a, b, zero):
    """``sum(a * b)`` of two 1-d arrays of one length; ``zero`` gives the dtype."""
    raise NotImplementedError("compiled only")


def dot_rows(a, i, b, zero):
    """``sum(a[i, :] * b)`` of a 2-d ``a`` and a 1-d ``b``."""
    raise NotImplementedError("compiled only")


@overload(dot_vectors, inline="never")
def _dot_vectors(a, b, zero):
    if a.layout == "C" and b.layout == "C":
        def contiguous(a, b, zero):
            n = a.shape[0]
            s0 = s1 = s2 = s3 = zero
            n4 = n - n % 4
            for k in range(0, n4, 4):
                s0 += load(a, k) * load(b, k)
                s1 += load(a, k + 1) * load(b, k + 1)
                s2 += load(a, k + 2) * load(b, k + 2)
                s3 += load(a, k + 3) * load(b, k + 3)
            for k in range(n4, n):
                s0 += load(a, k) * load(b, k)
            return (s0 + s1) + (s2 + s3)
        return contiguous

    def strided(a, b, zero):
        n = a.shape[0]
        s0 = s1 = s2 = s3 = zero
        n4 = n - n % 4
        for k in range(0, n4, 4):
            s0 += a[k] * b[k]
            s1 += a[k + 1] * b[k + 1]
            s2 += a[k + 2] * b[k + 2]
            s3 += a[k + 3] * b[k + 3]
        for k in range(n4, n):
            s0 += a[k] * b[k]
        return (s0 + s1) + (s2 + s3)
    return strided


@overload(dot_rows, inline="never")
def _dot_rows(a, i, b, zero):
    if a.layout == "C" and b.layout == "C":
        def contiguous(a, i, b, zero):
            n = a.shape[1]
            base = i * n
            fa = flat(a)
            s0 = s1 = s2 = s3 = zero
            n4 = n - n % 4
            for k in range(0, n4, 4):
                s0 += load(fa, base + k) * load(b, k)
                s1 += load(fa, base + k + 1) * load(b, k + 1)
                s2 += load(fa, base + k + 2) * load(b, k + 2)
                s3 += load(fa, base + k + 3) * load(b, k + 3)
            for k in range(n4, n):
                s0 += load(fa, base + k) * load(b, k)
            return (s0 + s1) + (s2 + s3)
        return contiguous

    def strided(a, i, b, zero):
        n = a.shape[1]
        s0 = s1 = s2 = s3 = zero
        n4 = n - n % 4
        for k in range(0, n4, 4):
            s0 += a[i, k] * b[k]
            s1 += a[i, k + 1] * b[k + 1]
            s2 += a[i, k + 2] * b[k + 2]
            s3 += a[i, k + 3] * b[k + 3]
        for k in range(n4, n):
            s0 += a[i, k] * b[k]
        return (s0 + s1) + (s2 + s3)
    return strided
