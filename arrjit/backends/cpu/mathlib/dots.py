"""The dot products behind the loop drivers' vector products (``backends/cpu/products.py``).

A matrix-vector product of C-contiguous operands sums eight rows at a time, each element of
the vector read once for the eight (a row of a C-contiguous matrix is C-contiguous); the rows
left over, and other layouts, are dot products of one row each.

It is compiled with reassociation allowed, so LLVM vectorises the sum into several vector
accumulators added at the end, as BLAS kernels do (the rounding differs from BLAS's by a few
ULP, as BLAS builds differ among themselves). For C-contiguous operands the elements are read
with ``load`` at indices known to be in range; other layouts go through numba's general
indexing. The overload chooses by the operands' layouts while numba types the caller; the
products themselves are functions of their own, cached on disk with the math library (an
overload compiles again in every process: 0.4 s for the eight-row product), compiled without
reference counting (``codegen.LEAF_OPTIONS``: numba would otherwise compile them with each
caller's setting).
"""
from __future__ import annotations

from numba import njit
from numba.extending import overload

from .bits import load

__all__ = ["dot_vectors", "matrix_vector"]


_PRODUCT = dict(nogil=True, cache=True, error_model="numpy", no_cfunc_wrapper=True,
                fastmath={"reassoc", "contract"}, _nrt=False)


@njit(**_PRODUCT)
def _dot_contiguous(a, b, zero):
    s = zero
    for k in range(a.shape[0]):
        s += load(a, k) * load(b, k)
    return s


@njit(**_PRODUCT)
def _dot_strided(a, b, zero):
    s = zero
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    return s


@njit(**_PRODUCT)
def _zero_rows_before(out, first, zero):
    """Zero the rows of ``out`` before ``first`` (clamped into range); the first row left."""
    first = min(max(first, 0), out.shape[0])
    for i in range(first):
        out[i] = zero
    return first


@njit(**_PRODUCT)
def _by_eight_rows(a, x, out, zero, first):
    rows, n = a.shape
    i = _zero_rows_before(out, first, zero)
    while i + 8 <= rows:
        a0, a1, a2, a3 = a[i], a[i + 1], a[i + 2], a[i + 3]
        a4, a5, a6, a7 = a[i + 4], a[i + 5], a[i + 6], a[i + 7]
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = zero
        for k in range(n):
            xk = load(x, k)
            s0 += load(a0, k) * xk
            s1 += load(a1, k) * xk
            s2 += load(a2, k) * xk
            s3 += load(a3, k) * xk
            s4 += load(a4, k) * xk
            s5 += load(a5, k) * xk
            s6 += load(a6, k) * xk
            s7 += load(a7, k) * xk
        out[i], out[i + 1], out[i + 2], out[i + 3] = s0, s1, s2, s3
        out[i + 4], out[i + 5], out[i + 6], out[i + 7] = s4, s5, s6, s7
        i += 8
    while i < rows:
        row, s = a[i], zero
        for k in range(n):
            s += load(row, k) * load(x, k)
        out[i] = s
        i += 1


@njit(**_PRODUCT)
def _by_rows(a, x, out, zero, first):
    for i in range(_zero_rows_before(out, first, zero), a.shape[0]):
        s = zero
        for k in range(a.shape[1]):
            s += a[i, k] * x[k]
        out[i] = s


def dot_vectors(a, b, zero):
    """``sum(a * b)`` of two 1-d arrays of one length; ``zero`` gives the dtype."""
    raise NotImplementedError("compiled only")


@overload(dot_vectors, inline="never")
def _dot_vectors(a, b, zero):
    product = _dot_contiguous if a.layout == "C" and b.layout == "C" else _dot_strided

    def call(a, b, zero):
        return product(a, b, zero)
    return call


def matrix_vector(a, x, out, zero, first):
    """``out[i] = sum(a[i] * x)`` for each row ``i >= first`` of the 2-d ``a``, and zero
    for the rows before; ``zero`` gives the dtype."""
    raise NotImplementedError("compiled only")


@overload(matrix_vector, inline="never")
def _matrix_vector(a, x, out, zero, first):
    product = _by_eight_rows if a.layout == "C" and x.layout == "C" else _by_rows

    def call(a, x, out, zero, first):
        product(a, x, out, zero, first)
    return call
