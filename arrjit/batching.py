"""``vmap``: trace the function once per example, then rewrite its graph with a batching rule
per primitive (``BATCH_RULES``), putting the batch axis first everywhere. Inside ``jit`` the
batched graph is fused and compiled like any other; outside, NumPy evaluates it.

>>> import numpy as np, arrjit, arrjit.numpy as anp
>>> arrjit.vmap(lambda v, w: anp.dot(v, w), in_axes=(0, None))(np.ones((3, 2)), np.ones(2))
array([2., 2., 2.])
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .core import interpret, primitives
from .core.dtypes import Aval
from .core.ir import ELEMENTWISE, LINALG, REDUCTIONS, Graph, Node, Op, Var
from .core.rules import LIBRARY_RESULTS
from .core.trace import TraceContext, Tracer, current_trace, tracing
from .core.tree import flatten, flatten_with_paths, subtrees_at, unflatten

Batched = tuple[Var, bool]  # an outer var and whether its axis 0 is the batch axis


class _Batcher:
    def __init__(self, ctx: TraceContext, size: int):
        self.ctx = ctx
        self.size = size

    def aval(self, shape: tuple[int, ...], dtype: np.dtype) -> Aval:
        return Aval((self.size,) + tuple(shape), dtype)

    def batched(self, item: Batched) -> Var:
        var, is_batched = item
        if is_batched:
            return var
        return self.ctx.add_node(Op.BROADCAST, (var,), self.aval(var.shape, var.dtype),
                                 shape=(self.size,) + var.shape)

    def node(self, op: Op, inputs, out_shape, dtype, /, **params) -> Var:
        """A batched node; ``params`` are the op's own (a cast's ``dtype`` among them)."""
        return self.ctx.add_node(op, tuple(inputs), self.aval(out_shape, dtype), **params)

    def reshape(self, var: Var, shape: tuple[int, ...]) -> Var:
        if var.shape == shape:
            return var
        return self.ctx.add_node(Op.RESHAPE, (var,), Aval(shape, var.dtype), shape=shape)

    # -- the generic rule: one example at a time, then stack ----------------------------------
    def per_example(self, node: Node, ins: list[Batched]) -> list[Var]:
        results: list[list[Var]] = [[] for _ in node.outs]
        for b in range(self.size):
            args = []
            for var, is_batched in ins:
                if not is_batched:
                    args.append(var)
                    continue
                row = self.ctx.add_node(
                    Op.SLICE, (var,), Aval((1,) + var.shape[1:], var.dtype),
                    starts=(b,) + (0,) * (var.ndim - 1), steps=(1,) * var.ndim)
                args.append(self.reshape(row, var.shape[1:]))
            if node.extra:
                outs = self.ctx.add_multi(node.op, tuple(args), [v.aval for v in node.outs],
                                          **node.param)
            else:
                outs = [self.ctx.add_node(node.op, tuple(args), node.out.aval, **node.param)]
            for k, o in enumerate(outs):
                results[k].append(self.reshape(o, (1,) + o.shape))
        stacked = []
        for out, parts in zip(node.outs, results):
            stacked.append(self.ctx.add_node(Op.CONCATENATE, tuple(parts),
                                             self.aval(out.shape, out.dtype), axis=0))
        return stacked


def _elementwise(bt: _Batcher, node: Node, ins):
    return [bt.node(node.op, [bt.batched(i) for i in ins], node.out.shape, node.out.dtype,
                    **node.param)]


def _broadcast(bt: _Batcher, node: Node, ins):
    var = bt.batched(ins[0])
    shape = node.param["shape"]
    lifted = bt.reshape(var, (bt.size,) + (1,) * (len(shape) - (var.ndim - 1)) + var.shape[1:])
    return [bt.node(Op.BROADCAST, [lifted], shape, node.out.dtype,
                    shape=(bt.size,) + tuple(shape))]


def _transpose(bt: _Batcher, node: Node, ins):
    perm = (0,) + tuple(p + 1 for p in node.param["perm"])
    return [bt.node(Op.TRANSPOSE, [bt.batched(ins[0])], node.out.shape, node.out.dtype,
                    perm=perm)]


def _reshape(bt: _Batcher, node: Node, ins):
    return [bt.node(Op.RESHAPE, [bt.batched(ins[0])], node.out.shape, node.out.dtype,
                    shape=(bt.size,) + node.out.shape)]


def _slice(bt: _Batcher, node: Node, ins):
    p = node.param
    return [bt.node(Op.SLICE, [bt.batched(ins[0])], node.out.shape, node.out.dtype,
                    starts=(0,) + p["starts"], steps=(1,) + p["steps"])]


def _reduce(bt: _Batcher, node: Node, ins):
    var = bt.batched(ins[0])
    axes = node.param["axes"]
    example_ndim = var.ndim - 1
    if node.op in (Op.ARGMAX, Op.ARGMIN) and len(axes) == example_ndim and example_ndim > 1:
        var = bt.reshape(var, (bt.size, int(np.prod(var.shape[1:]))))  # flattened index
        axes = (0,)
    return [bt.node(node.op, [var], node.out.shape, node.out.dtype,
                    axes=tuple(a + 1 for a in axes))]


def _with_axis(bt: _Batcher, node: Node, ins):
    params = dict(node.param, axis=node.param["axis"] + 1)
    return [bt.node(node.op, [bt.batched(i) for i in ins], node.out.shape, node.out.dtype,
                    **params)]


def _matmul(bt: _Batcher, node: Node, ins):
    """Per-example ranks up to 2 map onto one matmul (a matrix-vector product over a batch of
    vectors becomes a matrix-matrix product); higher ranks go example by example."""
    (a, a_b), (b, b_b) = ins
    ra, rb = a.ndim - a_b, b.ndim - b_b
    if ra > 2 or rb > 2:
        return bt.per_example(node, ins)
    dtype = node.out.dtype

    def mm(x: Var, y: Var) -> Var:
        shape = tuple(np.broadcast_shapes(x.shape[:-2], y.shape[:-2] if y.ndim > 1 else ())) + (
            x.shape[-2:-1] if x.ndim > 1 else ()) + (y.shape[-1:] if y.ndim > 1 else ())
        return bt.ctx.add_node(Op.MATMUL, (x, y), Aval(shape, dtype))

    if not b_b:                       # (B, [m,] k) @ b
        out = mm(a, b)
    elif not a_b and rb == 1:         # a @ v_i for a batch of vectors: V @ a.T
        a_t = bt.ctx.add_node(Op.TRANSPOSE, (a,), Aval(a.shape[::-1], a.dtype),
                              perm=tuple(range(a.ndim))[::-1]) if ra == 2 else a
        out = mm(b, a_t)
    elif not a_b:                     # a @ (B, k, n)
        out = mm(a, b)
    else:                             # both batched: make both 3-D, multiply, drop the 1s
        a3 = bt.reshape(a, (bt.size, 1, a.shape[1]) if ra == 1 else a.shape)
        b3 = bt.reshape(b, (bt.size, b.shape[1], 1) if rb == 1 else b.shape)
        out = mm(a3, b3)
    return [bt.reshape(out, (bt.size,) + node.out.shape)]


def _einsum(bt: _Batcher, node: Node, ins):
    subscripts = node.param["subscripts"].replace(" ", "")
    if "->" not in subscripts:
        return bt.per_example(node, ins)
    letter = next(c for c in "ZYXWVUTSRQPONM" if c not in subscripts)
    lhs, rhs = subscripts.split("->")
    specs = [letter + s if is_b else s for s, (_, is_b) in zip(lhs.split(","), ins)]
    new = ",".join(specs) + "->" + letter + rhs
    return [bt.node(Op.EINSUM, [v for v, _ in ins], node.out.shape, node.out.dtype,
                    subscripts=new)]


def _leading_batch(bt: _Batcher, node: Node, ins):
    """Ops that already batch over leading axes of matrices (``numpy.linalg``'s): the batch
    axis is one more of them. An unbatched operand broadcasts against it (``solve``'s ``a``
    or ``b``); a batched one with fewer leading axes than the others gets 1s after it."""
    if node.op is Op.SOLVE and node.inputs[1].ndim == 1:   # a vector: a one-column matrix
        (a, a_batched), (b, b_batched) = ins
        column = b.shape + (1,)
        matrix = Node(Op.SOLVE, (node.inputs[0], Var(-1, Aval(column[-2:], b.dtype))),
                      Var(-1, Aval(node.out.shape + (1,), node.out.dtype)))
        x = _leading_batch(bt, matrix, [(a, a_batched), (bt.reshape(b, column), b_batched)])[0]
        return [bt.reshape(x, x.shape[:-1])]
    lead = max(v.ndim - 2 for v in node.inputs)
    operands = []
    for (var, is_batched), orig in zip(ins, node.inputs):
        missing = lead - (orig.ndim - 2)
        if is_batched and missing:
            var = bt.reshape(var, (bt.size,) + (1,) * missing + orig.shape)
        operands.append(var)
    avals = LIBRARY_RESULTS[node.op](*(v.aval for v in operands), **node.param)
    if node.extra:
        return bt.ctx.add_multi(node.op, tuple(operands), avals, **node.param)
    return [bt.ctx.add_node(node.op, tuple(operands), avals[0], **node.param)]


BATCH_RULES: dict[Op, Callable] = {op: _elementwise for op in ELEMENTWISE}
BATCH_RULES.update({
    Op.BROADCAST: _broadcast, Op.TRANSPOSE: _transpose, Op.RESHAPE: _reshape,
    Op.SLICE: _slice, Op.MATMUL: _matmul, Op.EINSUM: _einsum,
    Op.CONCATENATE: _with_axis, Op.SORT: _with_axis, Op.ARGSORT: _with_axis,
    Op.CUMSUM: _with_axis, Op.CUMPROD: _with_axis, Op.ROLL: _with_axis,
})
BATCH_RULES.update({op: _reduce for op in REDUCTIONS})
BATCH_RULES.update({op: _leading_batch for op in LINALG})
# GATHER, SCATTER, SEARCHSORTED, CONVOLVE and WHILE use the per-example rule.
for _op in (Op.GATHER, Op.SCATTER, Op.SEARCHSORTED, Op.CONVOLVE, Op.WHILE):
    BATCH_RULES[_op] = lambda bt, node, ins: bt.per_example(node, ins)


def batch_graph(graph: Graph, ctx: TraceContext, inputs: list[Batched], size: int
                ) -> list[Batched]:
    bt = _Batcher(ctx, size)
    env: dict[Var, Batched] = dict(zip(graph.inputs, inputs))
    for node in graph.nodes:
        if node.op is Op.CONST:
            env[node.out] = (ctx.constant(node.param["value"].array), False)
            continue
        ins = [env[v] for v in node.inputs]
        if not any(b for _, b in ins):
            if node.extra:
                outs = ctx.add_multi(node.op, tuple(v for v, _ in ins),
                                     [v.aval for v in node.outs], **node.param)
            else:
                outs = [ctx.add_node(node.op, tuple(v for v, _ in ins), node.out.aval,
                                     **node.param)]
            env.update((o, (n, False)) for o, n in zip(node.outs, outs))
            continue
        outs = BATCH_RULES[node.op](bt, node, ins)
        env.update((o, (n, True)) for o, n in zip(node.outs, outs))
    return [env[v] for v in graph.outputs]


def _axis_spec(spec, value, what: str) -> list:
    """One axis (int or None) per leaf of ``value``, from an int/None or a tree of them that
    is a prefix of ``value``'s structure (an entry covers its whole subtree), as in JAX."""
    leaves, _, tree = flatten_with_paths(value)
    if spec is None or isinstance(spec, int):
        return [spec] * len(leaves)
    spec_leaves, spec_tree = flatten(spec, is_leaf=lambda s: s is None)
    try:
        parts = subtrees_at(spec_tree, value)
    except ValueError:
        raise ValueError(f"vmap {what} {spec!r} does not match the structure {tree}") from None
    return [axis for axis, part in zip(spec_leaves, parts) for _ in flatten(part)[0]]


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0) -> Callable:
    """Vectorise ``fun`` over an axis of its arguments (``in_axes``: an int, None, or a
    tuple/pytree of them per argument), placing the batch axis of each output at
    ``out_axes``. Works inside and outside ``jit`` and nests."""

    def batched_fun(*args):
        specs = (_axis_spec(in_axes, args, "in_axes") if not isinstance(in_axes, (tuple, list))
                 else [ax for spec, arg in zip(in_axes, args)
                       for ax in _axis_spec(spec, arg, "in_axes")])
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes has {len(in_axes)} entries for {len(args)} "
                             f"arguments")
        leaves, paths, tree = flatten_with_paths(list(args))
        sizes = {primitives.aval_of(x).shape[ax] for x, ax in zip(leaves, specs)
                 if ax is not None}
        if len(sizes) != 1:
            raise ValueError(f"vmap got inconsistent sizes for the mapped axes: "
                             f"{sorted(sizes) if sizes else 'no mapped argument'}")
        size = sizes.pop()
        outer = current_trace()
        eager = outer is None
        ctx = TraceContext("vmap", parent=None) if eager else outer
        from . import numpy as anp

        outer_vals = []
        with tracing(ctx):
            for x, ax, path in zip(leaves, specs, paths):
                if eager:
                    aval = primitives.aval_of(x)
                    x = Tracer(ctx, ctx.new_var(Aval(aval.shape, aval.dtype, aval.weak)),
                               frozenset())
                    ctx.inputs.append(x.ir_var)
                if ax is not None:
                    x = anp.moveaxis(anp.asarray(x), ax, 0)
                outer_vals.append((x, ax is not None))
        inner = TraceContext("vmapped function", parent=ctx)
        example = []
        for x, is_batched in outer_vals:
            aval = primitives.aval_of(x)
            shape = aval.shape[1:] if is_batched else aval.shape
            t = Tracer(inner, inner.new_var(Aval(shape, aval.dtype, aval.weak)),
                       getattr(x, "sources", frozenset()))
            inner.inputs.append(t.ir_var)
            example.append(t)
        with tracing(inner):
            result = fun(*unflatten(tree, example))
            out_leaves, _, out_tree = flatten_with_paths(result)
            out_vars = [primitives.as_var(inner, o) for o in out_leaves]
        graph = inner.finish(out_vars)
        with tracing(ctx):
            batched_inputs = [(primitives.as_var(ctx, x), b) for x, b in outer_vals]
            batched_inputs += [(primitives.as_var(ctx, t), False) for _, t in inner.lifted]
            outs = batch_graph(graph, ctx, batched_inputs, size)
            o_specs = _axis_spec(out_axes, result, "out_axes")
            final = []
            for (var, is_batched), ax in zip(outs, o_specs):
                t = Tracer(ctx, var, frozenset())
                if ax is None:
                    if is_batched:
                        raise ValueError("vmap out_axes=None needs an output that does not "
                                         "depend on the mapped inputs")
                    final.append(t)
                    continue
                if not is_batched:
                    t = anp.broadcast_to(t, (size,) + t.shape)
                final.append(anp.moveaxis(t, 0, ax) if ax != 0 else t)
        if not eager:
            return unflatten(out_tree, final)
        out_graph = ctx.finish([f.ir_var for f in final])
        values = interpret.evaluate(out_graph, [np.asarray(x) for x in leaves])
        return unflatten(out_tree, values)

    batched_fun.__name__ = f"vmap({getattr(fun, '__name__', 'fun')})"
    return batched_fun
