"""Planning a graph over chunks: which values one pass over the blocks computes, where a
reduction over a chunked axis ends a pass, and the errors for what cannot run per block.

A *stage* is one pass over the blocks: a sub-graph run on each block of its inputs (the
chunked arguments and the results of earlier reductions). A reduction over a chunked axis
ends a stage: each block yields a partial (the reduction of that block, axes kept), dask
combines the partials, and the combined value is an input of the next stage. ``mean`` is
one pass and a division, ``var`` and ``softmax`` over a chunked axis are two and three.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> from arrjit.dask.axes import classify
>>> f64 = np.dtype("float64")
>>> x, e, s = Var(0, Aval((8,), f64)), Var(1, Aval((8,), f64)), Var(2, Aval((), f64))
>>> g = Graph((x,), (Node(Op.EXP, (x,), e), Node(Op.REDUCE_SUM, (e,), s, (("axes", (0,)),))),
...           (s,))
>>> axes = classify(g)
>>> plan = plan_stages(g, axes, {axes.of(x)[0]: ChunkedAxis("x", 0, (4, 4))}, "f")
>>> [[o.kind for o in stage.outputs] for stage in plan.stages]
[['partial']]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..core.ir import REDUCTIONS, Graph, Node, Op, Var
from .axes import AxisClasses

ARG_REDUCTIONS = frozenset({Op.ARGMAX, Op.ARGMIN})


class ChunkingError(ValueError):
    """The function reads across chunks of a chunked axis in a way that cannot run block by
    block; the message names the argument, the axis and the rechunk that fixes it."""


@dataclass(frozen=True)
class ChunkedAxis:
    """An axis of a dask argument that is split into more than one chunk."""

    name: str
    axis: int
    chunks: tuple[int, ...]

    def describe(self) -> str:
        shown = ", ".join(map(str, self.chunks[:4])) + (", ..." if len(self.chunks) > 4 else "")
        return (f"axis {self.axis} of argument {self.name!r}, which is split into "
                f"{len(self.chunks)} chunks ({shown})")

    def fix(self) -> str:
        return f"{self.name.split('[')[0]}.rechunk({{{self.axis}: -1}})"


@dataclass(frozen=True)
class StageOutput:
    """What a stage returns per block: ``value`` (the block of ``var``) or ``partial`` (the
    reduction ``reduce`` of the block, its reduced axes kept with size 1)."""

    kind: str
    var: Var
    reduce: Node | None = None

    @property
    def source(self) -> Var:
        """The value the block program computes for this output."""
        return self.reduce.inputs[0] if self.reduce is not None else self.var


@dataclass(frozen=True)
class Stage:
    graph: Graph                   # inputs: arguments and earlier reductions; outputs: sources
    outputs: tuple[StageOutput, ...]


@dataclass(frozen=True)
class StagePlan:
    stages: tuple[Stage, ...]
    reductions: tuple[Node, ...]   # reductions over chunked axes, in the order they complete
    classes: AxisClasses
    chunked: frozenset[int]

    @property
    def passes(self) -> int:
        """How many times the plan reads the chunked data (stages with a chunked input)."""
        return sum(1 for stage in self.stages if any(
            c in self.chunked for v in stage.graph.inputs for c in self.classes.of(v)))


def plan_stages(graph: Graph, axes: AxisClasses, chunked: dict[int, ChunkedAxis],
                function: str) -> StagePlan:
    """Split ``graph`` into passes over the blocks, or raise ``ChunkingError``."""
    _check_blockwise(graph, axes, chunked, function)
    stage_of: dict[int, int] = {v.id: 0 for v in graph.inputs}
    ends: dict[int, int] = {}          # reduction output -> the stage that computes partials
    for node in graph.nodes:
        s = max((stage_of[v.id] for v in node.inputs), default=0)
        if _reduces_chunked(node, axes, chunked):
            ends[node.out.id] = s
            stage_of[node.out.id] = s + 1
        else:
            for v in node.outs:
                stage_of[v.id] = s
    reductions = [n for n in graph.nodes if n.out.id in ends]
    last = max((stage_of[v.id] for v in graph.outputs), default=0)
    available = {v.id for v in graph.inputs}
    stages = []
    for s in range(last + 1):
        wanted: list[StageOutput] = []
        for node in reductions:
            if ends[node.out.id] == s:
                if node.op in ARG_REDUCTIONS:
                    if node.inputs[0].id not in available:
                        wanted.append(StageOutput("value", node.inputs[0]))
                else:
                    wanted.append(StageOutput("partial", node.out, node))
        for v in graph.outputs:
            if stage_of[v.id] == s and v.id not in available and all(
                    w.var.id != v.id for w in wanted):
                wanted.append(StageOutput("value", v))
        if wanted:
            stages.append(Stage(_sub_graph(graph, available, [w.source for w in wanted]),
                                tuple(wanted)))
        available |= {n.out.id for n in reductions if ends[n.out.id] == s}
    plan = StagePlan(tuple(stages), tuple(reductions), axes, frozenset(chunked))
    for stage in plan.stages:
        _check_sizes_known(stage, axes, chunked, function)
    return plan


def _reduces_chunked(node: Node, axes: AxisClasses, chunked: dict[int, ChunkedAxis]) -> bool:
    if node.op not in REDUCTIONS:
        return False
    x = node.inputs[0]
    return any(axes.of(x)[a] in chunked for a in node.param["axes"])


def _sub_graph(graph: Graph, available: set[int], outputs: list[Var]) -> Graph:
    """The nodes that compute ``outputs`` from ``available`` values, in graph order."""
    needed: set[int] = set()
    stack = [v for v in outputs]
    inputs: dict[int, Var] = {}
    while stack:
        v = stack.pop()
        if v.id in needed or v.id in inputs:
            continue
        if v.id in available:
            inputs[v.id] = v
            continue
        node = graph.producer(v)
        assert node is not None, "a value without a producer is an input"
        for out in node.outs:
            needed.add(out.id)
        stack.extend(node.inputs)
    nodes = tuple(n for n in graph.nodes if n.out.id in needed)
    order = {v.id: k for k, v in enumerate(graph.inputs)}
    ins = sorted(inputs.values(), key=lambda v: (order.get(v.id, len(order)), v.id))
    return Graph(tuple(ins), nodes, tuple(outputs))


def _check_blockwise(graph: Graph, axes: AxisClasses, chunked: dict[int, ChunkedAxis],
                     function: str) -> None:
    for cls, why in axes.whole.items():
        if cls in chunked:
            where = chunked[cls]
            raise ChunkingError(
                f"{function}: {why} reads across {where.describe()}; on dask arrays arrjit "
                f"runs the function one block at a time, so that axis must be in one chunk. "
                f"Rechunk it first: {where.fix()}")
    for v in _values(graph):
        seen: dict[int, int] = {}
        for axis, cls in enumerate(axes.of(v)):
            if cls in chunked and cls in seen:
                where = chunked[cls]
                raise ChunkingError(
                    f"{function}: a value of shape {v.shape} pairs {where.describe()} with "
                    f"itself along axes {seen[cls]} and {axis} (a transpose of a square "
                    f"array?); blocks of it do not line up. Rechunk it first: {where.fix()}")
            seen[cls] = axis


def _check_sizes_known(stage: Stage, axes: AxisClasses, chunked: dict[int, ChunkedAxis],
                       function: str) -> None:
    known = {c for v in stage.graph.inputs for c in axes.of(v)}
    for v in _values(stage.graph):
        for cls in axes.of(v):
            if cls in chunked and cls not in known:
                raise ChunkingError(
                    f"{function}: a value of shape {v.shape} runs along "
                    f"{chunked[cls].describe()} without reading that argument's blocks; "
                    f"rechunk it into one chunk: {chunked[cls].fix()}")


def _values(graph: Graph) -> Iterable[Var]:
    yield from graph.inputs
    for node in graph.nodes:
        yield from node.outs
