"""Joins as fused code, so that a stack or concatenation does not end fusion.

``anp.array([dx, dy, dz])``, ``stack`` and ``concatenate`` of pieces that are each one
element thick along the joined axis are rewritten from a library call (a kernel boundary: its
pieces stored, joined by NumPy, read back) into elementwise nodes: element ``j`` along the
axis is piece ``j``, picked with ``select`` by comparing a constant index along that axis.
Each piece is broadcast along the axis, an index map, so the join fuses with its producers and
its consumers. Where the index is known in a kernel (``y[0]`` of a stacked ``y``), the nest
builder folds the compare and keeps only the piece selected (``nest.NestBuilder``). A piece
whose computation is costly is stored by fusion's own rule for broadcasts of costly values,
so no element computes another piece's work more than a compare.

A join of thicker pieces (``concatenate([x, repeat(x, 20)])``) becomes a chain of region
updates, ``base.at[piece's slice].set(piece)``, one per piece, on a broadcast zero: fusion
stores each piece straight into its slice of the result (``passes.regions``), computed there
from its producers, and since the slices cover the result, the zero is never written
(``regions.unfilled_roots``).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var, make_params
>>> f64 = np.dtype("float64")
>>> a, b, out = Var(0, Aval((1,), f64)), Var(1, Aval((1,), f64)), Var(2, Aval((2,), f64))
>>> g = Graph((a, b), (Node(Op.CONCATENATE, (a, b), out, make_params(axis=0)),), (out,))
>>> sorted({n.op.value for n in join_as_selects(g).nodes})
['broadcast', 'const', 'equal', 'select']
"""
from __future__ import annotations

import numpy as np

from ..core.dtypes import Aval
from ..core.ir import Graph, Literal, Node, Op, make_params
from .rewrites import Emitter, rewrite_nodes

MAX_SELECT_PIECES = 32   # a longer join stays one library call (its compares would cost more)
MAX_REGION_PIECES = 64   # a region join's stores go in one loop nest per shape (regions)


def join_as_selects(graph: Graph) -> Graph:
    """``graph`` with every join of at most ``MAX_SELECT_PIECES`` unit slices as selects."""
    return rewrite_nodes(graph, _selectable, _selects)


def join_as_region_sets(graph: Graph) -> Graph:
    """``graph`` with every join of at most ``MAX_REGION_PIECES`` pieces of the result's dtype
    that ``join_as_selects`` leaves (thicker pieces, or more unit slices than it takes) as
    region updates of a broadcast zero."""
    return rewrite_nodes(graph, _region_joinable, _region_sets)


def _region_joinable(node: Node) -> bool:
    if node.op is not Op.CONCATENATE or not 1 < len(node.inputs) <= MAX_REGION_PIECES:
        return False
    return (node.out.aval.size > 0 and all(v.dtype == node.out.dtype for v in node.inputs)
            and not _selectable(node))


def _region_sets(node: Node, new_var) -> list[Node]:
    """``zeros.at[..., a:b].set(piece)`` for each non-empty piece, ``node.out`` the last."""
    out, axis = node.out, node.param["axis"]
    zero = new_var(Aval((), out.dtype))
    base = new_var(Aval(out.shape, out.dtype))
    nodes = [Node(Op.CONST, (), zero, make_params(value=Literal(np.zeros((), out.dtype)))),
             Node(Op.BROADCAST, (zero,), base, make_params(shape=out.shape))]
    pieces = [v for v in node.inputs if v.shape[axis] > 0]
    start = 0
    for k, piece in enumerate(pieces):
        stop = start + piece.shape[axis]
        index = (("slice", None, None, None),) * axis + (("slice", start, stop, None),)
        target = out if k == len(pieces) - 1 else new_var(Aval(out.shape, out.dtype))
        nodes.append(Node(Op.SCATTER, (base, piece), target,
                          make_params(index=index, mode="set")))
        base, start = target, stop
    return nodes


def _selectable(node: Node) -> bool:
    if node.op is not Op.CONCATENATE or not 1 < len(node.inputs) <= MAX_SELECT_PIECES:
        return False
    axis = node.param["axis"]
    return all(v.shape[axis] == 1 for v in node.inputs)


def _selects(node: Node, new_var) -> list[Node]:
    """The nodes computing ``node``'s join: ``select(index == j, piece_j, ...)``."""
    out, axis, pieces = node.out, node.param["axis"], node.inputs
    shape = out.shape
    emit = Emitter(new_var)
    along = [1] * len(shape)
    along[axis] = len(pieces)
    index = emit.spread(emit.constant(np.arange(len(pieces), dtype=np.intp).reshape(along)),
                        shape)
    flag = Aval(shape, np.dtype(bool))
    result = emit.spread(pieces[-1], shape)
    for j in range(len(pieces) - 2, -1, -1):
        is_j = emit.add(Op.EQ, (index, emit.spread(emit.constant(np.array(j, np.intp)), shape)),
                        flag)
        result = emit.add(Op.SELECT, (is_j, emit.spread(pieces[j], shape), result), out.aval,
                          target=out if j == 0 else None)
    return emit.nodes
