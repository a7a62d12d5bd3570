"""The rows of a matrix-vector product that a loop body reads.

A JAX-style solver keeps its shapes static by masking: a Cholesky step computes
``s = a[:, j] - low @ v`` for every row and keeps ``where(rows >= j, s / s[j]**0.5, 0)``.
The rows of ``low @ v`` above ``j`` are computed and thrown away: half the work of the loop.
``first_rows`` finds, per matrix-vector product of a graph, a 0-d input ``s`` such that only
rows ``i >= s`` of the product are read, following the product's value forward through
elementwise steps until each use is one of

- a branch of a ``select`` whose predicate is ``arange(n) >= s`` (or ``>``, or the same
  comparison written the other way round), read where it holds, or the other branch of
  ``arange(n) < s`` (or ``<=``), read where it fails;
- a gather of the single element at ``s``, which is at ``s`` or, for a negative ``s``, at
  ``s + n`` (NumPy's position; out of range it raises).

A backend may then compute only the rows from ``max(s, 0)`` (``kernel.LibraryCall.rows_from``)
and leave the others zero; one that computes every row is as right. Only floating values are
followed: an elementwise step on them cannot raise, so the rows not computed change nothing
but values that are thrown away. ``s`` is an input of the graph (the loop's counter), so its
buffer holds it while the product runs.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Var, make_params
>>> f64, i64 = np.dtype("float64"), np.dtype("int64")
>>> j, low, rows = Var(0, Aval((), i64)), Var(1, Aval((4, 4), f64)), Var(2, Aval((4,), i64))
>>> v, p, js, keep, zero, zeros, out = (Var(3, Aval((4,), f64)), Var(4, Aval((4,), f64)),
...     Var(5, Aval((4,), i64)), Var(6, Aval((4,), np.dtype("bool"))), Var(7, Aval((), f64)),
...     Var(8, Aval((4,), f64)), Var(9, Aval((4,), f64)))
>>> g = Graph((j, low, rows, v), (
...     Node(Op.MATMUL, (low, v), p), Node(Op.BROADCAST, (j,), js, make_params(shape=(4,))),
...     Node(Op.GE, (rows, js), keep), Node(Op.CONST, (), zero, make_params(value=0.0)),
...     Node(Op.BROADCAST, (zero,), zeros, make_params(shape=(4,))),
...     Node(Op.SELECT, (keep, p, zeros), out)), (out,))
>>> [(product.id, s.id) for product, s in first_rows(g, aranges=frozenset({2})).items()]
[(4, 0)]
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..core.ir import ELEMENTWISE, Graph, Node, Op, Var

# a comparison with the arange first, read the other way round with the arange second
_SWAPPED = {Op.LT: Op.GT, Op.LE: Op.GE, Op.GT: Op.LT, Op.GE: Op.LE}
# comparisons ``arange OP s`` under which a select reads its branch only at rows >= s:
# the true branch (1) of ``>=``/``>``, the false branch (2) of ``<``/``<=``
_FROM_S = {(Op.GE, 1), (Op.GT, 1), (Op.LT, 2), (Op.LE, 2)}


def arange_inputs(node: Node, graph: Graph, aranges: frozenset[int]) -> frozenset[int]:
    """The positions of the body inputs of the ``WHILE`` ``node`` of ``graph`` that hold
    ``arange(n)`` on every iteration: loop-invariant operands that are ``arange`` constants
    of ``graph`` or its inputs at the positions ``aranges``."""
    p = node.param
    n_carry, n_cond = p["n_carry"], p["n_cond_consts"]
    held = _Aranges(graph, aranges)
    invariants = node.inputs[n_carry + n_cond:]
    return frozenset(n_carry + k for k, v in enumerate(invariants) if held(v))


def first_rows(graph: Graph, aranges: frozenset[int] = frozenset()) -> dict[Var, Var]:
    """Per matrix-vector product of ``graph`` (its result), the 0-d input ``s`` such that
    nothing reads the rows of the result above ``s``. ``aranges``: positions of inputs that
    hold ``arange(n)``."""
    return _Demand(graph, _Aranges(graph, aranges)).products()


class _Aranges:
    """Whether a value of a graph is ``arange(n)`` of an integer dtype."""

    def __init__(self, graph: Graph, inputs: frozenset[int]):
        self.graph = graph
        self.inputs = {graph.inputs[k] for k in inputs}

    def __call__(self, v: Var) -> bool:
        if v.ndim != 1 or v.dtype.kind not in "iu":
            return False
        if v in self.inputs:
            return True
        node = self.graph.producer(v)
        if node is None or node.op is not Op.CONST:
            return False
        return bool(np.array_equal(node.param["value"].array, np.arange(v.shape[0])))


class _Demand:
    def __init__(self, graph: Graph, is_arange: _Aranges):
        self.graph, self.is_arange = graph, is_arange
        self.uses: dict[Var, list[tuple[Node, int]]] = {}
        for node in graph.nodes:
            for k, v in enumerate(node.inputs):
                self.uses.setdefault(v, []).append((node, k))
        self.outputs = set(graph.outputs)
        self.counters = {v for v in graph.inputs if v.ndim == 0 and v.dtype.kind in "iu"}
        self.memo: dict[Var, Optional[Var]] = {}

    def products(self) -> dict[Var, Var]:
        found = {}
        for node in self.graph.nodes:
            a, b = node.inputs[:2] if node.op is Op.MATMUL else (None, None)
            if a is not None and b is not None and a.ndim == 2 and b.ndim == 1:
                s = self.first(node.out)
                if s is not None:
                    found[node.out] = s
        return found

    def first(self, v: Var) -> Optional[Var]:
        """The 0-d input below which no row of ``v`` is read (None: every row may be)."""
        if v not in self.memo:
            self.memo[v] = self._first(v)
        return self.memo[v]

    def _first(self, v: Var) -> Optional[Var]:
        if v in self.outputs or v.dtype.kind not in "fc" or not self.uses.get(v):
            return None
        found = {self._use(node, k, v) for node, k in self.uses[v]}
        if len(found) != 1:
            return None
        return found.pop()

    def _use(self, node: Node, k: int, v: Var) -> Optional[Var]:
        if node.op is Op.GATHER and k == 0 and node.param["index"] == (("array", 0),) \
                and v.ndim == 1 and node.inputs[1] in self.counters:
            return node.inputs[1]
        if node.op not in ELEMENTWISE or node.extra or node.out.shape != v.shape:
            return None
        if node.op is Op.SELECT and k > 0:
            s = self._compared(node.inputs[0], k)
            if s is not None:
                return s
        elif node.op is Op.SELECT:
            return None
        return self.first(node.out)

    def _compared(self, predicate: Var, branch: int) -> Optional[Var]:
        """``s`` where ``predicate`` compares ``arange(n)`` with ``s`` so that the select
        reads its ``branch`` only at rows >= s."""
        node = self.graph.producer(predicate)
        if node is None or node.op not in _SWAPPED:
            return None
        x, y = node.inputs
        op = node.op
        if not self.is_arange(x):
            x, y, op = y, x, _SWAPPED[op]
        if not self.is_arange(x) or (op, branch) not in _FROM_S:
            return None
        spread = self.graph.producer(y)
        s = spread.inputs[0] if spread is not None and spread.op is Op.BROADCAST else y
        return s if s in self.counters else None
