"""The factorizations and solvers of ``numpy.linalg``, one primitive each (NumPy's LAPACK,
called as a library step between fused kernels), batched over leading axes.

Integer and boolean matrices are computed in float64, as NumPy does. Outside jit every
function is NumPy's own.

>>> import numpy as np, arrjit
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> arrjit.jit(solve)(a, np.array([2.0, 1.0]))
array([0.5, 0. ])
>>> arrjit.jit(lambda a: cholesky(a) @ cholesky(a).T)(a)
array([[4., 2.],
       [2., 3.]])
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import base as anp
from .. import shapes
from ...core import primitives as p
from ...core.ir import Op
from ...core.trace import Tracer

LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


def traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def inexact(a: Any, what: str, matrix: bool = True) -> Any:
    """``a`` as an array of the dtype NumPy computes it in (float64 for integers and bools),
    checked to hold matrices in its last two axes."""
    a = anp.asarray(a)
    if a.dtype.kind not in "fc":
        a = anp.astype(a, np.float64)
    if matrix and a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional (anp.linalg.{what})")
    return a


def square(a: Any, what: str) -> Any:
    a = inexact(a, what)
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"Last 2 dimensions of the array must be square (anp.linalg.{what} "
                          f"got {a.shape})")
    return a


def solve(a, b):
    """``numpy.linalg.solve``: ``x`` with ``a @ x == b``; ``b`` is a vector when it is 1-d
    and a stack of matrices otherwise (NumPy 2's rule). A singular ``a`` raises
    ``LinAlgError``, inside jit too."""
    if not traced(a, b):
        return np.linalg.solve(a, b)
    a = square(a, "solve")
    b = inexact(b, "solve", matrix=False)
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = anp.astype(a, dtype), anp.astype(b, dtype)
    if (b.ndim == 1 and b.shape[0] != a.shape[-1]) or (b.ndim > 1 and
                                                       b.shape[-2] != a.shape[-1]):
        raise ValueError(f"solve: b of shape {b.shape} does not match a of shape {a.shape}")
    return p.bind_results(Op.SOLVE, (a, b), None)


def inv(a):
    """``numpy.linalg.inv``."""
    if not traced(a):
        return np.linalg.inv(a)
    return p.bind_results(Op.INV, (square(a, "inv"),), None)


def det(a):
    """``numpy.linalg.det`` (through LU)."""
    if not traced(a):
        return np.linalg.det(a)
    return p.bind_results(Op.DET, (square(a, "det"),), None)


def slogdet(a):
    """``numpy.linalg.slogdet``: ``(sign, logabsdet)`` with ``det = sign * exp(logabsdet)``."""
    if not traced(a):
        return np.linalg.slogdet(a)
    return SlogdetResult(*p.bind_results(Op.SLOGDET, (square(a, "slogdet"),), None))


def cholesky(a, /, *, upper: bool = False):
    """``numpy.linalg.cholesky``: the lower (``upper``: upper) triangular factor of a
    Hermitian positive-definite matrix; only that triangle of ``a`` is read."""
    if not traced(a):
        return np.linalg.cholesky(a, upper=upper)
    return p.bind_results(Op.CHOLESKY, (square(a, "cholesky"),), None, upper=bool(upper))


def qr(a, mode: str = "reduced"):
    """``numpy.linalg.qr``: ``(Q, R)`` for modes ``'reduced'`` and ``'complete'``, ``R`` for
    ``'r'`` (``'raw'`` outside jit only)."""
    if not traced(a):
        return np.linalg.qr(a, mode=mode)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"anp.linalg.qr: mode {mode!r} is not supported inside jit; use "
                         f"'reduced', 'complete' or 'r'")
    result = p.bind_results(Op.QR, (inexact(a, "qr"),), None, mode=mode)
    return result if mode == "r" else QRResult(*result)


def eigh(a, UPLO: str = "L"):
    """``numpy.linalg.eigh``: eigenvalues (ascending) and eigenvectors of a Hermitian
    matrix, reading its ``UPLO`` triangle."""
    if not traced(a):
        return np.linalg.eigh(a, UPLO)
    _check_uplo(UPLO)
    return EighResult(*p.bind_results(Op.EIGH, (square(a, "eigh"),), None, UPLO=UPLO,
                                      vectors=True))


def eigvalsh(a, UPLO: str = "L"):
    """``numpy.linalg.eigvalsh``: the eigenvalues of a Hermitian matrix, ascending."""
    if not traced(a):
        return np.linalg.eigvalsh(a, UPLO)
    _check_uplo(UPLO)
    return p.bind_results(Op.EIGH, (square(a, "eigvalsh"),), None, UPLO=UPLO, vectors=False)


def _check_uplo(UPLO: str) -> None:
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")


def eig(a):
    """``numpy.linalg.eig``. Inside jit the results are always complex (NumPy returns real
    arrays when every eigenvalue is real: a dtype that depends on the values), as in JAX."""
    if not traced(a):
        return np.linalg.eig(a)
    return EigResult(*p.bind_results(Op.EIG, (square(a, "eig"),), None, vectors=True))


def eigvals(a):
    """``numpy.linalg.eigvals`` (complex inside jit, as ``eig``)."""
    if not traced(a):
        return np.linalg.eigvals(a)
    return p.bind_results(Op.EIG, (square(a, "eigvals"),), None, vectors=False)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """``numpy.linalg.svd``: ``(U, S, Vh)`` with ``a == U @ (S[..., None] * Vh)``, singular
    values descending; ``S`` alone without ``compute_uv``. ``hermitian`` takes them from
    ``eigh``, as NumPy does."""
    if not traced(a):
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                             hermitian=hermitian)
    a = inexact(a, "svd")
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    if not compute_uv:
        return p.bind_results(Op.SVD, (a,), None, full_matrices=bool(full_matrices),
                              vectors=False)
    return SVDResult(*p.bind_results(Op.SVD, (a,), None, full_matrices=bool(full_matrices),
                                     vectors=True))


def _hermitian_svd(a, compute_uv: bool):
    if not compute_uv:
        s = anp.absolute(eigvalsh(a))
        return shapes.flip(shapes.sort(s, axis=-1), axis=-1)
    s, u = eigh(a)
    sign = anp.sign(s)
    s = anp.absolute(s)
    order = shapes.flip(shapes.argsort(s, axis=-1), axis=-1)
    sign = shapes.take_along_axis(sign, order, axis=-1)
    s = shapes.take_along_axis(s, order, axis=-1)
    u = shapes.take_along_axis(u, order[..., None, :], axis=-1)
    vt = anp.conjugate(anp.swapaxes(anp.multiply(u, sign[..., None, :]), -1, -2))
    return SVDResult(u, s, vt)


def svdvals(x, /):
    """The singular values, descending (the array API's ``svdvals``)."""
    return svd(x, compute_uv=False)
