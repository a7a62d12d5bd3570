"""Norms and the quantities built on singular values: ``norm``, ``vector_norm``,
``matrix_norm``, ``cond``, ``matrix_rank``; compositions that follow ``numpy.linalg``'s
definitions term for term (an element-wise norm fuses into one reduction kernel).

>>> import numpy as np, arrjit
>>> arrjit.jit(lambda x: norm(x, axis=1))(np.array([[3.0, 4.0], [6.0, 8.0]]))
array([ 5., 10.])
>>> arrjit.jit(lambda x: norm(x, 2))(np.diag([3.0, 1.0]))
array(3.)
"""
from __future__ import annotations

import operator

import numpy as np

from .. import base as anp
from .. import reductions
from .decompositions import inexact, inv, square, svd, traced


def _axes(axis, ndim: int) -> tuple[int, ...]:
    items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(anp._normalize_axis(operator.index(ax), ndim, "axis") for ax in items)


def _magnitude(x):
    return anp.absolute(x)


def _vector_norm(x, ord, axis: tuple[int, ...], keepdims: bool):
    if ord is None or ord == 2:
        if x.dtype.kind == "c":
            squares = anp.add(anp.square(anp.real(x)), anp.square(anp.imag(x)))
        else:
            squares = anp.multiply(x, x)
        return anp.sqrt(reductions.sum(squares, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return reductions.max(_magnitude(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return reductions.min(_magnitude(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = anp.astype(anp.not_equal(x, 0), anp.real(x).dtype)
        return reductions.sum(nonzero, axis=axis, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(_magnitude(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    powered = anp.power(_magnitude(x), ord)
    return anp.power(reductions.sum(powered, axis=axis, keepdims=keepdims), 1.0 / ord)


def _matrix_norm(x, ord, row: int, col: int, keepdims: bool):
    if ord in (2, -2, "nuc"):
        moved = anp.moveaxis(x, (row, col), (-2, -1))
        s = svd(moved, compute_uv=False)
        result = {2: reductions.max, -2: reductions.min, "nuc": reductions.sum}[ord](s, axis=-1)
    elif ord in (1, -1, np.inf, -np.inf):
        summed_axis, kept_axis = (row, col) if ord in (1, -1) else (col, row)
        sums = reductions.sum(_magnitude(x), axis=summed_axis)
        if kept_axis > summed_axis:
            kept_axis -= 1
        pick = reductions.max if ord in (1, np.inf) else reductions.min
        result = pick(sums, axis=kept_axis)
    elif ord in (None, "fro", "f"):
        return _vector_norm(x, None, (row, col), keepdims)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        for ax in sorted((row, col)):
            result = anp.expand_dims(result, ax)
    return result


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """``numpy.linalg.norm``: a vector norm over one axis, a matrix norm over two (``'fro'``,
    ``'nuc'``, ``1``, ``-1``, ``2``, ``-2``, ``inf``, ``-inf``); with ``axis=None`` the 2-norm
    of the flattened array (``ord=None``), or the ``ord`` norm of a 1-d or 2-d array."""
    if not traced(x):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    x = inexact(x, "norm", matrix=False)
    if axis is None:
        if ord is None:
            result = _vector_norm(anp.ravel(x), None, (0,), False)
            return anp.reshape(result, (1,) * x.ndim) if keepdims else result
        if x.ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(x.ndim))
    axes = _axes(axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, axes[0], axes[1], keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """The array API's ``vector_norm``: the ``ord`` norm over ``axis`` (all axes: None)."""
    if not traced(x):
        return np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    x = inexact(x, "vector_norm", matrix=False)
    axes = tuple(range(x.ndim)) if axis is None else _axes(axis, x.ndim)
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """The array API's ``matrix_norm``: the ``ord`` norm of each matrix in the last two
    axes."""
    if not traced(x):
        return np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
    x = inexact(x, "matrix_norm")
    return _matrix_norm(x, ord, x.ndim - 2, x.ndim - 1, keepdims)


def cond(x, p=None):
    """``numpy.linalg.cond``: ``s_max / s_min`` (``p`` None, 2 or -2: its inverse), or
    ``norm(x, p) * norm(inv(x), p)``; a singular matrix's condition number is ``inf``."""
    if not traced(x):
        return np.linalg.cond(x, p)
    x = inexact(x, "cond")
    if p is None or p in (2, -2):
        s = svd(x, compute_uv=False)
        first, last = s[..., 0], s[..., -1]
        r = anp.true_divide(last, first) if p == -2 else anp.true_divide(first, last)
    else:
        x = square(x, "cond")
        r = anp.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
    finite_input = anp.logical_not(reductions.any(anp.isnan(x), axis=(-2, -1)))
    return anp.where(anp.logical_and(anp.isnan(r), finite_input), np.inf, r)


def matrix_rank(A, tol=None, hermitian: bool = False, *, rtol=None):
    """``numpy.linalg.matrix_rank``: the number of singular values above ``tol`` (default:
    ``max(s) * max(M, N) * eps``, or ``rtol`` times ``max(s)``)."""
    if not traced(A, tol, rtol):
        return np.linalg.matrix_rank(A, tol=tol, hermitian=hermitian, rtol=rtol)
    A = inexact(A, "matrix_rank", matrix=False)
    if A.ndim < 2:
        return anp.astype(reductions.any(anp.not_equal(A, 0)), np.int64)
    s = svd(A, compute_uv=False, hermitian=hermitian)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * np.finfo(s.dtype).eps
        else:
            rtol = anp.asarray(rtol)[..., None]
        tol = anp.multiply(reductions.max(s, axis=-1, keepdims=True), rtol)
    else:
        tol = anp.asarray(tol)[..., None]
    return reductions.count_nonzero(anp.greater(s, tol), axis=-1)
