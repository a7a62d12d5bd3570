"""``verify``: a graph is in SSA form, in topological order, and every node's result has the
shape and dtype its op's abstract-evaluation rule (``core.rules.ABSTRACT_EVAL``) gives.

It runs on every graph entering the passes when ``config.verify_ir`` is on (the tests turn it
on), so a primitive that records an inconsistent node fails where it is recorded.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> x = Var(0, Aval((3,), np.dtype("float64")))
>>> bad = Var(1, Aval((3,), np.dtype("float32")))
>>> verify(Graph((x,), (Node(Op.EXP, (x,), bad),), (bad,)))
Traceback (most recent call last):
...
AssertionError: exp gives float64[3], but its node records float32[3]
"""
from __future__ import annotations

from .ir import Graph, Node, Op
from .rules import ABSTRACT_EVAL


def verify(graph: Graph) -> None:
    """Raise AssertionError naming the first bad node (loop bodies included)."""
    defined = set(graph.inputs)
    for n in graph.nodes:
        for v in n.inputs:
            if v not in defined:
                raise AssertionError(f"{n.op.value} reads a var defined later or never: {v}")
        for v in n.outs:
            if v in defined:
                raise AssertionError(f"{n.op.value} redefines {v}")
            defined.add(v)
        _check_aval(n)
        if n.op is Op.WHILE:
            verify(n.param["cond"])
            verify(n.param["body"])
    for v in graph.outputs:
        if v not in defined:
            raise AssertionError(f"output {v} is never defined")


def _check_aval(node: Node) -> None:
    try:
        expected = ABSTRACT_EVAL[node.op](node)
    except (ValueError, TypeError, IndexError) as err:
        raise AssertionError(f"{node.op.value}: {err}") from None
    got = node.out.aval
    if expected.shape != got.shape or expected.dtype != got.dtype:
        raise AssertionError(f"{node.op.value} gives {_fmt(expected)}, but its node records "
                             f"{_fmt(got)}")


def _fmt(aval) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"
