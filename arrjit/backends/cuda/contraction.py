"""``einsum`` as one device kernel: a thread per output element sums, over every combination
of the contracted indices, the product of the operands' elements (read through per-operand
strides, so repeated indices take diagonals and size-1 ellipsis dimensions broadcast).

NumPy's subscript rules are followed: explicit (``"ij,jk->ik"``) or implicit output (the
indices that appear once, in alphabetical order, after the ellipsis dimensions) and
``...`` standing for the operands' unnamed leading dimensions, broadcast together. Operands
arrive in the result dtype (the namespace casts them); the sum runs in that dtype, in
order of the contracted indices.
"""
from __future__ import annotations

import string
from typing import Any, Sequence

import numpy as np
from numba import cuda      # a module global: the simulator swaps it inside kernels

from .device import flat, to_device
from .launch import current_rule


def _expanded(term: str, ndim: int, ellipsis: str) -> str:
    """``term`` with ``...`` replaced by the last letters of ``ellipsis`` it covers."""
    if "..." not in term:
        return term
    covered = ndim - (len(term) - 3)
    return term.replace("...", ellipsis[len(ellipsis) - covered:] if covered else "")


def contraction_layout(subscripts: str, shapes: Sequence[tuple[int, ...]]
                       ) -> tuple[list[int], int, np.ndarray]:
    """(size of every index, output indices first; how many are output indices; the
    element stride of each operand along each index, one row per operand).

    >>> sizes, n_out, strides = contraction_layout("ij,jk->ik", [(2, 3), (3, 4)])
    >>> sizes, n_out, strides.tolist()
    ([2, 4, 3], 2, [[3, 0, 1], [0, 1, 4]])
    """
    text = subscripts.replace(" ", "")
    inputs_text, _, output = text.partition("->")
    terms = inputs_text.split(",")
    named = set(inputs_text.replace("...", "").replace(",", ""))
    spare = [c for c in string.ascii_letters if c not in named]
    dots = max((len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t), default=0)
    ellipsis = "".join(spare[:dots])
    terms = [_expanded(t, len(s), ellipsis) for t, s in zip(terms, shapes)]
    if "->" in text:
        output = _expanded(output, dots + len(output) - 3, ellipsis)
    else:
        letters = "".join(terms)
        output = ellipsis + "".join(sorted(c for c in set(letters) - set(ellipsis)
                                           if letters.count(c) == 1))
    order = list(output) + sorted({c for t in terms for c in t} - set(output))
    sizes = {c: 1 for c in order}
    for term, shape in zip(terms, shapes):
        for c, n in zip(term, shape):
            sizes[c] = max(sizes[c], int(n)) if n != 0 else 0
    strides = np.zeros((len(terms), len(order)), np.int64)
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        step = 1
        for c, n in reversed(list(zip(term, shape))):
            if n != 1:
                strides[k, order.index(c)] += step
            step *= int(n)
    return [sizes[c] for c in order], len(output), strides


@cuda.jit
def _contract(data, bases, strides, sizes, n_out, units, out):
    """``out[t]`` = the sum over contracted indices of the product of every operand's element
    (operand ``k`` at ``data[bases[k] + sum_i index_i * strides[k, i]]``); ``units`` holds 0
    and 1 in the dtype, so the sum and product keep it."""
    n_index = sizes.size
    n_ops = bases.size
    contracted = 1
    for i in range(n_out, n_index):
        contracted *= sizes[i]
    t = cuda.grid(1)
    while t < out.size:
        acc = units[0]
        for c in range(contracted):
            product = units[1]
            for k in range(n_ops):
                offset = bases[k]
                q = t
                for i in range(n_out - 1, -1, -1):
                    offset += (q % sizes[i]) * strides[k, i]
                    q //= sizes[i]
                q = c
                for i in range(n_index - 1, n_out - 1, -1):
                    offset += (q % sizes[i]) * strides[k, i]
                    q //= sizes[i]
                product = product * data[offset]
            acc = acc + product
        out[t] = acc
        t += cuda.gridsize(1)


def einsum(operands: Sequence[Any], out_dtype: np.dtype, subscripts: str) -> Any | None:
    """``numpy.einsum(subscripts, *operands)`` as a new device array; None for booleans
    (NumPy's logical sum of products: the caller runs NumPy)."""
    if np.dtype(out_dtype).kind == "b":
        return None
    sizes, n_out, strides = contraction_layout(subscripts, [tuple(x.shape) for x in operands])
    out = cuda.device_array(tuple(sizes[:n_out]), out_dtype)
    if out.size == 0:
        return out
    counts = [int(x.size) for x in operands]
    data = cuda.device_array(max(1, sum(counts)), out_dtype)
    bases = np.cumsum([0] + counts[:-1]).astype(np.int64)
    for x, base, count in zip(operands, bases, counts):
        if count:
            data[int(base):int(base) + count].copy_to_device(flat(x))
    rule = current_rule()
    _contract[rule.blocks(out.size), rule.threads](
        data, to_device(bases), to_device(strides), to_device(np.asarray(sizes, np.int64)),
        n_out, to_device(np.array([0, 1], out_dtype)), flat(out))
    return out
