"""The dot product behind the loop drivers' vector products (``backends/cpu/products.py``;
a matrix-vector product calls it per row: a row of a C-contiguous matrix is C-contiguous).

It is compiled with reassociation allowed, so LLVM vectorises the sum into several vector
accumulators added at the end, as BLAS kernels do (the rounding differs from BLAS's by a few
ULP, as BLAS builds differ among themselves). For C-contiguous operands the elements are read
with ``load`` at indices known to be in range; other layouts go through numba's general
indexing. The overload chooses by the operands' layouts while numba types the caller.
"""
from __future__ import annotations

from numba.extending import overload

from .bits import load

__all__ = ["dot_vectors"]


def dot_vectors(a, b, zero):
    """``sum(a * b)`` of two 1-d arrays of one length; ``zero`` gives the dtype."""
    raise NotImplementedError("compiled only")


@overload(dot_vectors, inline="never", jit_options={"fastmath": {"reassoc", "contract"}})
def _dot_vectors(a, b, zero):
    if a.layout == "C" and b.layout == "C":
        def contiguous(a, b, zero):
            s = zero
            for k in range(a.shape[0]):
                s += load(a, k) * load(b, k)
            return s
        return contiguous

    def strided(a, b, zero):
        s = zero
        for k in range(a.shape[0]):
            s += a[k] * b[k]
        return s
    return strided
