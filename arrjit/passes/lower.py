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

from dataclasses import dataclass, field, replace
from typing import Mapping

from ..config import config
from ..core.ir import Graph, Node, Op, Var
from ..core.verify import verify
from .demand import arange_inputs, first_rows
from .fuse import partition
from .kernel import LibraryCall, Partition
from .ranges import Bounds, loop_entry, value_ranges
from .simplify import simplify
from .updates import updates_as_selects, updates_sunk


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


def lower(graph: Graph, loop_part: bool = False, positions: bool = False,
          known: Mapping[Var, Bounds] | None = None,
          aranges: frozenset[int] = frozenset()) -> Lowered:
    """Simplify and fuse ``graph`` and, recursively, every loop's condition and body
    (``loop_part``). ``positions``: whether the target's kernels read at run-time positions
    (``fuse.partition``). ``known``: bounds of the graph's inputs (a loop body's counter),
    from which the bounds of its integer values follow (``ranges``). ``aranges``: the
    positions of inputs that hold ``arange(n)`` (``demand``)."""
    if config.verify_ir:
        verify(graph)
    simple = simplify(graph)
    if positions and not loop_part:
        simple = updates_sunk(updates_as_selects(simple))
    if config.verify_ir:
        verify(simple)
    bounds = value_ranges(simple, known or {}) if positions else {}
    fused = partition(simple, views_out=not loop_part, positions=positions, bounds=bounds)
    if loop_part and positions:
        fused = _with_first_rows(fused, first_rows(simple, aranges))
    loops = {}
    for k, step in enumerate(fused.steps):
        if isinstance(step, LibraryCall) and step.node.op is Op.WHILE:
            p = step.node.param
            cond_known, body_known = loop_entry(step.node, bounds) if positions else ({}, {})
            inner = arange_inputs(step.node, simple, aranges)
            loops[k] = LoweredLoop(step.node, lower(p["cond"], True, positions, cond_known),
                                   lower(p["body"], True, positions, body_known, inner))
    return Lowered(simple, fused, loops)


def _with_first_rows(fused: Partition, rows: dict[Var, Var]) -> Partition:
    """``fused`` with each product in ``rows`` marked with the first row read of it."""
    if not rows:
        return fused
    steps = tuple(replace(s, rows_from=rows[s.node.out])
                  if isinstance(s, LibraryCall) and s.node.out in rows else s
                  for s in fused.steps)
    return replace(fused, steps=steps)
