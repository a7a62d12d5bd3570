"""Lowering: a traced graph through the target-neutral passes, loop bodies included.

``lower`` simplifies and fuses a graph, and does the same for the condition and body of each
``WHILE`` step, so that planning and the backends receive fused programs all the way down and
never call back into an earlier stage.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> x, y = Var(0, Aval((4,), np.dtype("float64"))), Var(1, Aval((4,), np.dtype("float64")))
>>> len(lower(Graph((x,), (Node(Op.EXP, (x,), y),), (y,))).partition.steps)
1
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..config import config
from ..core.ir import Graph, Node, Op
from ..core.verify import verify
from .fuse import partition
from .kernel import LibraryCall, Partition
from .simplify import simplify


@dataclass(frozen=True)
class LoweredLoop:
    """A ``WHILE`` step with its condition and body lowered."""

    node: Node
    cond: "Lowered"
    body: "Lowered"


@dataclass(frozen=True)
class Lowered:
    """A simplified graph, its fused steps, and the lowered loops among them (by step index)."""

    graph: Graph
    partition: Partition
    loops: dict[int, LoweredLoop] = field(default_factory=dict)


def lower(graph: Graph, loop_part: bool = False, positions: bool = False) -> Lowered:
    """Simplify and fuse ``graph`` and, recursively, every loop's condition and body
    (``loop_part``). ``positions``: whether the target's kernels read at run-time positions
    (``fuse.partition``)."""
    if config.verify_ir:
        verify(graph)
    simple = simplify(graph)
    if config.verify_ir:
        verify(simple)
    fused = partition(simple, views_out=not loop_part, positions=positions)
    loops = {}
    for k, step in enumerate(fused.steps):
        if isinstance(step, LibraryCall) and step.node.op is Op.WHILE:
            p = step.node.param
            loops[k] = LoweredLoop(step.node, lower(p["cond"], True, positions),
                                   lower(p["body"], True, positions))
    return Lowered(simple, fused, loops)
