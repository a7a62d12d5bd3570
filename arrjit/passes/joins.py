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
(``regions.unfilled_roots``). A join whose only use is as a piece of another such join (a
``pad`` of two axes joins rows, then columns) is not built on its own: its pieces go straight
into their places in the outer result, so no loop nest copies the inner join into it.

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

from collections import Counter

import numpy as np

from ..core.dtypes import Aval
from ..core.ir import Graph, Literal, Node, Op, Var, make_params
from .rewrites import Emitter, rewrite_nodes

MAX_SELECT_PIECES = 32   # a longer join stays one library call (its compares would cost more)
MAX_REGION_PIECES = 64   # a region join's stores go in one loop nest per shape (regions)


def join_as_selects(graph: Graph) -> Graph:
    """``graph`` with every join of at most ``MAX_SELECT_PIECES`` unit slices as selects."""
    return rewrite_nodes(graph, _selectable, _selects)


def join_as_region_sets(graph: Graph) -> Graph:
    """``graph`` with every join of at most ``MAX_REGION_PIECES`` pieces of the result's dtype
    that ``join_as_selects`` leaves (thicker pieces, or more unit slices than it takes) as
    region updates of a broadcast zero; a join that only feeds another (``nested_joins``)
    places its pieces into the other's result."""
    inner = nested_joins(graph)
    return rewrite_nodes(graph, _region_joinable,
                         lambda node, new_var: [] if node.out in inner
                         else _region_sets(node, new_var, inner))


def nested_joins(graph: Graph) -> dict[Var, Node]:
    """The region joins, by result, whose only use is as a piece of another region join of
    one rank (not a result of the graph)."""
    uses = Counter(v for n in graph.nodes for v in n.inputs)
    uses.update(graph.outputs)
    joins = {n.out: n for n in graph.nodes if _region_joinable(n)}
    return {piece: joins[piece] for n in joins.values() for piece in n.inputs
            if piece in joins and uses[piece] == 1 and piece.ndim == n.out.ndim}


def _region_joinable(node: Node) -> bool:
    if node.op is not Op.CONCATENATE or not 1 < len(node.inputs) <= MAX_REGION_PIECES:
        return False
    return (node.out.aval.size > 0 and all(v.dtype == node.out.dtype for v in node.inputs)
            and not _selectable(node))


def _region_sets(node: Node, new_var, joins: dict[Var, Node]) -> list[Node]:
    """``zeros.at[region].set(piece)`` for each non-empty piece, ``node.out`` the last; the
    pieces of a join in ``joins`` each at its own region, in place of that join's."""
    out = node.out
    zero = new_var(Aval((), out.dtype))
    base = new_var(Aval(out.shape, out.dtype))
    nodes = [Node(Op.CONST, (), zero, make_params(value=Literal(np.zeros((), out.dtype)))),
             Node(Op.BROADCAST, (zero,), base, make_params(shape=out.shape))]
    placed = _placed(node, (0,) * out.ndim, joins)
    for k, (piece, corner) in enumerate(placed):
        index = tuple(("slice", c, c + d, None) for c, d in zip(corner, piece.shape))
        target = out if k == len(placed) - 1 else new_var(Aval(out.shape, out.dtype))
        nodes.append(Node(Op.SCATTER, (base, piece), target,
                          make_params(index=index, mode="set")))
        base = target
    return nodes


def _placed(node: Node, corner: tuple[int, ...],
            joins: dict[Var, Node]) -> list[tuple[Var, tuple[int, ...]]]:
    """The non-empty pieces of the join ``node`` whose result starts at ``corner`` of the
    outermost result, each with its own corner there (a piece in ``joins``: its pieces)."""
    axis = node.param["axis"]
    placed: list[tuple[Var, tuple[int, ...]]] = []
    start = corner[axis]
    for piece in node.inputs:
        if piece.shape[axis] > 0:
            at = corner[:axis] + (start,) + corner[axis + 1:]
            placed += _placed(joins[piece], at, joins) if piece in joins else [(piece, at)]
        start += piece.shape[axis]
    return placed


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
