"""Reverse mode over a graph: run it forward on values, then push cotangents back through
the nodes in reverse order with the per-op rules.

Only *active* values take part: those computed (through ops that have derivatives) from an
input being differentiated, of a floating-point or complex dtype, and not marked by
``stop_gradient``. A zero cotangent is ``None`` and costs nothing.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.ir import ELEMENTWISE, Graph, Node, Op, Var
from ..core.tree import unflatten
from . import loops
from .custom import check_bwd_result
from .elementwise import PARTIALS, ZERO_DERIVATIVE, partials
from .graphs import input_values, run_node, scalar_or_value, trace_function
from ..core.marks import CustomVJP, StopGradient
from .rules import JVP_RULES, NON_DIFFERENTIABLE, VJP_RULES, transpose_of_jvp
from .values import Value, add, as_dtype, is_inexact, scale


def has_derivative(node: Node) -> bool:
    return node.op not in NON_DIFFERENTIABLE and node.op not in ZERO_DERIVATIVE


def active_vars(graph: Graph, active_inputs: Sequence[bool]) -> set[Var]:
    """The vars whose value depends differentiably on the active inputs."""
    marks = graph.annotations or {}
    active = {v for v, on in zip(graph.inputs, active_inputs) if on and is_inexact(v.dtype)}
    for node in graph.nodes:
        if has_derivative(node) and any(v in active for v in node.inputs):
            active.update(v for v in node.outs if is_inexact(v.dtype)
                          and not isinstance(marks.get(v.id), StopGradient))
    return active


class Linearized:
    """``graph`` run forward on ``values``; ``backward`` maps output cotangents to input
    cotangents (``None`` where zero)."""

    def __init__(self, graph: Graph, values: Sequence[Value], active_inputs: Sequence[bool]):
        self.graph = graph
        self.active = active_vars(graph, active_inputs)
        self.env: dict[Var, Value] = dict(zip(graph.inputs, values))
        self.saved: dict[int, object] = {}      # node index -> what a loop saved going forward
        for k, node in enumerate(graph.nodes):
            ins = [self.env[v] for v in node.inputs]
            if node.op is Op.WHILE and any(v in self.active for v in node.outs):
                outs, self.saved[k] = loops.while_forward(node, ins)
            else:
                outs = run_node(node, ins)
            self.env.update(zip(node.outs, outs))
        self.outputs = [self.env[v] for v in graph.outputs]

    def backward(self, out_cts: Sequence[Value | None]) -> list[Value | None]:
        graph, env, active = self.graph, self.env, self.active
        cts: dict[Var, Value] = {}
        for var, ct in zip(graph.outputs, out_cts):
            if ct is not None and var in active:
                cts[var] = add(cts.get(var), ct)
        marks = graph.annotations or {}
        k = len(graph.nodes) - 1
        while k >= 0:
            node = graph.nodes[k]
            region = marks.get(node.out.id)
            if isinstance(region, CustomVJP) and region.end == k + 1:
                _custom_backward(region, env, cts, active)
                k = region.start - 1
                continue
            out_cts = [cts.pop(v, None) for v in node.outs]
            k -= 1
            if all(c is None for c in out_cts) or not any(v in active for v in node.inputs):
                continue
            ins = [env[v] for v in node.inputs]
            in_cts = self._node_vjp(k + 1, node, ins, out_cts)
            for var, ct in zip(node.inputs, in_cts):
                if ct is not None and var in active:
                    cts[var] = add(cts.get(var), as_dtype(ct, var.dtype))
        return [cts.get(v) for v in graph.inputs]

    def _node_vjp(self, k: int, node: Node, ins, out_cts) -> list:
        if node.op is Op.WHILE:
            return loops.while_backward(node, ins, self.saved[k], out_cts, self.active,
                                        vjp_graph)
        if VJP_RULES.get(node.op) is transpose_of_jvp:
            return _transposed_jvp(node, ins, [self.env[v] for v in node.outs], out_cts)
        ct = out_cts[0]
        out = self.env[node.out]
        if node.op in VJP_RULES:
            return VJP_RULES[node.op](node, ins, out, ct)
        assert node.op in ELEMENTWISE and node.op in PARTIALS, node.op
        wanted = [v in self.active for v in node.inputs]
        ins = [scalar_or_value(self.graph, v, x) for v, x in zip(node.inputs, ins)]
        with np.errstate(all="ignore"):
            parts = partials(node.op, ins, out)
            return [scale(ct, d) if on and d is not None else None
                    for on, d in zip(wanted, parts)]


def _transposed_jvp(node: Node, ins: Sequence[Value], outs: list[Value],
                    out_cts: Sequence[Value | None]) -> list[Value | None]:
    """The input cotangents of ``node`` as the transpose of its JVP rule: the rule at
    ``ins`` is a linear function of the tangents, traced on zero tangents and pulled back
    by reverse mode over what it recorded."""
    diff = [k for k, v in enumerate(node.inputs) if is_inexact(v.dtype)]
    result_of = outs if node.extra else outs[0]

    def linear(*tangents):
        full: list[Value | None] = [None] * len(ins)
        for k, t in zip(diff, tangents):
            full[k] = t
        return JVP_RULES[node.op](node, ins, result_of, full)

    tangents = tuple(np.zeros(node.inputs[k].shape, node.inputs[k].dtype) for k in diff)
    traced = trace_function(linear, tangents, f"reverse mode of {node.op.value}", ())
    values = input_values(traced, list(tangents))
    lin = Linearized(traced.graph, values, [True] * len(diff) + [False] * len(traced.lifted))
    pulled = lin.backward(list(out_cts))
    cts: list[Value | None] = [None] * len(ins)
    for k, ct in zip(diff, pulled):
        cts[k] = ct
    return cts


def _custom_backward(region: CustomVJP, env, cts, active) -> None:
    out_cts = []
    for var in region.outputs:
        ct = cts.pop(var, None)
        out_cts.append(ct if ct is not None else np.zeros(var.shape, var.dtype))
    residuals = unflatten(region.residual_tree,
                          [env[r] if isinstance(r, Var) else r for r in region.residuals])
    ct_tree = unflatten(region.output_tree, out_cts)
    result = region.bwd(*region.nondiff, residuals, ct_tree)
    for var, ct in zip(region.inputs, check_bwd_result(region, result)):
        if var is not None and ct is not None and var in active:
            cts[var] = add(cts.get(var), as_dtype(ct, var.dtype))


def vjp_graph(graph: Graph, values: Sequence[Value], out_cts: Sequence[Value | None],
              active_inputs: Sequence[bool]) -> tuple[list[Value], list[Value | None]]:
    """(outputs, input cotangents) of ``graph`` at ``values``."""
    lin = Linearized(graph, values, active_inputs)
    return lin.outputs, lin.backward(out_cts)
