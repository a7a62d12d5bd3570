"""Graph-to-graph clean-ups run before fusion: joins of unit slices as selects (``joins``),
constant folding of small values, common subexpression elimination, collapsing of view
chains, and dead code elimination.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> f64 = np.dtype("float64")
>>> x, a, b = (Var(i, Aval((3,), f64)) for i in range(3))
>>> g = Graph((x,), (Node(Op.EXP, (x,), a), Node(Op.EXP, (x,), b)), (a, b))
>>> print(simplify(g))
graph(a: float64[3]) {
  b: float64[3] = exp a
  return b, b
}
"""
from __future__ import annotations

import numpy as np

from ..core.dtypes import Aval
from ..core.interpret import evaluate_node
from ..core.ir import ELEMENTWISE, Graph, Literal, Node, Op, Var, make_params
from .joins import join_as_region_sets, join_as_selects

FOLD_MAX_SIZE = 16  # constant-fold only small results: folding a broadcast would materialise it


def simplify(graph: Graph) -> Graph:
    # region joins after folding: each keeps its own zero (merged, no chain could be in place)
    graph = join_as_region_sets(fold_and_cse(join_as_selects(graph)))
    return eliminate_dead_code(graph)


def fold_and_cse(graph: Graph) -> Graph:
    """One forward pass: fold constant nodes, merge duplicate nodes, collapse view chains."""
    rename: dict[Var, Var] = {}
    seen: dict[tuple, Var] = {}
    constants: dict[Var, np.ndarray] = {}
    nodes: list[Node] = []
    by_out: dict[Var, Node] = {}
    inputs, graph_outputs = set(graph.inputs), set(graph.outputs)
    new_var = None   # made on first use: ``Graph.var_factory`` reads every node
    for node in graph.nodes:
        node = Node(node.op, tuple(rename.get(v, v) for v in node.inputs), node.out, node.params,
                    node.extra)
        if node.extra:  # several outputs: kept as they are
            nodes.append(node)
            by_out[node.out] = node
            continue
        if (node.op is Op.CAST and node.inputs[0].aval == node.out.aval
                and node.inputs[0] not in inputs):
            rename[node.out] = node.inputs[0]     # a no-op (a graph input stays copied)
            continue
        node = _collapse_views(node, by_out)
        if node.op is Op.POW and node.inputs[0].dtype == node.out.dtype:
            # IEEE pow's exact cases, NaN and infinities included, without a ``pow`` call
            exponent = _constant_exponent(node, by_out, constants)
            if exponent == 1 and (node.inputs[0] not in inputs or node.out not in graph_outputs):
                rename[node.out] = node.inputs[0]
                continue
            if exponent == 2:   # the same correctly rounded value
                node = Node(Op.SQUARE, (node.inputs[0],), node.out)
            elif exponent == 0:
                new_var = new_var or graph.var_factory()
                one = new_var(Aval((), node.out.dtype))
                value = np.ones((), node.out.dtype)
                nodes.append(Node(Op.CONST, (), one, make_params(value=Literal(value))))
                constants[one] = value
                node = Node(Op.BROADCAST, (one,), node.out, make_params(shape=node.out.shape))
        if node.op is Op.CONST:
            if not node.param.get("runtime"):   # run-time values (sizes) are not folded in
                constants[node.out] = node.param["value"].array
        elif (node.op in ELEMENTWISE and node.out.aval.size <= FOLD_MAX_SIZE
              and all(v in constants for v in node.inputs)):
            value = evaluate_node(node, [constants[v] for v in node.inputs])
            value = np.asarray(value, dtype=node.out.dtype)
            node = Node(Op.CONST, (), node.out, make_params(value=Literal(value)))
            constants[node.out] = value
        key = (node.op, node.inputs, node.params, node.out.aval)
        if key in seen:
            rename[node.out] = seen[key]
            continue
        seen[key] = node.out
        nodes.append(node)
        by_out[node.out] = node
    outputs = tuple(rename.get(v, v) for v in graph.outputs)
    return Graph(graph.inputs, tuple(nodes), outputs)


def _collapse_views(node: Node, nodes_by_out: dict[Var, Node]) -> Node:
    """reshape(reshape(x)) -> reshape(x); transpose(transpose(x)) -> one transpose."""
    if node.op not in (Op.RESHAPE, Op.TRANSPOSE):
        return node
    src = nodes_by_out.get(node.inputs[0])
    if src is None or src.op is not node.op:
        return node
    if node.op is Op.RESHAPE:
        return Node(Op.RESHAPE, src.inputs, node.out, node.params)
    inner, outer = src.param["perm"], node.param["perm"]
    perm = tuple(inner[p] for p in outer)
    return Node(Op.TRANSPOSE, src.inputs, node.out, make_params(perm=perm))


def _constant_exponent(node: Node, nodes_by_out: dict[Var, Node],
                       constants: dict[Var, np.ndarray]) -> object:
    """The exponent of a ``power`` node where it is one constant (through broadcasts)."""
    exponent = node.inputs[1]
    producer = nodes_by_out.get(exponent)
    while producer is not None and producer.op is Op.BROADCAST:
        exponent = producer.inputs[0]
        producer = nodes_by_out.get(exponent)
    value = constants.get(exponent)
    return None if value is None or value.size != 1 else value.reshape(()).item()


def eliminate_dead_code(graph: Graph) -> Graph:
    live = set(graph.outputs)
    kept: list[Node] = []
    for node in reversed(graph.nodes):
        if any(v in live for v in node.outs):
            kept.append(node)
            live.update(node.inputs)
    return Graph(graph.inputs, tuple(reversed(kept)), graph.outputs)
