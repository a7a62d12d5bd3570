"""Vector products (``dot`` of vectors, matrix-vector and vector-matrix ``@``) as native
functions for loop drivers.

Outside loops a product is a library call to NumPy's BLAS. Inside a loop body that call
sent every iteration back to Python; a product with at least one 1-d operand (the common
case in solvers: ``dot(L[i], x)``, ``A @ v``) is rendered here with a kernel's calling
convention (``w0, r0, r1, P, start, stop``) so the driver calls it natively. Each output
element is a sum over the contracted axis in the output's dtype, vectorised into several
running sums as BLAS kernels do (``mathlib/dots.py``), so the rounding can differ from NumPy's
BLAS by a few ULP. Matrix-matrix products run here up to ``NATIVE_MATRIX_PRODUCT`` multiply-adds, each
output row a sum of rows of the right operand; larger ones keep BLAS (the loop then runs from
Python). A matrix-vector product whose rows above a 0-d value are never read
(``LibraryStep.rows_from``, ``passes.demand``) reads that value as one more operand and
computes the rows from it on, leaving the others zero. An operand read transposed (``q.T @
v`` reads the buffer of ``q``) stays as it is stored: ``q.T @ v`` runs as ``v @ q`` over
``q``'s rows, ``v @ q.T`` as ``q @ v``, and a matrix-matrix product reads a transposed view.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> f64 = np.dtype("float64")
>>> print(render_body(Aval((3, 4), f64), Aval((4,), f64)))
    _M.matrix_vector(r0, r1, w0, 0.0, 0)
>>> print(render_body(Aval((3, 4), f64), Aval((4,), f64), rows_from=True))
    _M.matrix_vector(r0, r1, w0, 0.0, _M.flat(r2)[0])
"""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from ...core.dtypes import Aval
from ...core.ir import Op
from ...plan import LibraryStep
from ..source import literal
from .codegen import LEAF_OPTIONS, RenderedKernel


# Matrix-matrix products up to this many multiply-adds run inside the driver; larger ones keep
# BLAS (their loop runs from Python, a round trip small beside the product itself).
NATIVE_MATRIX_PRODUCT = 1 << 18


def _perms(step: LibraryStep) -> tuple:
    """Per operand: the permutation it is read through (``LibraryStep.in_perms``), or None."""
    return step.in_perms or (None,) * len(step.in_slots)


def operands(step: LibraryStep, slot_avals: Sequence[Aval]) -> tuple[Aval, Aval]:
    """The two operands as the product reads them: an operand read transposed
    (``LibraryStep.in_perms``: ``q.T @ v`` reads the buffer of ``q``) with its axes swapped."""
    a, b = (slot_avals[s] if perm is None else
            Aval(tuple(slot_avals[s].shape[p] for p in perm), slot_avals[s].dtype)
            for s, perm in zip(step.in_slots, _perms(step)))
    return a, b


def supported(step: LibraryStep, slot_avals: Sequence[Aval]) -> bool:
    """Whether ``step`` is a product this module renders."""
    if step.node.op is not Op.MATMUL:
        return False
    a, b = operands(step, slot_avals)
    out = slot_avals[step.out_slots[0]]
    if not (a.ndim <= 2 and b.ndim <= 2 and a.dtype == b.dtype == out.dtype
            and out.dtype.kind in "iufc"):
        return False
    return 1 in (a.ndim, b.ndim) or a.shape[0] * a.shape[1] * b.shape[1] <= NATIVE_MATRIX_PRODUCT


def by_value(step: LibraryStep) -> bool:
    """``render``'s function takes every operand as an array (see ``indexing.by_value``)."""
    return False


def render(step: LibraryStep, slot_avals: Sequence[Aval], in_place: bool) -> RenderedKernel:
    """The product as ``name(w0, r0, r1, P, start, stop)`` (``in_place`` does not apply: a
    product never writes into an operand)."""
    a, b = operands(step, slot_avals)
    transposed = [perm is not None for perm in _perms(step)]
    rows_from = step.rows_from >= 0
    if a.ndim == 2 and b.ndim == 1 and transposed[0]:
        # q.T @ v is v @ q: a vector-matrix product over q's rows as they are stored
        body = render_body(b, Aval(a.shape[::-1], a.dtype), names=("r1", "r0"))
    elif a.ndim == 1 and b.ndim == 2 and transposed[1]:
        # v @ q.T is q @ v: a matrix-vector product over q's rows as they are stored
        body = render_body(Aval(b.shape[::-1], b.dtype), a, names=("r1", "r0"))
    else:
        views = "".join(f"    r{k} = r{k}.T\n" for k, t in enumerate(transposed) if t)
        body = views + render_body(a, b, rows_from)
    name = f"matmul_{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    reads = ", ".join(f"r{k}" for k in range(len(step.read_slots)))
    source = f"@njit({LEAF_OPTIONS})\ndef {name}(w0, {reads}, P, start, stop):\n{body}\n"
    return RenderedKernel(name, source, np.zeros(1, np.int64))


def render_body(a: Aval, b: Aval, rows_from: bool = False,
                names: tuple[str, str] = ("r0", "r1")) -> str:
    """The function's body for operands named ``names``; ``rows_from``: a matrix-vector
    product computes the rows from the value of its third operand on."""
    zero = literal(0, a.dtype)
    r0, r1 = names
    if a.ndim == 1 and b.ndim == 1:
        return f"    _M.flat(w0)[0] = _M.dot_vectors({r0}, {r1}, {zero})"
    if a.ndim == 2 and b.ndim == 2:   # rows of the output as sums of rows of b
        return (f"    for i in range({r0}.shape[0]):\n"
                f"        for j in range({r1}.shape[1]):\n"
                f"            w0[i, j] = {zero}\n"
                f"        for k in range({r0}.shape[1]):\n"
                f"            v = {r0}[i, k]\n"
                f"            for j in range({r1}.shape[1]):\n"
                f"                w0[i, j] += v * {r1}[k, j]")
    if a.ndim == 2:
        first = "_M.flat(r2)[0]" if rows_from else "0"
        return f"    _M.matrix_vector({r0}, {r1}, w0, {zero}, {first})"
    return (f"    for j in range({r1}.shape[1]):\n"
            f"        w0[j] = {zero}\n"
            f"    for k in range({r0}.shape[0]):\n"
            f"        v = {r0}[k]\n"
            f"        for j in range({r1}.shape[1]):\n"
            f"            w0[j] += v * {r1}[k, j]")
