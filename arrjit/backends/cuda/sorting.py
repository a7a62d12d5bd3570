"""``sort`` and ``argsort`` as device kernels: a bitonic sorting network per line (a line is
the sorted axis at one position of the others), each line padded to a power of two.

Elements are ordered by value, NaN last (NumPy's order), and equal values by their position
in the line, so the network's result is the stable order: ``argsort`` gives NumPy's
``kind="stable"`` answer whatever ``stable`` says (NumPy leaves the order of equal elements
of its default sort unspecified), and ``sort`` gives NumPy's values. A line of ``n`` elements
takes ``log2(w) * (log2(w) + 1) / 2`` launches for ``w`` the power of two at or above ``n``,
each over every padded element.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda      # a module global: the simulator swaps it inside kernels

from .device import flat
from .launch import current_rule


@cuda.jit
def _load(x, keys, order, lines, length, inner, width):
    t = cuda.grid(1)
    while t < lines * width:
        line, p = t // width, t % width
        if p < length:
            keys[t] = x[(line // inner) * length * inner + p * inner + line % inner]
        order[t] = p                        # p >= length: padding, which sorts last
        t += cuda.gridsize(1)


@cuda.jit
def _compare_exchange(keys, order, lines, length, width, k, j):
    """One step of the network: positions ``p`` and ``p ^ j`` of every line swap when they
    are out of order for the direction of their ``k``-sized run."""
    t = cuda.grid(1)
    while t < lines * width:
        p = t % width
        partner = p ^ j
        if partner > p:
            a = t
            b = t - p + partner
            ka, ia, kb, ib = keys[a], order[a], keys[b], order[b]
            if ib >= length or ia >= length:
                b_first = ia >= length and (ib < length or ib < ia)
            elif kb < ka:
                b_first = True
            elif ka < kb:
                b_first = False
            elif ka == kb or (ka != ka and kb != kb):
                b_first = ib < ia
            else:                           # exactly one of them is NaN
                b_first = ka != ka
            if b_first == ((p & k) == 0):
                keys[a], keys[b] = kb, ka
                order[a], order[b] = ib, ia
        t += cuda.gridsize(1)


@cuda.jit
def _store(sorted_lines, out, lines, length, inner, width):
    """The first ``length`` entries of each padded line (keys, or positions for argsort)
    back into ``x``'s layout."""
    t = cuda.grid(1)
    while t < lines * length:
        line, p = t // length, t % length
        out[(line // inner) * length * inner + p * inner + line % inner] = \
            sorted_lines[line * width + p]
        t += cuda.gridsize(1)


def sort_lines(x: Any, axis: int, out_dtype: np.dtype, indices: bool) -> Any:
    """``x`` sorted along ``axis`` (``indices``: the argsort of it) as a new device array."""
    shape = tuple(x.shape)
    out = cuda.device_array(shape, out_dtype)
    length = int(shape[axis])
    if out.size == 0:
        return out
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    lines = int(out.size) // length
    width = 1 << (length - 1).bit_length()
    keys = cuda.device_array(lines * width, x.dtype)
    order = cuda.device_array(lines * width, np.int64)
    rule = current_rule()
    padded, kept = rule.blocks(lines * width), rule.blocks(lines * length)
    _load[padded, rule.threads](flat(x), keys, order, lines, length, inner, width)
    k = 2
    while k <= width:
        j = k // 2
        while j > 0:
            _compare_exchange[padded, rule.threads](keys, order, lines, length, width, k, j)
            j //= 2
        k *= 2
    _store[kept, rule.threads](order if indices else keys, flat(out), lines, length, inner,
                               width)
    return out
