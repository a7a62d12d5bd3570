"""Derivatives of the WHILE primitive (``lax.while_loop``, ``fori_loop``, ``scan``).

Forward mode runs one loop that carries each float carry's tangent beside it. Reverse mode
needs the trip count while tracing (``fori_loop`` with static bounds, ``scan``): the forward
loop saves every iteration's carry in a stacked buffer, and a second loop runs from the last
iteration to the first, recomputing each body from its saved carry and pulling the
cotangents through it (the body's own graph, differentiated). A ``while_loop`` has no
trip count, so reverse mode refuses it, as JAX does.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .. import lax
from ..core.ir import Graph, Node
from .graphs import evaluate_graph
from .values import Value, add, is_inexact, row, set_row, zeros


def _parts(node: Node, values: Sequence):
    n_carry, n_cond = node.param["n_carry"], node.param["n_cond_consts"]
    return (list(values[:n_carry]), list(values[n_carry:n_carry + n_cond]),
            list(values[n_carry + n_cond:]))


def while_forward(node: Node, ins: Sequence[Value]) -> tuple[list[Value], list[Value]]:
    """The loop's results, and every iteration's carry stacked along a new leading axis."""
    trips = node.param["trip_count"]
    if trips is None:
        raise ValueError(
            "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
            "with traced bounds: the number of iterations is not known while tracing, so "
            "the values the backward pass needs cannot be saved. Use lax.fori_loop with "
            "static (Python int) bounds or lax.scan, or forward mode (arrjit.jvp), which "
            "works with while_loop.")
    carry, _, consts = _parts(node, ins)
    body: Graph = node.param["body"]
    stacks = [zeros((trips,) + v.shape, v.dtype) for v in node.inputs[:len(carry)]]

    def step(i, state):
        values, saved = state
        saved = [set_row(s, i, v) for s, v in zip(saved, values)]
        return evaluate_graph(body, list(values) + consts), saved

    final, stacks = lax.fori_loop(0, trips, step, (carry, stacks))
    return list(final), list(stacks)


def while_backward(node: Node, ins: Sequence[Value], stacks: list[Value],
                   out_cts: Sequence[Value | None], active, vjp_graph: Callable
                   ) -> list[Value | None]:
    """Cotangents of the loop's inputs from those of its results; ``vjp_graph`` is reverse
    mode over a graph (``reverse.vjp_graph``), applied to the body."""
    carry, cond_consts, consts = _parts(node, ins)
    n_carry, n_cond = len(carry), len(cond_consts)
    body: Graph = node.param["body"]
    trips = node.param["trip_count"]
    carry_vars = node.inputs[:n_carry]
    const_vars = node.inputs[n_carry + n_cond:]
    moving = [k for k, v in enumerate(carry_vars) if is_inexact(v.dtype)]
    wanted = [k for k, v in enumerate(const_vars) if v in active]
    ct0 = [out_cts[k] if out_cts[k] is not None else zeros(carry_vars[k].shape,
                                                           carry_vars[k].dtype) for k in moving]
    acc0 = [zeros(const_vars[k].shape, const_vars[k].dtype) for k in wanted]
    active_inputs = [is_inexact(v.dtype) for v in carry_vars] + [
        k in wanted for k in range(len(const_vars))]

    def step(k, state):
        ct_carry, acc = state
        i = trips - 1 - k
        at_i = [row(s, i) for s in stacks]
        full = [None] * n_carry
        for pos, ct in zip(moving, ct_carry):
            full[pos] = ct
        _, in_cts = vjp_graph(body, at_i + consts, full, active_inputs)
        new_ct = [in_cts[pos] if in_cts[pos] is not None else zeros(
            carry_vars[pos].shape, carry_vars[pos].dtype) for pos in moving]
        new_acc = [add(a, in_cts[n_carry + j]) if in_cts[n_carry + j] is not None else a
                   for a, j in zip(acc, wanted)]
        return new_ct, new_acc

    ct_carry, acc = lax.fori_loop(0, trips, step, (ct0, acc0))
    result: list[Value | None] = [None] * len(ins)
    for pos, ct in zip(moving, ct_carry):
        result[pos] = ct
    for j, ct in zip(wanted, acc):
        result[n_carry + n_cond + j] = ct
    return result


def while_jvp(node: Node, ins: Sequence[Value], tins: Sequence[Value | None],
              jvp_graph: Callable) -> tuple[list[Value], list[Value | None]]:
    """The loop's results and their tangents, from one loop carrying both; ``jvp_graph`` is
    forward mode over a graph (``forward.jvp_graph``), applied to the body."""
    carry, cond_consts, consts = _parts(node, ins)
    n_carry, n_cond = len(carry), len(cond_consts)
    body: Graph = node.param["body"]
    cond: Graph = node.param["cond"]
    carry_vars = node.inputs[:n_carry]
    moving = [k for k, v in enumerate(carry_vars) if is_inexact(v.dtype)]
    const_tangents = list(tins[n_carry + n_cond:])
    t0 = [tins[k] if tins[k] is not None else zeros(carry_vars[k].shape, carry_vars[k].dtype)
          for k in moving]

    def cond_fun(state):
        return evaluate_graph(cond, list(state[0]) + cond_consts)[0]

    def body_fun(state):
        values, tangents = state
        full = [None] * n_carry
        for pos, t in zip(moving, tangents):
            full[pos] = t
        outs, touts = jvp_graph(body, list(values) + consts, full + const_tangents)
        return outs, [touts[pos] if touts[pos] is not None else zeros(
            carry_vars[pos].shape, carry_vars[pos].dtype) for pos in moving]

    final, tangents = lax._while_loop(cond_fun, body_fun, (carry, t0), "lax.while_loop", "",
                                      node.param["trip_count"])
    touts: list[Value | None] = [None] * n_carry
    for pos, t in zip(moving, tangents):
        touts[pos] = t
    return list(final), touts
