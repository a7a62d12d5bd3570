"""Forward-mode rules of ``numpy.linalg``'s primitives and ``convolve``, JAX's formulas. Their
reverse mode is the transpose of these (``rules.transpose_of_jvp``): each rule is linear in
the tangents, so reverse mode traces it and pulls cotangents back through the primitives it
is made of, as JAX derives its own.

A rule takes ``(node, ins, outs, tangents)``: the primal operands, the primal result (a
list of them for an op with several) and the operands' tangents (``None``: zero); it
returns the result's tangent (a list for several results), always arrays.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .. import numpy as anp
from ..numpy import shapes
from ..core.ir import Node, Op
from .graphs import run_node
from .values import Value, aval, sum_to_shape, zeros

linalg = anp.linalg


def _tangent(t: Value | None, like) -> Value:
    return t if t is not None else zeros(like.shape, like.dtype)


def _T(x: Value) -> Value:
    return anp.swapaxes(x, -1, -2)


def _H(x: Value) -> Value:
    return anp.conjugate(_T(x)) if aval(x).dtype.kind == "c" else _T(x)


def _mm(a: Value, b: Value) -> Value:
    return anp.matmul(a, b)


def _trace(x: Value) -> Value:
    return anp.trace(x, axis1=-2, axis2=-1)


def _as(x: Value, like: Value) -> Value:
    dtype = aval(like).dtype
    return x if aval(x).dtype == dtype else anp.astype(x, dtype)


def _symmetric_part(t: Value) -> Value:
    """``(t + t^H) / 2``: JAX's linalg reads a Hermitian matrix through its symmetric part."""
    return anp.multiply(anp.add(t, _H(t)), 0.5)


def _eye_like(n: int, dtype) -> Value:
    return anp.eye(n, dtype=dtype)


def _solve_jvp(node: Node, ins, out, tangents):
    a, b = ins
    ta, tb = tangents
    rhs = _tangent(tb, node.inputs[1])
    if ta is not None:
        rhs = anp.subtract(rhs, _mm(ta, out))
    return linalg.solve(a, anp.broadcast_to(rhs, aval(out).shape))


def _inv_jvp(node, ins, out, tangents):
    return anp.negative(_mm(_mm(out, tangents[0]), out))


def _det_jvp(node, ins, out, tangents):
    return anp.multiply(out, _trace(linalg.solve(ins[0], tangents[0])))


def _slogdet_jvp(node, ins, outs, tangents):
    sign, _ = outs
    t = _trace(linalg.solve(ins[0], tangents[0]))
    if aval(ins[0]).dtype.kind == "c":
        sign_dot = anp.multiply(sign, anp.multiply(1j, anp.imag(t)))
    else:
        sign_dot = anp.zeros_like(sign)
    return [sign_dot, anp.real(t)]


def _phi(x: Value) -> Value:
    """The lower triangle of ``x`` with its diagonal halved."""
    n = aval(x).shape[-1]
    weights = np.tril(np.ones((n, n))) - 0.5 * np.eye(n)
    return anp.multiply(x, weights.astype(np.result_type(aval(x).dtype, np.float32)))


def _cholesky_jvp(node, ins, out, tangents):
    upper = node.param["upper"]
    lower = _H(out) if upper else out
    sigma = _symmetric_part(tangents[0])
    left = linalg.solve(lower, sigma)                       # L^-1 S
    middle = _H(linalg.solve(lower, _H(left)))              # L^-1 S L^-H
    dl = _mm(lower, _phi(middle))
    return _H(dl) if upper else dl


def _qr_jvp(node, ins, outs, tangents):
    mode = node.param["mode"]
    x, dx = ins[0], tangents[0]
    m, n = node.inputs[0].shape[-2:]
    if m < n or (mode == "complete" and m != n):
        raise NotImplementedError(
            f"the derivative of qr is defined for matrices with at least as many rows as "
            f"columns (mode 'reduced' or 'r'), as in JAX; got {m}x{n} with mode {mode!r}")
    q, r = (linalg.qr(x) if mode == "r" else outs)
    dx_rinv = _T(linalg.solve(_T(r), _T(dx)))               # dx r^-1
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    lower = anp.tril(qt_dx_rinv, -1)
    omega = anp.subtract(lower, _H(lower))
    if aval(x).dtype.kind == "c":
        diagonal = anp.subtract(qt_dx_rinv, anp.real(qt_dx_rinv))
        omega = anp.add(omega, anp.multiply(_eye_like(n, aval(x).dtype), diagonal))
    dq = anp.add(_mm(q, anp.subtract(omega, qt_dx_rinv)), dx_rinv)
    dr = _mm(anp.subtract(qt_dx_rinv, omega), r)
    return dr if mode == "r" else [dq, dr]


def _eigen_gaps(w: Value, dtype) -> Value:
    """``1 / (w_j - w_i)`` off the diagonal, 0 on it."""
    n = aval(w).shape[-1]
    eye = _eye_like(n, aval(w).dtype)
    gaps = anp.add(anp.subtract(w[..., None, :], w[..., :, None]), eye)
    return anp.astype(anp.subtract(anp.true_divide(1, gaps), eye), dtype)


def _eigh_jvp(node, ins, outs, tangents):
    a = ins[0]
    w, v = outs if node.param["vectors"] else linalg.eigh(a, node.param["UPLO"])
    projected = _mm(_mm(_H(v), _symmetric_part(tangents[0])), v)
    dw = anp.real(anp.diagonal(projected, 0, -2, -1))
    if not node.param["vectors"]:
        return dw
    dv = _mm(v, anp.multiply(_eigen_gaps(w, aval(a).dtype), projected))
    return [dw, dv]


def _eig_jvp(node, ins, outs, tangents):
    if node.param["vectors"]:
        raise NotImplementedError("the derivative of eig's eigenvectors is not defined (as in "
                                  "JAX); differentiate eigvals, or eigh for Hermitian matrices")
    _, v = linalg.eig(ins[0])
    da = _as(tangents[0], v)
    return anp.sum(anp.multiply(linalg.solve(v, da), _T(v)), axis=-1)


def _svd_jvp(node, ins, outs, tangents):
    a, da = ins[0], tangents[0]
    dtype = aval(a).dtype
    vectors, full = node.param["vectors"], node.param["full_matrices"]
    m, n = node.inputs[0].shape[-2:]
    if vectors and full and m != n:
        raise NotImplementedError("the derivative of svd with full_matrices=True is defined "
                                  "for square matrices only (as in JAX); pass "
                                  "full_matrices=False")
    u, s, vt = outs if vectors else linalg.svd(a, full_matrices=False)
    ut, v = _H(u), _H(vt)
    ds_matrix = _mm(_mm(ut, da), v)
    ds = anp.real(anp.diagonal(ds_matrix, 0, -2, -1))
    if not vectors:
        return ds
    k = aval(s).shape[-1]
    s_row = s[..., None, :]
    s_col = anp.swapaxes(s_row, -1, -2)
    eye = _eye_like(k, aval(s).dtype)
    f = anp.subtract(anp.true_divide(1, anp.add(anp.multiply(anp.add(s_row, s_col),
                                                             anp.subtract(s_row, s_col)),
                                                eye)), eye)
    f = anp.astype(f, dtype)
    ds_s = anp.multiply(anp.astype(s_row, dtype), ds_matrix)
    s_ds = anp.multiply(anp.astype(s_col, dtype), ds_matrix)
    zero_s = anp.astype(anp.equal(s, 0), aval(s).dtype)
    s_inv = anp.subtract(anp.true_divide(1, anp.add(s, zero_s)), zero_s)
    s_inv_matrix = anp.multiply(eye, s_inv[..., None, :])
    du_dv_diag = anp.multiply(anp.multiply(anp.subtract(ds_matrix, _H(ds_matrix)), 0.5),
                              anp.astype(s_inv_matrix, dtype))
    du = _mm(u, anp.add(anp.multiply(f, anp.add(ds_s, _H(ds_s))), du_dv_diag))
    dv = _mm(v, anp.multiply(f, anp.add(s_ds, _H(s_ds))))
    if m > n:
        da_v = _mm(da, v)
        du = anp.add(du, anp.true_divide(anp.subtract(da_v, _mm(u, _mm(ut, da_v))),
                                         anp.astype(s_row, dtype)))
    if n > m:
        dah_u = _mm(_H(da), u)
        dv = anp.add(dv, anp.true_divide(anp.subtract(dah_u, _mm(v, _mm(vt, dah_u))),
                                         anp.astype(s_row, dtype)))
    return [du, ds, _H(dv)]


def solve_vjp(node: Node, ins, out, ct):
    """``x = a^-1 b``: ``ct_b = a^-T ct`` and ``ct_a = -ct_b x^T``, summed over the batch axes
    each operand was broadcast along."""
    a, b = ins
    ct_b = linalg.solve(_T(a), ct)
    if node.inputs[1].ndim == 1:       # one vector: the outer product
        ct_a = anp.negative(anp.multiply(ct_b[..., :, None], out[..., None, :]))
    else:
        ct_a = anp.negative(_mm(ct_b, _T(out)))
    return [sum_to_shape(ct_a, node.inputs[0].shape), sum_to_shape(ct_b, node.inputs[1].shape)]


def convolve_vjp(node: Node, ins, out, ct):
    """The cotangents of ``convolve(a, v, mode)`` (``a`` the longer): the cotangent placed
    into the full convolution's positions, correlated with the other operand."""
    a, v = ins
    n, m = node.inputs[0].shape[0], node.inputs[1].shape[0]
    start = {"full": 0, "same": (m - 1) // 2, "valid": m - 1}[node.param["mode"]]
    full = anp.pad(ct, (start, n + m - 1 - start - aval(ct).shape[0]))
    ct_a = anp.convolve(full, shapes.flip(v), mode="valid")
    ct_v = anp.convolve(full, shapes.flip(a), mode="valid")
    return [ct_a, ct_v]


def multilinear_jvp(node: Node, ins, out, tangents):
    """An op linear in each operand separately (a product): the sum over operands of the op
    with that operand replaced by its tangent."""
    total = None
    for k, t in enumerate(tangents):
        if t is not None:
            args = list(ins)
            args[k] = t
            term = run_node(node, args)[0]
            total = term if total is None else anp.add(total, term)
    return total


LINALG_JVP: dict[Op, Callable[[Node, Sequence, Value, Sequence], Value]] = {
    Op.SOLVE: _solve_jvp, Op.INV: _inv_jvp, Op.DET: _det_jvp, Op.SLOGDET: _slogdet_jvp,
    Op.CHOLESKY: _cholesky_jvp, Op.QR: _qr_jvp, Op.EIGH: _eigh_jvp, Op.EIG: _eig_jvp,
    Op.SVD: _svd_jvp, Op.CONVOLVE: multilinear_jvp,
}
