"""Control flow: ``select``, ``cond``, ``switch`` and the loops, all built on one ``WHILE``
primitive that holds its condition and body as graphs."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import numpy as anp
from ..core import primitives
from ..core.dtypes import Aval
from ..core.ir import Op
from ..core.trace import TraceContext, Tracer, current_trace, tracing
from ..core.tree import flatten_with_paths, unflatten


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false``. ``pred`` is boolean or, as in JAX, an
    integer array (nonzero selects ``on_true``).

    >>> import numpy as np
    >>> select(np.array([1, 0]), np.ones(2), np.zeros(2))
    array([1., 0.])
    """
    aval = primitives.aval_of(pred)
    if aval.dtype.kind not in "biu":
        raise TypeError(f"lax.select requires a boolean or integer predicate, got {aval}; "
                        f"compare first (x > 0) or use anp.where")
    if aval.dtype.kind != "b":
        pred = anp.not_equal(pred, 0)
    return primitives.bind_select(pred, on_true, on_false)


def _any_traced(tree: Any) -> bool:
    leaves, _, _ = flatten_with_paths(tree)
    return any(isinstance(x, Tracer) for x in leaves)


def _concrete_bool(pred, where: str) -> bool | None:
    if isinstance(pred, Tracer):
        if pred.shape != ():
            raise TypeError(f"{where}: the predicate must be a scalar, got {pred.aval}")
        return None
    value = np.asarray(pred)
    if value.shape != ():
        raise TypeError(f"{where}: the predicate must be a scalar, got shape {value.shape}")
    return bool(value)


def _check_same_structure(what: str, names: Sequence[str], first, second) -> None:
    a_leaves, a_paths, a_tree = flatten_with_paths(first)
    b_leaves, _, b_tree = flatten_with_paths(second)
    if a_tree != b_tree:
        raise TypeError(f"{what}: {names[0]} and {names[1]} must return the same structure, "
                        f"got {a_tree} and {b_tree}")
    for path, a, b in zip(a_paths, a_leaves, b_leaves):
        aa, ab = primitives.aval_of(a), primitives.aval_of(b)
        if (aa.shape, aa.dtype) != (ab.shape, ab.dtype) and not (aa.weak or ab.weak):
            raise TypeError(f"{what}: output{path or ''} is {aa} in {names[0]} but {ab} in "
                            f"{names[1]}; both branches must give the same shape and dtype")


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """``true_fun(*operands) if pred else false_fun(*operands)`` for a scalar ``pred``."""
    concrete = _concrete_bool(pred, "lax.cond")
    if concrete is not None:
        return (true_fun if concrete else false_fun)(*operands)
    on_true, on_false = true_fun(*operands), false_fun(*operands)
    _check_same_structure("lax.cond", ("true_fun", "false_fun"), on_true, on_false)
    t_leaves, _, tree = flatten_with_paths(on_true)
    f_leaves, _, _ = flatten_with_paths(on_false)
    return unflatten(tree, [anp.where(pred, a, b) for a, b in zip(t_leaves, f_leaves)])


def switch(index, branches: Sequence[Callable], *operands):
    """``branches[clamp(index)](*operands)``: the index is clamped into range, as in JAX."""
    if not branches:
        raise ValueError("lax.switch needs at least one branch")
    n = len(branches)
    if not isinstance(index, Tracer):
        return branches[int(np.clip(int(np.asarray(index)), 0, n - 1))](*operands)
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"lax.switch: the index must be an integer scalar, got {index.aval}")
    outs = [b(*operands) for b in branches]
    for k in range(1, n):
        _check_same_structure("lax.switch", ("branch 0", f"branch {k}"), outs[0], outs[k])
    idx = anp.clip(index, 0, n - 1)
    leaves = [flatten_with_paths(o)[0] for o in outs]
    _, _, tree = flatten_with_paths(outs[0])
    result = list(leaves[-1])
    for k in range(n - 2, -1, -1):
        result = [anp.where(idx == k, a, r) for a, r in zip(leaves[k], result)]
    return unflatten(tree, result)


# -- loops ----------------------------------------------------------------------------------------
def _as_carry_leaf(x):
    if isinstance(x, Tracer):
        return x
    arr = np.asarray(x)
    primitives.check_supported(arr.dtype, "loop carry")
    return arr


def _trace_sub(outer: TraceContext, name: str, fn: Callable, tree, avals: list[Aval],
               sources: frozenset[str]):
    """Trace ``fn`` on fresh inputs with ``avals`` in a trace nested in ``outer``."""
    inner = TraceContext(name, parent=outer)
    tracers = []
    for aval in avals:
        tracers.append(Tracer(inner, inner.new_var(aval), sources))
        inner.inputs.append(tracers[-1].ir_var)
    with tracing(inner):
        result = fn(unflatten(tree, tracers))
    return inner, result


def _carry_error(what: str, path: str, expected: Aval, got) -> TypeError:
    return TypeError(
        f"{what}: the carry{path or ''} must keep its shape and dtype across iterations: it "
        f"enters as {expected} but the body returns {got}. Cast inside the body (for example "
        f"x.astype(anp.{expected.dtype.name})) or give the initial value that shape and dtype.")


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """``while cond_fun(val): val = body_fun(val)``; ``val`` is a pytree whose leaves keep
    their shapes and dtypes."""
    return _while_loop(cond_fun, body_fun, init_val, "lax.while_loop", "")


def _while_loop(cond_fun: Callable, body_fun: Callable, init_val, what: str, hidden: str,
                trip_count: int | None = None):
    """``while_loop``; error messages name ``what`` and drop the ``hidden`` path prefix (the
    loop counter fori_loop adds to the carry). ``trip_count``: the number of iterations when
    it is known while tracing (a fori_loop with static bounds), so a backend may run the body
    that often without evaluating the condition."""
    outer = current_trace()
    if outer is None and not _any_traced(init_val):
        val = init_val
        while bool(np.asarray(cond_fun(val))):
            val = body_fun(val)
        return val
    leaves, paths, tree = flatten_with_paths(init_val)
    weak = [primitives.is_python_scalar(x) or (isinstance(x, Tracer) and x.aval.weak)
            for x in leaves]
    leaves = [_as_carry_leaf(x) for x in leaves]
    ctx = primitives.find_trace(leaves) or outer
    if outer is not None and outer.depth > ctx.depth:
        ctx = outer
    avals = [Aval(tuple(primitives.aval_of(x).shape), primitives.aval_of(x).dtype)
             for x in leaves]
    sources = primitives.sources_of(leaves)

    # a Python scalar enters weakly typed, as in JAX: the body's arithmetic decides its dtype
    traced_avals = [Aval(a.shape, a.dtype, weak=w) for a, w in zip(avals, weak)]
    cond_ctx, pred = _trace_sub(ctx, "cond_fun", cond_fun, tree, traced_avals, sources)
    pred_aval = primitives.aval_of(pred)
    if pred_aval.shape != () or pred_aval.dtype != np.bool_:
        raise TypeError(f"lax.while_loop: cond_fun must return a boolean scalar, got "
                        f"{pred_aval}; reduce it first (anp.all / anp.any) or compare")
    cond_graph = cond_ctx.finish([primitives.as_var(cond_ctx, pred)])

    body_ctx, new = _trace_sub(ctx, "body_fun", body_fun, tree, traced_avals, sources)
    new_leaves, _, new_tree = flatten_with_paths(new)
    if new_tree != tree:
        raise TypeError(f"{what}: body_fun must return the carry's structure {tree}, "
                        f"got {new_tree}")
    retyped = list(leaves)
    for k, (path, aval, leaf) in enumerate(zip(paths, avals, new_leaves)):
        got = primitives.aval_of(leaf)
        if weak[k] and got.shape == aval.shape and got.dtype != aval.dtype and not got.weak:
            retyped[k] = (leaves[k].astype(got.dtype) if isinstance(leaves[k], Tracer)
                          else np.asarray(leaves[k], dtype=got.dtype))
        elif got.shape != aval.shape or (got.dtype != aval.dtype and not got.weak):
            raise _carry_error(what, path[len(hidden):] if path.startswith(hidden) else path,
                               aval, got)
    if any(new is not old for new, old in zip(retyped, leaves)):
        return _while_loop(cond_fun, body_fun, unflatten(tree, retyped), what, hidden,
                           trip_count)
    unchanged = _unchanged_carries(body_ctx, leaves, new_leaves)
    if unchanged and len(unchanged) < len(leaves):
        return _loop_over_changing(cond_fun, body_fun, ctx, leaves, tree, unchanged, what,
                                   trip_count)
    body_outs = []
    for aval, leaf in zip(avals, new_leaves):
        var = primitives.as_var(body_ctx, leaf, aval.dtype)
        # every carry output is its own kernel-computed value (a copy when passed through)
        body_outs.append(body_ctx.add_node(Op.CAST, (var,), aval, dtype=aval.dtype))
    body_graph = body_ctx.finish(body_outs)

    init_vars = [primitives.as_var(ctx, x) for x in leaves]
    cond_consts = [primitives.as_var(ctx, t) for _, t in cond_ctx.lifted]
    body_consts = [primitives.as_var(ctx, t) for _, t in body_ctx.lifted]
    all_sources = sources | frozenset().union(*(t.sources for _, t in cond_ctx.lifted),
                                              *(t.sources for _, t in body_ctx.lifted))
    outs = ctx.add_multi(Op.WHILE, tuple(init_vars + cond_consts + body_consts), avals,
                         cond=cond_graph, body=body_graph, n_carry=len(avals),
                         n_cond_consts=len(cond_consts), trip_count=trip_count)
    return unflatten(tree, [Tracer(ctx, v, all_sources) for v in outs])


def _unchanged_carries(body_ctx: TraceContext, leaves: list, new_leaves: list) -> list[int]:
    """Positions of the carry that the body returns exactly as it received them. (A weakly
    typed initial value stays a carry: the body saw it as a strongly typed value.)"""
    return [k for k, (old, new) in enumerate(zip(leaves, new_leaves))
            if isinstance(new, Tracer) and new.ir_var is body_ctx.inputs[k]
            and not primitives.aval_of(old).weak]


def _loop_over_changing(cond_fun: Callable, body_fun: Callable, ctx: TraceContext,
                        leaves: list, tree, unchanged: list[int], what: str,
                        trip_count: int | None):
    """The loop again, with the ``unchanged`` leaves as loop constants rather than carries:
    the body reads their one buffer, and no iteration copies them."""
    fixed = {k: leaves[k] if isinstance(leaves[k], Tracer)
             else Tracer(ctx, primitives.as_var(ctx, leaves[k]), frozenset())
             for k in unchanged}
    moving = [k for k in range(len(leaves)) if k not in fixed]

    def whole(changing):
        rest = iter(changing)
        return unflatten(tree, [fixed[k] if k in fixed else next(rest)
                                for k in range(len(leaves))])

    def body(changing):
        out = flatten_with_paths(body_fun(whole(changing)))[0]
        return [out[k] for k in moving]

    changed = _while_loop(lambda changing: cond_fun(whole(changing)), body,
                          [leaves[k] for k in moving], what, "", trip_count)
    return whole(changed)


def fori_loop(lower, upper, body_fun: Callable, init_val):
    """``for i in range(lower, upper): val = body_fun(i, val)``; bounds may be traced."""
    if (current_trace() is None and not _any_traced((lower, upper, init_val))):
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(i, val)
        return val
    lo = anp.asarray(lower).astype(np.int64) if isinstance(lower, Tracer) else np.int64(lower)
    hi = anp.asarray(upper).astype(np.int64) if isinstance(upper, Tracer) else np.int64(upper)
    start = lo if isinstance(lo, Tracer) else np.asarray(lo, np.int64)

    def cond_fun(state):
        return state[0] < hi

    def body(state):
        i, val = state
        return i + 1, body_fun(i, val)

    static = not isinstance(lo, Tracer) and not isinstance(hi, Tracer)
    trips = max(0, int(hi) - int(lo)) if static else None
    return _while_loop(cond_fun, body, (start, init_val), "lax.fori_loop", "[1]", trips)[1]


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(carry, stacked ys)``."""
    x_leaves, _, x_tree = flatten_with_paths(xs)
    lengths = {primitives.aval_of(x).shape[0] for x in x_leaves}
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ValueError(f"lax.scan: the leading axes of xs and length disagree: "
                         f"{sorted(lengths)}")
    n = lengths.pop()
    traced = current_trace() is not None or _any_traced((init, xs))
    if not traced:
        carry, ys = init, []
        for k in (range(n - 1, -1, -1) if reverse else range(n)):
            carry, y = f(carry, None if xs is None else unflatten(
                x_tree, [np.asarray(x)[k] for x in x_leaves]))
            ys.append(y)
        if reverse:
            ys.reverse()
        y_leaves = [flatten_with_paths(y)[0] for y in ys]
        _, _, y_tree = flatten_with_paths(ys[0]) if ys else (None, None, None)
        stacked = [np.stack(parts) for parts in zip(*y_leaves)] if ys else []
        return carry, (unflatten(y_tree, stacked) if ys else None)

    def slice_x(i):
        return None if xs is None else unflatten(x_tree, [x[i] for x in x_leaves])

    probe_ctx = TraceContext("scan probe", parent=current_trace())
    with tracing(probe_ctx):
        c_leaves, _, c_tree = flatten_with_paths(init)
        probe_carry = unflatten(c_tree, [Tracer(probe_ctx, probe_ctx.new_var(Aval(
            primitives.aval_of(c).shape, primitives.aval_of(c).dtype)), frozenset())
            for c in c_leaves])
        probe_x = None if xs is None else unflatten(x_tree, [Tracer(
            probe_ctx, probe_ctx.new_var(Aval(primitives.aval_of(x).shape[1:],
                                              primitives.aval_of(x).dtype)), frozenset())
            for x in x_leaves])
        _, y_probe = f(probe_carry, probe_x)
    probe_ctx.active = False
    y_leaves, _, y_tree = flatten_with_paths(y_probe)
    ys0 = [anp.zeros((n,) + primitives.aval_of(y).shape, primitives.aval_of(y).dtype)
           for y in y_leaves]

    def body(i, state):
        carry, ys = state
        idx = (n - 1 - i) if reverse else i
        carry, y = f(carry, slice_x(idx))
        y_now = flatten_with_paths(y)[0]
        return carry, [buf.at[idx].set(v) for buf, v in zip(ys, y_now)]

    carry, ys = fori_loop(0, n, body, (init, ys0))
    return carry, unflatten(y_tree, ys)
