"""Forward mode over a graph: each node's tangent from its inputs' tangents, computed
alongside its value (``None`` is a zero tangent and costs nothing)."""
from __future__ import annotations

from typing import Sequence

from ..core.ir import Graph, Op, Var
from . import loops
from .elementwise import PARTIALS, partials
from .graphs import run_node, scalar_or_value
from ..core.marks import CustomVJP, StopGradient
from .reverse import has_derivative
from .rules import JVP_RULES
from .values import Value, add, as_dtype, is_inexact, scale


def jvp_graph(graph: Graph, values: Sequence[Value], tangents: Sequence[Value | None]
              ) -> tuple[list[Value], list[Value | None]]:
    """(outputs, output tangents) of ``graph`` at ``values`` along ``tangents``."""
    marks = graph.annotations or {}
    env: dict[Var, Value] = dict(zip(graph.inputs, values))
    tenv: dict[Var, Value] = {v: t for v, t in zip(graph.inputs, tangents)
                              if t is not None and is_inexact(v.dtype)}
    regions = [m for m in marks.values() if isinstance(m, CustomVJP)]
    for k, node in enumerate(graph.nodes):
        ins = [env[v] for v in node.inputs]
        tins = [tenv.get(v) for v in node.inputs]
        moving = has_derivative(node) and any(t is not None for t in tins)
        for region in regions:
            if moving and region.start <= k < region.end:
                raise TypeError(
                    f"forward-mode differentiation (jvp) of the custom_vjp function "
                    f"{region.name!r}: a custom_vjp rule defines reverse mode only. Use "
                    f"arrjit.vjp or arrjit.grad, or define the function without custom_vjp.")
        if node.op is Op.WHILE and moving:
            outs, touts = loops.while_jvp(node, ins, tins, jvp_graph)
        else:
            outs = run_node(node, ins)
            touts = [None] * len(outs)
            if moving:
                scalars = [scalar_or_value(graph, v, x) for v, x in zip(node.inputs, ins)]
                if node.extra:     # several results: the rule takes and gives a list
                    touts = list(_node_jvp(node, scalars, outs, tins))
                else:
                    touts = [_node_jvp(node, scalars, outs[0], tins)]
        for var, value, tangent in zip(node.outs, outs, touts):
            env[var] = value
            if (tangent is not None and is_inexact(var.dtype)
                    and not isinstance(marks.get(var.id), StopGradient)):
                tenv[var] = as_dtype(tangent, var.dtype)
    return [env[v] for v in graph.outputs], [tenv.get(v) for v in graph.outputs]


def _node_jvp(node, ins, out, tins) -> Value | None:
    if node.op in JVP_RULES:
        return JVP_RULES[node.op](node, ins, out, tins)
    if node.op not in PARTIALS:
        return None
    parts = partials(node.op, ins, out)
    total = None
    for t, d in zip(tins, parts):
        if t is not None and d is not None:
            total = add(total, scale(t, d))
    return total
