"""Graph-to-graph rewrites that replace a node by nodes computing the same value (joins as
selects, ``joins``; updates as selects, ``updates``): the rewrite loop and the builder the
replacements are written with.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Var
>>> x, y = Var(0, Aval((), np.dtype("float64"))), Var(1, Aval((3,), np.dtype("float64")))
>>> g = Graph((x,), (Node(Op.EXP, (x,), y, make_params()),), (y,))
>>> def spread_first(node, new_var):
...     emit = Emitter(new_var)
...     emit.add(Op.EXP, (emit.spread(node.inputs[0], (3,)),), node.out.aval, target=node.out)
...     return emit.nodes
>>> [n.op.value for n in rewrite_nodes(g, lambda n: n.op is Op.EXP, spread_first).nodes]
['broadcast', 'exp']
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core.dtypes import Aval
from ..core.ir import Graph, Literal, Node, Op, Var, make_params

NewVar = Callable[[Aval], Var]


def rewrite_nodes(graph: Graph, applies: Callable[[Node], bool],
                  rewrite: Callable[[Node, NewVar], list[Node]]) -> Graph:
    """``graph`` with each node ``applies`` accepts replaced by ``rewrite``'s nodes (which
    compute its outputs; fresh values from the ``NewVar`` given); ``graph`` itself where no
    node is accepted."""
    if not any(applies(n) for n in graph.nodes):
        return graph
    new_var = graph.var_factory()
    nodes: list[Node] = []
    for node in graph.nodes:
        nodes.extend(rewrite(node, new_var) if applies(node) else (node,))
    return Graph(graph.inputs, tuple(nodes), graph.outputs)


class Emitter:
    """The nodes of one replacement, in order, each a fresh value unless given ``target``."""

    def __init__(self, new_var: NewVar):
        self.new_var = new_var
        self.nodes: list[Node] = []

    def add(self, op: Op, inputs: tuple[Var, ...], aval: Aval, target: Var | None = None,
            **params) -> Var:
        var = target if target is not None else self.new_var(aval)
        self.nodes.append(Node(op, inputs, var, make_params(**params)))
        return var

    def constant(self, value: np.ndarray) -> Var:
        return self.add(Op.CONST, (), Aval(value.shape, value.dtype), value=Literal(value))

    def spread(self, var: Var, shape: tuple[int, ...]) -> Var:
        """``var`` broadcast to ``shape`` (itself where it has that shape)."""
        if var.shape == shape:
            return var
        return self.add(Op.BROADCAST, (var,), Aval(shape, var.dtype, var.aval.weak),
                        shape=shape)
