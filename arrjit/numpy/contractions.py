"""Contractions of ``arrjit.numpy``: dot, matmul, vdot, inner, outer, tensordot, einsum.
They become transposes and reshapes around one BLAS-backed matmul. (The matrix functions of
``numpy.linalg`` are ``arrjit.numpy.linalg``.)"""
from __future__ import annotations

import operator

import numpy as np

from . import base as anp
from ..core import primitives as p
from ..core.dtypes import result_type
from ..core.trace import Tracer


def _traced(*xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def matmul(a, b):
    """``numpy.matmul`` (``a @ b``): stacked matrices broadcast; BLAS for floating point."""
    return p.bind_matmul(a, b)


def dot(a, b):
    """``numpy.dot``: products for scalars, matmul for 1-D/2-D, a sum over the last axis of
    ``a`` and the second-to-last of ``b`` for N-D."""
    if not _traced(a, b):
        return np.dot(a, b)
    na, nb = p.aval_of(a).ndim, p.aval_of(b).ndim
    if na == 0 or nb == 0:  # np.dot makes Python scalars arrays: no weak promotion here
        return anp.multiply(*(np.asarray(v) if p.is_python_scalar(v) else v for v in (a, b)))
    if na <= 2 and nb <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([na - 1], [nb - 2 if nb > 1 else 0]))


def vdot(a, b):
    """``numpy.vdot``: the dot product of the flattened inputs, the first conjugated."""
    if not _traced(a, b):
        return np.vdot(a, b)
    a = anp.ravel(a)
    return dot(anp.conjugate(a) if p.aval_of(a).dtype.kind == "c" else a, anp.ravel(b))


def inner(a, b):
    """``numpy.inner``: a sum over the last axes."""
    if not _traced(a, b):
        return np.inner(a, b)
    na, nb = p.aval_of(a).ndim, p.aval_of(b).ndim
    if na == 0 or nb == 0:
        return anp.multiply(*(np.asarray(v) if p.is_python_scalar(v) else v for v in (a, b)))
    return tensordot(a, b, axes=([na - 1], [nb - 1]))


def outer(a, b):
    """``numpy.outer``: ``ravel(a)[:, None] * ravel(b)[None, :]``."""
    if not _traced(a, b):
        return np.outer(a, b)
    return anp.multiply(anp.ravel(a)[:, None], anp.ravel(b)[None, :])


def tensordot(a, b, axes=2):
    """``numpy.tensordot``: contract ``axes`` (an int or two sequences)."""
    if not _traced(a, b):
        return np.tensordot(a, b, axes=axes)
    a, b = anp.asarray(a), anp.asarray(b)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    axes_a = [ax % a.ndim for ax in axes_a]
    axes_b = [ax % b.ndim for ax in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j]
                                         for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    k = int(np.prod([a.shape[i] for i in axes_a], dtype=np.int64))
    m = int(np.prod([a.shape[i] for i in free_a], dtype=np.int64))
    n = int(np.prod([b.shape[j] for j in free_b], dtype=np.int64))
    a2 = anp.reshape(anp.transpose(a, free_a + axes_a), (m, k))
    b2 = anp.reshape(anp.transpose(b, axes_b + free_b), (k, n))
    out_shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b)
    return anp.reshape(matmul(a2, b2), out_shape)


def _einsum_shape(subscripts: str, shapes) -> tuple[int, ...]:
    probes = [np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), s, (0,) * len(s))
              for s in shapes]
    return np.einsum(subscripts, *probes, optimize=False).shape if all(
        np.prod(s) < 1 << 16 for s in shapes) else _einsum_shape_parsed(subscripts, shapes)


def _einsum_shape_parsed(subscripts: str, shapes) -> tuple[int, ...]:
    if "->" not in subscripts or "." in subscripts:
        raise NotImplementedError("anp.einsum of large operands needs explicit '->' output "
                                  "subscripts without '...'")
    inputs, output = subscripts.replace(" ", "").split("->")
    size = {}
    for letters, shape in zip(inputs.split(","), shapes):
        for c, d in zip(letters, shape):
            size[c] = d
    return tuple(size[c] for c in output)


def einsum(subscripts, *operands, optimize=True):
    """``numpy.einsum`` with static subscripts (run through NumPy's BLAS-backed contraction
    path)."""
    if not isinstance(subscripts, str):
        raise TypeError("anp.einsum takes the subscripts string first")
    if not _traced(*operands):
        return np.einsum(subscripts, *operands, optimize=optimize)
    avals = [p.aval_of(x) for x in operands]
    dtype, weak = result_type(*avals)
    operands = [anp.asarray(x).astype(dtype) if p.aval_of(x).dtype != dtype else x
                for x in operands]
    shape = _einsum_shape(subscripts, [a.shape for a in avals])
    return p.bind_library(p.Op.EINSUM, tuple(operands), p.Aval(tuple(shape), dtype), None,
                          subscripts=subscripts)
