"""View index maps: how a view (broadcast, transpose, slice, reshape) reads its source.

Inside a fused loop a view is never a copy: given the index map at which the view is read
(one ``Affine`` per dimension), its entry in ``VIEW_MAPS`` returns the map at which the source
is read.

>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Var
>>> import numpy as np
>>> x = Var(0, Aval((2, 3), np.dtype("float64"))); t = Var(1, Aval((3, 2), np.dtype("float64")))
>>> i, j = Affine(0, (1, 0)), Affine(0, (0, 1))
>>> VIEW_MAPS[Op.TRANSPOSE](Node(Op.TRANSPOSE, (x,), t, (("perm", (1, 0)),)), (i, j), i)
(Affine(offset=0, coefs=(0, 1), shifted=False), Affine(offset=0, coefs=(1, 0), shifted=False))
"""
from __future__ import annotations

from typing import Callable

from ..core.ir import Node, Op
from .kernel import Affine

IndexMap = tuple[Affine, ...]


def _broadcast_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    src, out = node.inputs[0], node.out
    lead = out.ndim - src.ndim
    return tuple(zero if (src.shape[k] == 1 and out.shape[lead + k] != 1) else imap[lead + k]
                 for k in range(src.ndim))


def _transpose_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    src_map: list[Affine] = [zero] * node.inputs[0].ndim
    for j, pj in enumerate(node.param["perm"]):
        src_map[pj] = imap[j]
    return tuple(src_map)


def _slice_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    p = node.param
    return tuple(Affine(start + step * a.offset, tuple(step * c for c in a.coefs), True)
                 for a, start, step in zip(imap, p["starts"], p["steps"]))


def reshape_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    """A reshape that only adds or drops size-1 dimensions (others read by flat index)."""
    it = iter([a for a, d in zip(imap, node.out.shape) if d != 1])
    return tuple(zero if d == 1 else next(it) for d in node.inputs[0].shape)


# How a view reads its source: the source's index map, given the view's own map.
VIEW_MAPS: dict[Op, Callable[[Node, IndexMap, Affine], IndexMap]] = {
    Op.BROADCAST: _broadcast_map,
    Op.TRANSPOSE: _transpose_map,
    Op.SLICE: _slice_map,
    Op.RESHAPE: reshape_map,
}
