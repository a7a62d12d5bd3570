"""Kernel size: where a long chain of fused elementwise work is cut into several loop nests.

Numba and LLVM take time per fused node, and a kernel's machine code slows down once LLVM
stops vectorising its loop. What a node costs depends on what it compiles to: arithmetic is a
few instructions (numba types and lowers a 1000-node chain of them in time linear in its
length, and one kernel runs it fastest), while a math-library function (``exp``, ``sin``,
``power``: ``COSTLY`` ops other than a division or a square root) is inlined as dozens of
instructions, and beyond a few dozen of them in one loop LLVM compiles more slowly per call
and leaves the loop scalar; a roll adds its wrap-around to every access through it. So a
node weighs ``1``, ``FUNCTION_WEIGHT`` for a library function or ``ROLL_WEIGHT`` for a roll,
and a cut (storing one value, starting a new loop nest that reads it back) is placed
only where an expression would otherwise weigh more than ``MAX_FUSED_WEIGHT``.

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

from ..core.ir import ELEMENTWISE, VIEWS, Graph, Node, Op, Var
from ..core.rules import COSTLY

MAX_FUSED_WEIGHT = 1000
FUNCTION_WEIGHT = 40
# A roll's wrap-around is a compare, a select and an add in every access through it, and the
# accesses multiply (120 rolls of a 4-d array over 4 axes as one kernel: 33 s to compile,
# 15 s as four).
ROLL_WEIGHT = 25
_INSTRUCTIONS = frozenset({Op.DIV, Op.SQRT})   # costly to run, one instruction to compile
WEIGHTS: dict[Op, int] = {   # ops not listed weigh 1
    **{op: FUNCTION_WEIGHT for op, costly in COSTLY.items()
       if costly and op not in _INSTRUCTIONS},
    Op.ROLL: ROLL_WEIGHT,
}


def weight(node: Node) -> int:
    """What fusing ``node`` adds to its kernel's compile (see the module docstring)."""
    return WEIGHTS.get(node.op, 1)


def chain_cuts(graph: Graph, stored: set[Var], limit: int = MAX_FUSED_WEIGHT) -> set[Var]:
    """Values to store so that no fused expression weighs more than ``limit``. A value's cone
    is the set of unstored elementwise and view nodes it is computed from, its weight the sum
    of theirs. Where a node's cone would pass the limit, the values still to be read that
    start the chain's frontier are cut (stored) at once, so it continues in one new loop nest rather than in a
    cascade of them. (A cone is a size estimate: what lies behind a cut is dropped from the
    cones of values read later, even where they also reach it another way.)"""
    last_read: dict[Var, int] = {}
    for t, node in enumerate(graph.nodes):
        for v in node.inputs:
            last_read[v] = t
    cone: dict[Var, frozenset[Var]] = {}
    weights: dict[Var, int] = {}
    cuts: set[Var] = set()

    def weighs(values: frozenset[Var]) -> int:
        return sum(weights[u] for u in values)

    for t, node in enumerate(graph.nodes):
        v = node.out
        if node.extra or node.op not in ELEMENTWISE | VIEWS:
            continue
        weights[v] = weight(node)
        mine = frozenset((v,)).union(*(cone[i] for i in node.inputs if i in cone))
        if weighs(mine) > limit:
            live = [u for u in cone if last_read.get(u, -1) >= t]
            big = [u for u in live if weighs(cone[u]) > limit // 8]
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
