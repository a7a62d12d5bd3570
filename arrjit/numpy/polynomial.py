"""The polynomial functions of ``numpy`` (coefficients highest degree first): ``polyval``
(Horner, as NumPy evaluates), ``polyadd``, ``polysub``, ``polymul`` (a convolution),
``polyder``, ``polyint``, ``polyfit`` (scaled least squares), ``poly``, ``roots`` and
``vander``. Degrees and lengths are static; coefficients may be traced.

>>> import numpy as np, arrjit
>>> arrjit.jit(polyval)(np.array([1.0, 0.0, -2.0]), np.array([0.0, 2.0]))
array([-2.,  2.])
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import base as anp
from . import linalg, reductions, shapes, signal
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def polyval(p, x):
    """``numpy.polyval``: ``p[0] x**(n-1) + ... + p[n-1]`` by Horner's scheme."""
    if not _traced(p, x):
        return np.polyval(p, x)
    p = anp.asarray(p)
    x = anp.asarray(x)
    dtype = np.result_type(p.dtype, x.dtype)
    y = anp.zeros(x.shape, dtype)
    for k in range(p.shape[0]):
        y = anp.add(anp.multiply(y, x), p[k])
    return y


def _padded(a, n: int):
    a = anp.ravel(anp.asarray(a))
    return shapes.concatenate([anp.zeros((n - a.shape[0],), a.dtype), a]) if a.shape[0] < n \
        else a


def polyadd(a1, a2):
    """``numpy.polyadd``: the sum of two polynomials."""
    if not _traced(a1, a2):
        return np.polyadd(a1, a2)
    n = max(anp.size(a1), anp.size(a2))
    return anp.add(_padded(a1, n), _padded(a2, n))


def polysub(a1, a2):
    """``numpy.polysub``: the difference of two polynomials."""
    if not _traced(a1, a2):
        return np.polysub(a1, a2)
    n = max(anp.size(a1), anp.size(a2))
    return anp.subtract(_padded(a1, n), _padded(a2, n))


def polymul(a1, a2):
    """``numpy.polymul``: the product of two polynomials (a convolution)."""
    if not _traced(a1, a2):
        return np.polymul(a1, a2)
    return signal.convolve(anp.ravel(anp.asarray(a1)), anp.ravel(anp.asarray(a2)))


def polyder(p, m: int = 1):
    """``numpy.polyder``: the ``m``-th derivative."""
    if not _traced(p):
        return np.polyder(p, m)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = anp.ravel(anp.asarray(p))
    for _ in range(m):
        n = p.shape[0] - 1
        p = anp.multiply(p[:-1], np.arange(n, 0, -1)) if n > 0 else anp.zeros((1,), p.dtype)
    return p


def polyint(p, m: int = 1, k=None):
    """``numpy.polyint``: the ``m``-th antiderivative, integration constants ``k``."""
    if not _traced(p, k):
        return np.polyint(p, m, k)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    constants = [0] * m if k is None else (list(k) if np.ndim(k) else [k] * m)
    if len(constants) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = anp.ravel(anp.asarray(p))
    p = anp.astype(p, np.result_type(p.dtype, np.float64))
    for j in range(m):
        scaled = anp.true_divide(p, np.arange(p.shape[0], 0, -1))
        p = shapes.concatenate([scaled, anp.reshape(anp.asarray(constants[j], p.dtype), (1,))])
    return p


def vander(x, N: int | None = None, increasing: bool = False):
    """``numpy.vander``: columns of powers of ``x`` (by repeated multiplication, as NumPy)."""
    if not _traced(x):
        return np.vander(x, N, increasing)
    x = anp.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    x = anp.astype(x, np.promote_types(x.dtype, np.int_))     # NumPy's table dtype
    n = x.shape[0] if N is None else operator.index(N)
    if n == 0:
        return anp.zeros((x.shape[0], 0), x.dtype)
    ones = anp.ones((x.shape[0], 1), x.dtype)
    powers = reductions.cumprod(anp.broadcast_to(x[:, None], (x.shape[0], n - 1)), axis=1) \
        if n > 1 else ones[:, :0]
    table = shapes.concatenate([ones, powers], axis=1)
    return table if increasing else shapes.flip(table, axis=1)


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov: bool = False):
    """``numpy.polyfit``: least-squares polynomial coefficients of degree ``deg`` (the
    Vandermonde columns scaled to unit norm first, as NumPy does). Inside jit ``full`` and
    ``cov`` are not supported (their extra results depend on the values)."""
    if not _traced(x, y, w):
        return np.polyfit(x, y, deg, rcond, full, w, cov)
    if full or cov:
        raise NotImplementedError("anp.polyfit(full=True or cov=True) is supported outside "
                                  "jit only")
    order = operator.index(deg) + 1
    x = anp.asarray(x)
    y = anp.asarray(y)
    x = anp.astype(x, np.result_type(x.dtype, np.float64))
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = anp.asarray(w)
        lhs = anp.multiply(lhs, w[:, None])
        rhs = anp.multiply(rhs, w if rhs.ndim == 1 else w[:, None])
    scale = anp.sqrt(reductions.sum(anp.multiply(lhs, lhs), axis=0))
    lhs = anp.true_divide(lhs, scale)
    c = linalg.lstsq(lhs, rhs, rcond)[0]
    return anp.transpose(anp.true_divide(anp.transpose(c), scale))


def poly(seq_of_zeros):
    """``numpy.poly``: the coefficients of the monic polynomial with these roots (of a
    square matrix: its characteristic polynomial). Inside jit complex roots give complex
    coefficients (NumPy returns real ones when the roots pair up as conjugates)."""
    if not _traced(seq_of_zeros):
        return np.poly(seq_of_zeros)
    roots_ = anp.asarray(seq_of_zeros)
    if roots_.ndim == 2 and roots_.shape[0] == roots_.shape[1] and roots_.shape[0] != 0:
        roots_ = linalg.eigvals(roots_)
    elif roots_.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if roots_.dtype.kind in "biu":
        roots_ = anp.astype(roots_, np.float64)
    a = anp.ones((1,), roots_.dtype)
    for k in range(roots_.shape[0]):
        a = signal.convolve(a, shapes.concatenate([anp.ones((1,), roots_.dtype),
                                                   anp.reshape(-roots_[k], (1,))]))
    return a


def roots(p, *, strip_zeros: bool = True):
    """``numpy.roots``: the eigenvalues of the companion matrix. NumPy strips leading and
    trailing zero coefficients (a shape that depends on the values): inside jit pass
    ``strip_zeros=False`` (as in ``jax.numpy``); the roots are then complex."""
    if not _traced(p):
        return np.roots(p)
    if strip_zeros:
        raise ValueError("anp.roots of traced coefficients: stripping zeros depends on the "
                         "values; pass strip_zeros=False (the leading coefficient must then "
                         "be nonzero)")
    p = anp.ravel(anp.asarray(p))
    n = p.shape[0] - 1
    if n < 1:
        return anp.zeros((0,), np.complex128)
    p = anp.astype(p, np.result_type(p.dtype, np.float64))
    first_row = anp.true_divide(anp.negative(p[1:]), p[0])
    companion = shapes.concatenate([anp.reshape(first_row, (1, n)),
                                    anp.asarray(np.eye(n - 1, n, dtype=p.dtype))], axis=0)
    return linalg.eigvals(companion)


def polydiv(u, v):
    """``numpy.polydiv``: quotient and remainder of polynomial division (long division, as
    NumPy does it; the lengths are static)."""
    if not _traced(u, v):
        return np.polydiv(u, v)
    u = anp.ravel(anp.asarray(u))
    v = anp.ravel(anp.asarray(v))
    dtype = np.result_type(u.dtype, v.dtype, np.float64)
    u, v = anp.astype(u, dtype), anp.astype(v, dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = anp.true_divide(1.0, v[0])
    quotient = anp.zeros((max(m - n + 1, 1),), dtype)
    remainder = u
    for k in range(m - n + 1):
        d = anp.multiply(scale, remainder[k])
        quotient = quotient.at[k].set(d)
        remainder = remainder.at[k:k + n + 1].add(anp.negative(anp.multiply(d, v)))
    # NumPy drops the leading (now zero) coefficients of the remainder
    remainder = remainder[max(m - n + 1, 0):] if m >= n else remainder
    return quotient, remainder
