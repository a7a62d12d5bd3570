"""Windows at run-time starts: an index vector ``start + arange(first, first + n)`` whose
0-d ``start`` the program clamps so that every position is in range (``lax.dynamic_slice``
along a traced start builds exactly this). A gather through such a vector reads a window of
its source: an index map with a run-time offset (``views.gather_map``), not a library call.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Literal, Node, Var, make_params
>>> i64 = np.dtype("int64")
>>> s, lo, hi, a, b = (Var(k, Aval((), i64)) for k in range(5))
>>> steps, spread, index = Var(5, Aval((3,), i64)), Var(6, Aval((3,), i64)), Var(7, Aval((3,), i64))
>>> nodes = [Node(Op.CONST, (), lo, make_params(value=0)), Node(Op.MAXIMUM, (s, lo), a),
...          Node(Op.CONST, (), hi, make_params(value=7)), Node(Op.MINIMUM, (a, hi), b),
...          Node(Op.CONST, (), steps, make_params(value=Literal(np.arange(3)))),
...          Node(Op.BROADCAST, (b,), spread, make_params(shape=(3,))),
...          Node(Op.ADD, (spread, steps), index)]
>>> producer = {n.out: n for n in nodes}
>>> window_start(index, 10, producer) == (b, 0)     # positions 0..9 for every start
True
>>> window_start(index, 9, producer) is None        # a start of 7 would read position 9
True
"""
from __future__ import annotations

import math

import numpy as np

from ..core.ir import Literal, Node, Op, Var


def constant_value(var: Var, producer: dict[Var, Node]) -> np.ndarray | None:
    """The value of ``var`` when a constant node computes it."""
    node = producer.get(var)
    if node is None or node.op is not Op.CONST:
        return None
    value = node.param["value"]
    return value.array if isinstance(value, Literal) else np.asarray(value)


def bounds(var: Var, producer: dict[Var, Node]) -> tuple[float, float]:
    """Inclusive bounds of the 0-d integer ``var`` as far as constants and their ``minimum``
    and ``maximum`` (``clip``) tell; ``-inf``/``inf`` where nothing is known."""
    value = constant_value(var, producer)
    if value is not None and value.shape == ():
        return int(value), int(value)
    node = producer.get(var)
    if node is None or node.op not in (Op.MINIMUM, Op.MAXIMUM) or var.dtype.kind not in "iu":
        return -math.inf, math.inf
    (lo_a, hi_a), (lo_b, hi_b) = (bounds(v, producer) for v in node.inputs)
    if node.op is Op.MAXIMUM:
        return max(lo_a, lo_b), max(hi_a, hi_b)
    return min(lo_a, lo_b), min(hi_a, hi_b)


def window_start(index: Var, extent: int, producer: dict[Var, Node]) -> tuple[Var, int] | None:
    """``(start, first)`` when the 1-d integer vector ``index`` is ``start + arange(first,
    first + n)`` (a broadcast 0-d ``start`` plus a constant run of consecutive integers) and
    every position it can hold lies in ``[0, extent)``, else None."""
    node = producer.get(index)
    if (node is None or node.op is not Op.ADD or index.ndim != 1 or index.shape[0] == 0
            or index.dtype.kind not in "iu"):
        return None
    n = index.shape[0]
    for spread, steps in (node.inputs, node.inputs[::-1]):
        run = constant_value(steps, producer)
        source = producer.get(spread)
        if (run is None or run.shape != (n,) or source is None or source.op is not Op.BROADCAST
                or source.inputs[0].ndim != 0
                or not np.array_equal(run, run[0] + np.arange(n))):
            continue
        start, first = source.inputs[0], int(run[0])
        lo, hi = bounds(start, producer)
        if lo + first >= 0 and hi + first + n <= extent:
            return start, first
    return None
