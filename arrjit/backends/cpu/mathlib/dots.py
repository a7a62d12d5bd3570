"""The dot product behind the loop drivers' vector products (``backends/cpu/products.py``;
a matrix-vector product calls it per row: a row of a C-contiguous matrix is C-contiguous).

It sums in four interleaved partial sums, added pairwise at the end. For C-contiguous
operands the elements are read with ``load`` at indices known to be in range, so LLVM
vectorises the loop; other layouts go through numba's general indexing (correct, scalar).
The overload chooses by the operands' layouts while numba types the caller.
"""
from __future__ import annotations

from numba.extending import overload

from .bits import load

__all__ = ["dot_vectors"]


def dot_vectors(a, b, zero):
    """``sum(a * b)`` of two 1-d arrays of one length; ``zero`` gives the dtype."""
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
