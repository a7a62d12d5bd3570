"""Kernel size: where a long chain of fused elementwise work is cut into several loop nests.

Numba's passes and LLVM's optimiser take time that grows faster than the length of the
function they compile: one kernel fusing 100 unrolled iterations of a loop body compiled in
9 s, four kernels of 25 in a third of that. A cut stores one value and starts a new loop nest
that reads it back, so it is placed only where an expression would otherwise exceed
``MAX_FUSED_NODES`` nodes.

>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> from arrjit.core.dtypes import Aval
>>> import numpy as np
>>> a = Aval((4,), np.dtype("float64"))
>>> x, *chain = [Var(k, a) for k in range(6)]
>>> nodes = tuple(Node(Op.NEG, (src,), dst) for src, dst in zip([x, *chain], chain))
>>> cuts = chain_cuts(Graph((x,), nodes, (chain[-1],)), {x, chain[-1]}, limit=2)
>>> [chain.index(v) for v in sorted(cuts, key=chain.index)]
[1, 3]
"""
from __future__ import annotations

from ..core.ir import ELEMENTWISE, VIEWS, Graph, Var

MAX_FUSED_NODES = 200


def chain_cuts(graph: Graph, stored: set[Var], limit: int = MAX_FUSED_NODES) -> set[Var]:
    """Values to store so that no fused expression computes more than ``limit`` nodes. A
    value's cone is the set of unstored elementwise and view nodes it is computed from. Where
    a node's cone would pass the limit, every value still to be read whose cone is more than
    a few nodes is cut (stored) at once, so the chain continues in one new loop nest rather
    than in a cascade of them."""
    last_read: dict[Var, int] = {}
    for t, node in enumerate(graph.nodes):
        for v in node.inputs:
            last_read[v] = t
    cone: dict[Var, frozenset[Var]] = {}
    cuts: set[Var] = set()
    for t, node in enumerate(graph.nodes):
        v = node.out
        if node.extra or node.op not in ELEMENTWISE | VIEWS:
            continue
        mine = frozenset((v,)).union(*(cone[i] for i in node.inputs if i in cone))
        if len(mine) > limit:
            for u in [u for u, c in cone.items() if last_read.get(u, -1) >= t
                      and len(c) > limit // 8]:
                cuts.add(u)
                del cone[u]
            mine = frozenset((v,)).union(*(cone[i] for i in node.inputs if i in cone))
        if v not in stored:
            cone[v] = mine
    return cuts
