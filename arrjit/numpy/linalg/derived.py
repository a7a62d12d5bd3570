"""``numpy.linalg`` functions composed of the decompositions and products: ``pinv``,
``lstsq``, ``matrix_power``, ``multi_dot``, ``tensorsolve``, ``tensorinv``, and the array
API's ``cross``, ``outer``, ``trace`` and ``diagonal``. Each follows NumPy's algorithm (the
same products in the same order), so results agree with NumPy's to rounding.

>>> import numpy as np, arrjit
>>> arrjit.jit(lambda a: matrix_power(a, 3))(np.array([[1.0, 1.0], [0.0, 1.0]]))
array([[1., 3.],
       [0., 1.]])
"""
from __future__ import annotations

import operator

import numpy as np

from .. import base as anp
from .. import contractions, misc, reductions, shapes
from .decompositions import inexact, inv, solve, svd, traced


def pinv(a, rcond=None, hermitian: bool = False, *, rtol=np._NoValue):
    """``numpy.linalg.pinv``: the Moore-Penrose pseudo-inverse from the SVD, singular values
    at most ``rcond * max(s)`` dropped (``rcond`` default 1e-15, or ``rtol``; ``rtol=None``:
    ``max(M, N) * eps``)."""
    if not traced(a, rcond, None if rtol is np._NoValue else rtol):
        return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian, rtol=rtol)
    a = inexact(a, "pinv")
    if rcond is None:
        if rtol is np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return anp.zeros(a.shape[:-2] + (n, m), a.dtype)
    u, s, vt = svd(anp.conjugate(a), full_matrices=False, hermitian=hermitian)
    cutoff = anp.multiply(anp.asarray(rcond)[..., None],
                          reductions.max(s, axis=-1, keepdims=True))
    large = anp.greater(s, cutoff)
    s = anp.where(large, anp.true_divide(1, anp.where(large, s, 1)), 0)
    return contractions.matmul(anp.swapaxes(vt, -1, -2),
                               anp.multiply(s[..., None], anp.swapaxes(u, -1, -2)))


def lstsq(a, b, rcond=None):
    """``numpy.linalg.lstsq``: ``(x, residuals, rank, s)``, the least-squares solution from
    the SVD, singular values below ``rcond * max(s)`` dropped (default ``eps * max(M,
    N)``). Inside jit the residuals are always returned, one per column of ``b`` (NumPy
    returns an empty array when the rank is deficient or M <= N: a shape that would depend
    on the values), as in JAX."""
    if not traced(a, b, rcond):
        return np.linalg.lstsq(a, b, rcond=rcond)
    a = inexact(a, "lstsq")
    b = inexact(b, "lstsq", matrix=False)
    if a.ndim != 2:
        raise ValueError(f"lstsq: a must be 2-dimensional, got {a.shape}")
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = anp.astype(a, dtype), anp.astype(b, dtype)
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    m, n = a.shape
    if rcond is None:
        rcond = np.finfo(dtype).eps * max(m, n)
    u, s, vt = svd(a, full_matrices=False)
    kept = anp.greater_equal(s, anp.multiply(rcond, s[0])) if s.shape[0] else s > 0
    rank = reductions.sum(kept, dtype=np.int64)
    s_inv = anp.where(kept, anp.true_divide(1, anp.where(kept, s, 1)), 0)[:, None]
    ut_b = contractions.matmul(anp.conjugate(anp.swapaxes(u, -1, -2)), b)
    x = contractions.matmul(anp.conjugate(anp.swapaxes(vt, -1, -2)),
                            anp.multiply(s_inv, ut_b))
    misfit = anp.subtract(b, contractions.matmul(a, x))
    residuals = reductions.sum(anp.real(anp.multiply(misfit, anp.conjugate(misfit))), axis=0)
    return (x[:, 0] if vector else x), residuals, rank, s


def matrix_power(a, n: int):
    """``numpy.linalg.matrix_power``: ``a`` multiplied by itself ``n`` times (a static
    integer; negative: powers of the inverse), by NumPy's binary decomposition."""
    if not traced(a):
        return np.linalg.matrix_power(a, n)
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError("exponent must be an integer (a static Python int inside jit)") from err
    a = anp.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(f"matrix_power: the last 2 dimensions must be square, "
                                    f"got {a.shape}")
    if n == 0:
        return anp.broadcast_to(shapes.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a
    if n == 2:
        return contractions.matmul(a, a)
    if n == 3:
        return contractions.matmul(contractions.matmul(a, a), a)
    result = square_ = None
    while n > 0:
        square_ = a if square_ is None else contractions.matmul(square_, square_)
        n, bit = divmod(n, 2)
        if bit:
            result = square_ if result is None else contractions.matmul(result, square_)
    return result


def _chain_order(shapes_: list[tuple[int, int]]) -> list[list[int]]:
    """The split points of the cheapest product order (the classic dynamic program over
    the matrix chain, as ``numpy.linalg.multi_dot`` chooses it)."""
    n = len(shapes_)
    dims = [shapes_[0][0]] + [s[1] for s in shapes_]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = np.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def multi_dot(arrays, *, out=None):
    """``numpy.linalg.multi_dot``: the product of a chain of matrices in the cheapest order
    (the first and last may be vectors)."""
    if out is not None:
        raise TypeError("anp.linalg.multi_dot: out= is not supported; arrays are immutable")
    arrays = list(arrays)
    if not traced(*arrays):
        return np.linalg.multi_dot(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return contractions.dot(arrays[0], arrays[1])
    arrays = [anp.asarray(x) for x in arrays]
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = arrays[0][None, :]
    if last_vector:
        arrays[-1] = arrays[-1][:, None]
    split = _chain_order([tuple(x.shape) for x in arrays])

    def product(i: int, j: int):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return contractions.dot(product(i, k), product(k + 1, j))

    result = product(0, len(arrays) - 1)
    if first_vector and last_vector:
        return result[0, 0]
    if first_vector or last_vector:
        return result[0] if first_vector else result[:, 0]
    return result


def tensorsolve(a, b, axes=None):
    """``numpy.linalg.tensorsolve``: ``x`` with ``tensordot(a, x, x.ndim) == b``."""
    if not traced(a, b):
        return np.linalg.tensorsolve(a, b, axes)
    a = inexact(a, "tensorsolve", matrix=False)
    if axes is not None:
        moved = [ax for ax in range(a.ndim) if ax not in [operator.index(k) % a.ndim
                                                             for k in axes]]
        a = anp.transpose(a, moved + [operator.index(k) % a.ndim for k in axes])
    b = anp.asarray(b)
    x_shape = a.shape[b.ndim:]
    size = int(np.prod(x_shape, dtype=np.int64))
    matrix = anp.reshape(a, (-1, size))
    return anp.reshape(solve(matrix, anp.ravel(b)), x_shape)


def tensorinv(a, ind: int = 2):
    """``numpy.linalg.tensorinv``: the inverse of ``a`` for ``tensordot`` over ``ind``
    axes."""
    if not traced(a):
        return np.linalg.tensorinv(a, ind)
    a = anp.asarray(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = int(np.prod(a.shape[:ind], dtype=np.int64))
    return anp.reshape(inv(anp.reshape(a, (rows, -1))), out_shape)


def cross(x1, x2, /, *, axis: int = -1):
    """The array API's ``cross``: the cross product of 3-vectors along ``axis``."""
    if not traced(x1, x2):
        return np.linalg.cross(x1, x2, axis=axis)
    a1, a2 = anp.asarray(x1), anp.asarray(x2)
    if a1.shape[axis] != 3 or a2.shape[axis] != 3:
        raise ValueError(f"cross: both inputs must have 3 elements along axis {axis}, got "
                         f"shapes {a1.shape} and {a2.shape}")
    return misc.cross(a1, a2, axis=axis)


def outer(x1, x2, /):
    """The array API's ``outer``: the outer product of two vectors."""
    if not traced(x1, x2):
        return np.linalg.outer(x1, x2)
    a1, a2 = anp.asarray(x1), anp.asarray(x2)
    if a1.ndim != 1 or a2.ndim != 1:
        raise ValueError(f"outer: inputs must be vectors, got shapes {a1.shape} and {a2.shape}")
    return contractions.outer(a1, a2)


def trace(x, /, *, offset: int = 0, dtype=None):
    """The array API's ``trace``: over the last two axes."""
    if not traced(x):
        return np.linalg.trace(x, offset=offset, dtype=dtype)
    return misc.trace(x, offset, -2, -1, dtype=dtype)


def diagonal(x, /, *, offset: int = 0):
    """The array API's ``diagonal``: of each matrix in the last two axes."""
    if not traced(x):
        return np.linalg.diagonal(x, offset=offset)
    return shapes.diagonal(x, offset, -2, -1)

