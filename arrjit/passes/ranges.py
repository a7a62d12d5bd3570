"""Value ranges of integer values: bounds that every element of a value lies within, found
from constants, arithmetic on them and loop conditions, so that a run-time position whose
bounds lie inside its axis needs no check and no wrap (``kernel.Position.in_range``).

The bounds are sound or absent: an operation whose exact result could leave its dtype's range
(and wrap) gives no bounds, and so does every operation without a rule. Inside a loop a carry
starts within its initial value's bounds, the body's results widen them (a bound that still
moves after a few rounds is dropped), and the body runs only where the condition holds, so a
counter compared with a bound is below it there (``loop_entry``).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Var, make_params
>>> i64 = np.dtype("int64")
>>> i, one, j, k = (Var(n, Aval((), i64)) for n in range(4))
>>> g = Graph((i,), (Node(Op.CONST, (), one, make_params(value=1)),
...                 Node(Op.SUB, (i, one), j), Node(Op.MUL, (j, j), k)), (k,))
>>> found = value_ranges(g, {i: (1, 98)})
>>> found[j], found[k]
((0, 97), (0, 9409))
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Optional

import numpy as np

from ..core.ir import Graph, Literal, Node, Op, Var

Bounds = tuple[float, float]      # inclusive; integers, or -inf / inf where unknown
UNKNOWN: Bounds = (-math.inf, math.inf)

# rounds of a loop's carries before a bound that still moves is dropped
_ROUNDS = 3


def _product(a: Bounds, b: Bounds) -> Optional[Bounds]:
    if not all(math.isfinite(v) for v in a + b):
        return None
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


def _remainder(a: Bounds, b: Bounds) -> Optional[Bounds]:
    """NumPy's integer ``%`` by a positive divisor: the sign of the divisor."""
    if b[0] <= 0 or not math.isfinite(b[1]):
        return None
    if a[0] >= 0 and a[1] < b[0]:
        return a
    return 0, b[1] - 1


# Op -> bounds of the result from its operands' (None: no bounds)
_RULES: dict[Op, Callable[..., Optional[Bounds]]] = {
    Op.ADD: lambda a, b: (a[0] + b[0], a[1] + b[1]),
    Op.SUB: lambda a, b: (a[0] - b[1], a[1] - b[0]),
    Op.NEG: lambda a: (-a[1], -a[0]),
    Op.MUL: _product,
    Op.MOD: _remainder,
    Op.MAXIMUM: lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
    Op.MINIMUM: lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
    Op.CAST: lambda a: a,
    Op.BROADCAST: lambda a: a,
    Op.RESHAPE: lambda a: a,
    Op.TRANSPOSE: lambda a: a,
    Op.SLICE: lambda a: a,
    Op.ROLL: lambda a: a,
}


def _fits(bounds: Bounds, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return info.min <= bounds[0] and bounds[1] <= info.max


def _constant(node: Node) -> Optional[Bounds]:
    value = node.param["value"]
    array = value.array if isinstance(value, Literal) else np.asarray(value)
    if array.size == 0 or array.dtype.kind not in "iub":
        return None
    return int(array.min()), int(array.max())


def _of(v: Var, found: Mapping[Var, Bounds]) -> Optional[Bounds]:
    return (0, 1) if v.dtype == np.bool_ else found.get(v)


def _node_bounds(node: Node, found: Mapping[Var, Bounds]) -> Optional[Bounds]:
    if node.op is Op.CONST:
        return _constant(node)
    if node.op is Op.SELECT:
        branches = [_of(v, found) for v in node.inputs[1:]]
        if any(b is None for b in branches):
            return None
        return (min(b[0] for b in branches if b is not None),
                max(b[1] for b in branches if b is not None))
    if node.op is Op.GATHER:          # elements of its source
        return _of(node.inputs[0], found)
    rule = _RULES.get(node.op)
    operands = [_of(v, found) for v in node.inputs]
    if rule is None or any(b is None for b in operands):
        return None
    return rule(*operands)


def value_ranges(graph: Graph, known: Mapping[Var, Bounds]) -> dict[Var, Bounds]:
    """Bounds of ``graph``'s integer values, from ``known`` bounds of its inputs; a value
    without bounds is absent."""
    found: dict[Var, Bounds] = {v: b for v, b in known.items() if b != UNKNOWN}
    for node in graph.nodes:
        if node.op is Op.WHILE or len(node.outs) != 1 or node.out.dtype.kind not in "iu":
            continue
        bounds = _node_bounds(node, found)
        if bounds is not None and all(math.isfinite(v) for v in bounds) and _fits(
                bounds, node.out.dtype):
            found[node.out] = bounds
    return found


def within(bounds: Mapping[Var, Bounds], index: Var, extent: int) -> bool:
    """Whether the integer ``index`` lies in ``[0, extent)`` by its ``bounds``: a position
    on an axis of ``extent`` that needs no check and no count from the end."""
    low, high = bounds.get(index, UNKNOWN)
    return 0 <= low and high < extent


def loop_entry(node: Node, outer: Mapping[Var, Bounds]) -> tuple[dict[Var, Bounds],
                                                                   dict[Var, Bounds]]:
    """Bounds of the inputs of a ``WHILE`` node's condition and of its body, from the bounds
    of the node's operands in the enclosing graph: the carries' over every iteration (the
    body's: where the condition holds), the constants' as they are outside."""
    p = node.param
    cond, body, n_carry, n_cond = p["cond"], p["body"], p["n_carry"], p["n_cond_consts"]
    operands = [outer.get(v, UNKNOWN) for v in node.inputs]
    inits = operands[:n_carry]
    cond_consts = operands[n_carry:n_carry + n_cond]
    body_consts = operands[n_carry + n_cond:]
    carries = list(inits)
    for round_ in range(_ROUNDS + 1):
        entry = _holding(cond, carries + cond_consts, n_carry)
        results = value_ranges(body, dict(zip(body.inputs, entry + body_consts)))
        grown = [_join(c, results.get(out, UNKNOWN)) for c, out in zip(carries, body.outputs)]
        if grown == carries:
            break
        widen = round_ >= _ROUNDS - 1
        carries = [g if not widen else _widened(c, g) for c, g in zip(carries, grown)]
    else:
        carries = [UNKNOWN] * n_carry
    entry = _holding(cond, carries + cond_consts, n_carry)
    return (dict(zip(cond.inputs, carries + cond_consts)),
            dict(zip(body.inputs, entry + body_consts)))


def _join(a: Bounds, b: Bounds) -> Bounds:
    return min(a[0], b[0]), max(a[1], b[1])


def _widened(old: Bounds, new: Bounds) -> Bounds:
    return (old[0] if new[0] >= old[0] else -math.inf,
            old[1] if new[1] <= old[1] else math.inf)


# a comparison ``carry OP bound`` holding -> the carry's new (lower, upper) given the bound's
_HOLDING: dict[Op, Callable[[Bounds], Bounds]] = {
    Op.LT: lambda b: (-math.inf, b[1] - 1),
    Op.LE: lambda b: (-math.inf, b[1]),
    Op.GT: lambda b: (b[0] + 1, math.inf),
    Op.GE: lambda b: (b[0], math.inf),
}
_MIRRORED = {Op.LT: Op.GT, Op.LE: Op.GE, Op.GT: Op.LT, Op.GE: Op.LE}


def _holding(cond: Graph, inputs: list[Bounds], n_carry: int) -> list[Bounds]:
    """The carries' bounds (the first ``n_carry`` of ``inputs``) where ``cond`` holds: a
    condition that is one comparison of a carry with a bounded value bounds that carry."""
    carries = inputs[:n_carry]
    producer = {n.out: n for n in cond.nodes}
    test = producer.get(cond.outputs[0])
    if test is None or test.op not in _HOLDING:
        return carries
    found = value_ranges(cond, dict(zip(cond.inputs, inputs)))
    position = {v: k for k, v in enumerate(cond.inputs[:n_carry])}
    left, right = test.inputs
    for op, carry, other in ((test.op, left, right), (_MIRRORED[test.op], right, left)):
        k = position.get(carry)
        if k is None or other not in found:
            continue
        lo, hi = _HOLDING[op](found[other])
        carries = list(carries)
        carries[k] = (max(carries[k][0], lo), min(carries[k][1], hi))
    return carries
