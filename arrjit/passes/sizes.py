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
    a node's cone would pass the limit, the values still to be read that start the chain's
    frontier are cut (stored) at once, so it continues in one new loop nest rather than in a
    cascade of them. (A cone is a size estimate: what lies behind a cut is dropped from the
    cones of values read later, even where they also reach it another way.)"""
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
            live = [u for u in cone if last_read.get(u, -1) >= t]
            big = [u for u in live if len(cone[u]) > limit // 8]
            # cut the earliest of them; the later ones are computed from those in the next
            # loop nest (cutting them too would give each its own nest)
            roots = [u for u in big if not any(w in cone[u] for w in big if w is not u)]
            behind = frozenset().union(*(cone.pop(u) for u in roots))
            cuts.update(roots)
            for u in live:
                if u in cone:
                    cone[u] = cone[u] - behind
            mine = frozenset((v,)).union(*(cone[i] for i in node.inputs if i in cone))
        if v not in stored:
            cone[v] = mine
    return cuts
