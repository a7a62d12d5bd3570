"""Functions as graphs for differentiation, and running a graph's nodes on values.

Differentiation works on the graph a function traces to: ``trace_function`` records it on
fresh inputs (values the function closes over from an enclosing trace become lifted inputs),
then ``run_node`` replays each node on the actual values (NumPy arrays, or tracers of the
enclosing trace), so the primal and derivative computations land in whatever trace is
running (``jit``, ``vmap``, a loop body) and go through its pipeline, or run eagerly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..core import interpret
from ..core import primitives as p
from ..core.ir import Graph, Node, Op, Var
from ..core.trace import TraceContext, Tracer, current_trace, tracing
from ..core.tree import TreeDef, flatten_with_paths, unflatten
from .values import Value


@dataclass
class TracedFunction:
    """``graph`` of a function traced for differentiation. Its inputs are the flattened
    differentiable arguments followed by lifted outer values (``lifted``); its outputs are
    the flattened result followed by the traced leaves of ``aux``."""

    graph: Graph
    in_tree: TreeDef
    out_tree: TreeDef
    n_out: int
    lifted: list[Value]
    aux_tree: TreeDef | None = None
    aux_leaves: list[Any] | None = None      # non-traced aux leaves, None where traced


def trace_function(fun: Callable, args: tuple, name: str, arg_names: Sequence[str],
                   has_aux: bool = False) -> TracedFunction:
    """Trace ``fun(*args)`` with every array leaf of ``args`` a fresh input."""
    leaves, paths, in_tree = flatten_with_paths(tuple(args))
    ctx = TraceContext(name, parent=current_trace())
    tracers = []
    for leaf, path in zip(leaves, paths):
        aval = p.aval_of(leaf)
        source = _source_name(path, arg_names)
        tracers.append(ctx.new_input(aval, source, python_scalar=p.is_python_scalar(leaf)))
    # the point of differentiation: Python control flow may read it where it is concrete
    ctx.known = {t.ir_var: leaf if isinstance(leaf, Tracer) else np.asarray(leaf)
                 for t, leaf in zip(tracers, leaves)}
    with tracing(ctx):
        result = fun(*unflatten(in_tree, tracers))
    aux = None
    if has_aux:
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"{name}: with has_aux=True the function must return a pair "
                            f"(output, auxiliary data), got {type(result).__name__}")
        result, aux = result
    out_leaves, out_paths, out_tree = flatten_with_paths(result)
    out_vars = [_output_var(ctx, leaf, path, name) for leaf, path in zip(out_leaves, out_paths)]
    aux_tree, aux_rest = None, None
    if has_aux:
        aux_leaves, _, aux_tree = flatten_with_paths(aux)
        aux_rest = []
        for leaf in aux_leaves:
            if isinstance(leaf, Tracer):
                out_vars.append(p.as_var(ctx, leaf))
                aux_rest.append(None)
            else:
                aux_rest.append(leaf)
    graph = ctx.finish(out_vars)
    return TracedFunction(graph, in_tree, out_tree, len(out_leaves),
                          [t for _, t in ctx.lifted], aux_tree, aux_rest)


def _source_name(path: str, arg_names: Sequence[str]) -> str:
    """``"[1]['w']"`` -> ``"params['w']"`` for the argument names of error messages."""
    if path.startswith("[") and "]" in path:
        k = int(path[1:path.index("]")])
        if k < len(arg_names):
            return arg_names[k] + path[path.index("]") + 1:]
    return path


def _output_var(ctx: TraceContext, leaf: Any, path: str, name: str) -> Var:
    try:
        p.aval_of(leaf)
    except TypeError:
        raise TypeError(f"{name}: output{path} is a {type(leaf).__name__}, not an array; "
                        f"differentiated functions return arrays (or pytrees of arrays); "
                        f"return other data with has_aux=True") from None
    return p.as_var(ctx, leaf)


def input_values(traced: TracedFunction, leaves: Sequence[Value]) -> list[Value]:
    """The values of ``traced.graph``'s inputs: the argument leaves, then lifted values."""
    return [_as_value(x) for x in leaves] + list(traced.lifted)


def _as_value(x: Any) -> Value:
    if isinstance(x, Tracer):
        return x
    return np.asarray(x, dtype=p.aval_of(x).dtype)


def split_outputs(traced: TracedFunction, outs: list[Value]):
    """(result pytree, aux pytree or None) from the graph's output values."""
    result = unflatten(traced.out_tree, outs[:traced.n_out])
    if traced.aux_tree is None:
        return result, None
    it = iter(outs[traced.n_out:])
    aux = [next(it) if leaf is None else leaf for leaf in traced.aux_leaves or []]
    return result, unflatten(traced.aux_tree, aux)


# -- running nodes on values ------------------------------------------------------------------
def run_node(node: Node, values: Sequence[Value]) -> list[Value]:
    """``node`` applied to ``values``: recorded in the innermost trace among them (or the
    current one, for constants), else evaluated with NumPy."""
    ctx = p.find_trace(values)
    if node.op is Op.CONST:
        ctx = current_trace()
        if ctx is None:
            return [node.param["value"].array]
        # recorded, not folded: a broadcast of it stays a view rather than a big constant
        var = ctx.add_node(Op.CONST, (), node.out.aval, **node.param)
        return [Tracer(ctx, var, frozenset())]
    if ctx is None:
        out = interpret.evaluate_node(node, [np.asarray(v) for v in values])
        return list(out) if node.extra else [out]
    vars_ = tuple(p.as_var(ctx, v) for v in values)
    if node.extra:
        outs = ctx.add_multi(node.op, vars_, [v.aval for v in node.outs], **node.param)
    else:
        outs = [ctx.add_node(node.op, vars_, node.out.aval, **node.param)]
    sources = p.sources_of(values)
    return [Tracer(ctx, v, sources) for v in outs]


def evaluate_graph(graph: Graph, values: Sequence[Value]) -> list[Value]:
    """Every node of ``graph`` run on ``values`` (``run_node``); the output values."""
    env: dict[Var, Value] = dict(zip(graph.inputs, values))
    for node in graph.nodes:
        env.update(zip(node.outs, run_node(node, [env[v] for v in node.inputs])))
    return [env[v] for v in graph.outputs]


def scalar_or_value(graph: Graph, var: Var, value: Value) -> Value:
    """A constant operand as its scalar (it broadcasts the same), so that rules see it."""
    scalar = known_scalar(graph, var)
    return value if scalar is None else scalar


def known_scalar(graph: Graph, var: Var) -> np.ndarray | None:
    """The value of ``var`` when the graph computes it from one scalar constant by
    broadcasts, reshapes and casts (an exponent, a scale): rules may specialise on it."""
    casts = []
    node = graph.producer(var)
    while node is not None and node.op in (Op.BROADCAST, Op.RESHAPE, Op.CAST):
        if node.op is Op.CAST:
            casts.append(node.out.dtype)
        node = graph.producer(node.inputs[0])
    if node is None or node.op is not Op.CONST or node.param.get("runtime"):
        return None
    value = node.param["value"].array
    if value.ndim != 0:
        return None
    for dtype in reversed(casts):
        value = value.astype(dtype)
    return value
