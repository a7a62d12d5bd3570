"""Which axes of a graph's values are the same axis: classes of (value, axis) pairs that
one block of a chunked input determines, and the axes that an op needs whole.

Two axes are in one class when a block of one is exactly the matching block of the other:
an elementwise op keeps each axis of its operands, a transpose permutes them, a reduction
keeps the axes it does not reduce. An op whose result at one position reads other positions
of an axis (a slice that shifts, a sort, the contracted axis of a matmul, a reshape that
merges axes) marks that axis *whole*: it may not be split into chunks. Reductions are
recorded too: a reduction over a chunked class is a pass over the chunks (``stages``).

Per-op rules live in ``AXIS_RULES`` (every ``Op`` has one; ``tests/test_dask.py`` checks).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> x = Var(0, Aval((4, 3), np.dtype("float64")))
>>> t = Var(1, Aval((3, 4), np.dtype("float64")))
>>> s = Var(2, Aval((3,), np.dtype("float64")))
>>> axes = classify(Graph((x,), (Node(Op.TRANSPOSE, (x,), t, (("perm", (1, 0)),)),
...                               Node(Op.REDUCE_SUM, (t,), s, (("axes", (1,)),))), (s,)))
>>> axes.of(x) == (axes.of(t)[1], axes.of(t)[0]), axes.of(s) == (axes.of(x)[1],)
(True, True)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..core.ir import (CONTROL_FLOW, ELEMENTWISE, LINALG, REDUCTIONS, Graph, Node, Op, Var)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[tuple[int, int], tuple[int, int]] = {}

    def add(self, item: tuple[int, int]) -> None:
        self.parent.setdefault(item, item)

    def find(self, item: tuple[int, int]) -> tuple[int, int]:
        root = item
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[item] != root:
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, a: tuple[int, int], b: tuple[int, int]) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


@dataclass
class _Builder:
    """What the rules record while walking the graph."""

    uf: _UnionFind = field(default_factory=_UnionFind)
    ndims: dict[int, int] = field(default_factory=dict)
    whole: list[tuple[tuple[int, int], str]] = field(default_factory=list)

    def same(self, a: Var, i: int, b: Var, j: int) -> None:
        if a.shape[i] == b.shape[j]:
            self.uf.union((a.id, i), (b.id, j))
        else:                     # a size-1 axis stretched by a broadcast: not the same axis
            self.need_whole(a, i, "broadcast")

    def need_whole(self, v: Var, axis: int, why: str) -> None:
        self.whole.append(((v.id, axis), why))

    def all_whole(self, node: Node) -> None:
        for v in (*node.inputs, *node.outs):
            for axis in range(v.ndim):
                self.need_whole(v, axis, node.op.value)


@dataclass(frozen=True)
class AxisClasses:
    """The class of every axis of every value, and the classes that must stay whole (with the
    op that needs them so)."""

    classes: dict[int, tuple[int, ...]]          # var id -> class per axis
    whole: dict[int, str]                        # class -> the op that reads across it

    def of(self, v: Var) -> tuple[int, ...]:
        return self.classes[v.id]


def classify(graph: Graph) -> AxisClasses:
    """Axis classes of ``graph`` (every value, inputs included)."""
    b = _Builder()
    for v in graph.inputs:
        _add(b, v)
    for node in graph.nodes:
        for v in node.outs:
            _add(b, v)
        AXIS_RULES[node.op](b, node)
    ids: dict[tuple[int, int], int] = {}
    classes: dict[int, tuple[int, ...]] = {}

    def class_of(item: tuple[int, int]) -> int:
        return ids.setdefault(b.uf.find(item), len(ids))

    for var_id, ndim in b.ndims.items():
        classes[var_id] = tuple(class_of((var_id, a)) for a in range(ndim))
    whole: dict[int, str] = {}
    for item, why in b.whole:
        whole.setdefault(class_of(item), why)
    return AxisClasses(classes, whole)


def _add(b: _Builder, v: Var) -> None:
    b.ndims[v.id] = v.ndim
    for axis in range(v.ndim):
        b.uf.add((v.id, axis))


# -- the rules, one per op kind ------------------------------------------------------------------
def _elementwise(b: _Builder, node: Node) -> None:
    out = node.out
    for v in node.inputs:
        if v.shape != out.shape:
            b.all_whole(node)
            return
        for axis in range(out.ndim):
            b.same(v, axis, out, axis)


def _broadcast(b: _Builder, node: Node) -> None:
    (x,), out = node.inputs, node.out
    lead = out.ndim - x.ndim
    for axis in range(x.ndim):
        if x.shape[axis] == out.shape[lead + axis]:
            b.same(x, axis, out, lead + axis)


def _transpose(b: _Builder, node: Node) -> None:
    (x,), out = node.inputs, node.out
    for k, p in enumerate(node.param["perm"]):
        b.same(x, p, out, k)


def _reshape(b: _Builder, node: Node) -> None:
    """Axes that a reshape carries over unchanged (the same size, with the same product of
    sizes before them) stay in their class; merged or split axes must be whole."""
    (x,), out = node.inputs, node.out
    before_in, before_out = _prefix_products(x.shape), _prefix_products(out.shape)
    carried = set()
    for i, n in enumerate(x.shape):
        for j, m in enumerate(out.shape):
            if n == m and before_in[i] == before_out[j] and n != 1:
                b.same(x, i, out, j)
                carried.add((0, i))
                carried.add((1, j))
    for side, v in ((0, x), (1, out)):
        for axis in range(v.ndim):
            if (side, axis) not in carried and v.shape[axis] != 1:
                b.need_whole(v, axis, "reshape")


def _prefix_products(shape: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for n in shape:
        out.append(acc)
        acc *= n
    return out


def _slice(b: _Builder, node: Node) -> None:
    (x,), out = node.inputs, node.out
    p = node.param
    for axis, (start, step) in enumerate(zip(p["starts"], p["steps"])):
        if start == 0 and step == 1 and x.shape[axis] == out.shape[axis]:
            b.same(x, axis, out, axis)
        else:
            b.need_whole(x, axis, "a slice")
            b.need_whole(out, axis, "a slice")


def _reduce(b: _Builder, node: Node) -> None:
    (x,), out = node.inputs, node.out
    axes = node.param["axes"]
    kept = [a for a in range(x.ndim) if a not in axes]
    for k, a in enumerate(kept):
        b.same(x, a, out, k)


def _matmul(b: _Builder, node: Node) -> None:
    (x, y), out = node.inputs, node.out
    b.need_whole(x, x.ndim - 1, "matmul (the contracted axis)")
    b.need_whole(y, max(y.ndim - 2, 0), "matmul (the contracted axis)")
    x_batch, y_batch = x.shape[:-2], y.shape[:-2]
    out_batch = out.ndim - (x.ndim > 1) - (y.ndim > 1)
    for v, batch in ((x, x_batch), (y, y_batch)):
        lead = out_batch - len(batch)
        for axis, n in enumerate(batch):
            if n == out.shape[lead + axis]:
                b.same(v, axis, out, lead + axis)
    if x.ndim > 1:
        b.same(x, x.ndim - 2, out, out_batch)
    if y.ndim > 1:
        b.same(y, y.ndim - 1, out, out.ndim - 1)


def _along_axis(b: _Builder, node: Node) -> None:
    """Sort, argsort, cumsum, cumprod, concatenate and roll read all of their ``axis``."""
    out, axis = node.out, node.param["axis"]
    for v in node.inputs:
        if v.ndim != out.ndim:
            b.all_whole(node)
            return
        for a in range(out.ndim):
            if a == axis:
                b.need_whole(v, a, node.op.value)
                b.need_whole(out, a, node.op.value)
            else:
                b.same(v, a, out, a)


def _searchsorted(b: _Builder, node: Node) -> None:
    (a, v), out = node.inputs, node.out
    for axis in range(a.ndim):
        b.need_whole(a, axis, "searchsorted (the sorted array)")
    for axis in range(v.ndim):
        b.same(v, axis, out, axis)


def _const(b: _Builder, node: Node) -> None:
    for axis in range(node.out.ndim):         # a constant's values depend on the position
        b.need_whole(node.out, axis, "a constant array (pass it as an argument instead)")


Rule = Callable[[_Builder, Node], None]
AXIS_RULES: dict[Op, Rule] = {
    **{op: _elementwise for op in ELEMENTWISE},
    **{op: _reduce for op in REDUCTIONS},
    **{op: _Builder.all_whole for op in CONTROL_FLOW | LINALG | {Op.EINSUM, Op.GATHER,
                                                                  Op.SCATTER, Op.CONVOLVE}},
    Op.CONST: _const,
    Op.BROADCAST: _broadcast,
    Op.TRANSPOSE: _transpose,
    Op.RESHAPE: _reshape,
    Op.SLICE: _slice,
    Op.MATMUL: _matmul,
    Op.SEARCHSORTED: _searchsorted,
    **{op: _along_axis for op in (Op.SORT, Op.ARGSORT, Op.CUMSUM, Op.CUMPROD,
                                  Op.CONCATENATE, Op.ROLL)},
}
