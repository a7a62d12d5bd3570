"""Derivative rules of the non-elementwise primitives, one row per op in each table.

``JVP_RULES[op](node, ins, out, tangents)`` returns the tangent of the node's result from its
inputs' tangents (``None`` = zero); ``VJP_RULES[op](node, ins, out, ct)`` returns one
cotangent per input (``None`` = zero, or no derivative). Linear ops (views, sums, casts) push
a tangent through the op itself (``_same_op``). Loops have their rules in ``loops``;
elementwise ops in ``elementwise``; ops whose result has no derivative are listed in
``NON_DIFFERENTIABLE``; the linear algebra's forward rules are in ``linalg``, and their
reverse mode is derived from them (``transpose_of_jvp``). ``tests/test_autodiff.py`` checks
that every op is covered.

Scatter with ``multiply``/``min``/``max`` and ``set`` differentiate as if indices are unique
(duplicates are summed into each, as JAX does); at ties in ``min``/``max`` scatters the
original element takes the derivative.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .. import lax
from .. import numpy as anp
from ..core import primitives as p
from ..core.ir import Node, Op
from .graphs import run_node
from .linalg import LINALG_JVP, convolve_vjp, multilinear_jvp, solve_vjp
from .values import (Value, as_dtype, aval, expand_reduced, gather, reshape, row, scatter,
                     set_row, slice_template, sum_to_shape, zeros)

JvpRule = Callable[[Node, Sequence[Value], Value, Sequence], Value]
VjpRule = Callable[[Node, Sequence[Value], Value, Value], list]

NON_DIFFERENTIABLE = frozenset({Op.CONST, Op.REDUCE_AND, Op.REDUCE_OR, Op.ARGMAX, Op.ARGMIN,
                                Op.ARGSORT, Op.SEARCHSORTED})


def _materialize(tangents: Sequence, node: Node) -> list:
    return [t if t is not None else zeros(v.shape, v.dtype)
            for t, v in zip(tangents, node.inputs)]


def _same_op(node: Node, ins, out, tangents) -> Value:
    """A linear op's tangent: the op applied to the tangents (zeros for missing ones)."""
    return run_node(node, _materialize(tangents, node))[0]


def _linear_in(positions: tuple[int, ...]):
    """An op linear in the inputs at ``positions``; the others are passed as they are."""
    def rule(node: Node, ins, out, tangents) -> Value:
        filled = _materialize(tangents, node)
        return run_node(node, [filled[k] if k in positions else x
                               for k, x in enumerate(ins)])[0]
    return rule


# -- elementwise ops with rules of their own ------------------------------------------------
def _select_vjp(node, ins, out, ct):
    pred = ins[0]
    none = anp.zeros_like(ct)
    return [None, anp.where(pred, ct, none), anp.where(pred, none, ct)]


def _cast_vjp(node, ins, out, ct):
    src = node.inputs[0].dtype
    return [as_dtype(ct, src) if src.kind in "fc" else None]


def _real_vjp(node, ins, out, ct):
    return [p.bind_complex(ct, anp.zeros_like(ct))]


def _imag_vjp(node, ins, out, ct):
    return [p.bind_complex(anp.zeros_like(ct), anp.negative(ct))]


def _complex_vjp(node, ins, out, ct):
    return [anp.real(ct), anp.negative(anp.imag(ct))]


def _conj_vjp(node, ins, out, ct):
    return [as_dtype(anp.conjugate(ct), node.inputs[0].dtype)]


# -- views ------------------------------------------------------------------------------------
def _broadcast_vjp(node, ins, out, ct):
    return [sum_to_shape(ct, node.inputs[0].shape)]


def _transpose_vjp(node, ins, out, ct):
    return [anp.transpose(ct, tuple(int(k) for k in np.argsort(node.param["perm"])))]


def _reshape_vjp(node, ins, out, ct):
    return [reshape(ct, node.inputs[0].shape)]


def _slice_vjp(node, ins, out, ct):
    src = node.inputs[0]
    template = slice_template(node.param["starts"], node.param["steps"], node.out.shape)
    return [scatter(zeros(src.shape, src.dtype), template, [], ct, "set")]


def _roll_vjp(node, ins, out, ct):
    return [anp.roll(ct, -node.param["shift"], axis=node.param["axis"])]


# -- reductions -------------------------------------------------------------------------------
def _sum_vjp(node, ins, out, ct):
    return [expand_reduced(ct, node.inputs[0].shape, node.param["axes"])]


def _extreme_mask(node, x, out):
    """Where ``x`` attains the reduction's extreme, and how many elements tie for it."""
    axes = node.param["axes"]
    mask = anp.equal(x, expand_reduced(out, node.inputs[0].shape, axes))
    count = anp.sum(anp.astype(mask, node.out.dtype), axis=axes)
    return mask, count


def _extreme_jvp(node, ins, out, tangents):
    mask, count = _extreme_mask(node, ins[0], out)
    picked = anp.where(mask, tangents[0], anp.zeros_like(tangents[0]))
    return anp.true_divide(anp.sum(picked, axis=node.param["axes"]), count)


def _extreme_vjp(node, ins, out, ct):
    mask, count = _extreme_mask(node, ins[0], out)
    share = expand_reduced(anp.true_divide(ct, count), node.inputs[0].shape, node.param["axes"])
    return [anp.where(mask, share, anp.zeros_like(share))]


def _product_of_others(x: Value, axes: tuple[int, ...]) -> Value:
    """For each element, the product of the other elements of its reduction group, without
    division (so zeros are exact): exclusive products from both ends of the flattened group."""
    shape = aval(x).shape
    kept = [k for k in range(len(shape)) if k not in axes]
    moved = anp.transpose(x, tuple(kept) + tuple(axes))
    group = int(np.prod([shape[k] for k in axes], dtype=np.int64))
    flat = anp.reshape(moved, tuple(shape[k] for k in kept) + (group,))
    ones = anp.ones(tuple(shape[k] for k in kept) + (1,), aval(x).dtype)
    before = anp.concatenate([ones, anp.cumprod(flat, axis=-1)[..., :-1]], axis=-1)
    after = anp.flip(anp.cumprod(anp.flip(flat, -1), axis=-1), -1)
    after = anp.concatenate([after[..., 1:], ones], axis=-1)
    others = anp.reshape(anp.multiply(before, after), aval(moved).shape)
    return anp.transpose(others, tuple(int(k) for k in np.argsort(tuple(kept) + tuple(axes))))


def _prod_jvp(node, ins, out, tangents):
    others = _product_of_others(ins[0], node.param["axes"])
    return anp.sum(anp.multiply(tangents[0], others), axis=node.param["axes"])


def _prod_vjp(node, ins, out, ct):
    others = _product_of_others(ins[0], node.param["axes"])
    return [anp.multiply(expand_reduced(ct, node.inputs[0].shape, node.param["axes"]), others)]


# -- library calls ------------------------------------------------------------------------------
def _matmul_jvp(node, ins, out, tangents):
    a, b = ins
    ta, tb = tangents
    parts = []
    if ta is not None:
        parts.append(anp.matmul(ta, b))
    if tb is not None:
        parts.append(anp.matmul(a, tb))
    return parts[0] if len(parts) == 1 else anp.add(*parts)


def _matmul_vjp(node, ins, out, ct):
    a, b = ins
    a_shape, b_shape = node.inputs[0].shape, node.inputs[1].shape
    a2 = anp.reshape(a, (1,) + a_shape) if len(a_shape) == 1 else a
    b2 = anp.reshape(b, b_shape + (1,)) if len(b_shape) == 1 else b
    ct_shape = tuple(aval(out).shape)
    if len(b_shape) == 1:
        ct_shape = ct_shape + (1,)
    if len(a_shape) == 1:
        ct_shape = ct_shape[:-1] + (1,) + ct_shape[-1:]
    ct2 = anp.reshape(ct, ct_shape)
    ct_a = anp.matmul(ct2, anp.swapaxes(b2, -1, -2))
    ct_b = anp.matmul(anp.swapaxes(a2, -1, -2), ct2)
    ct_a = sum_to_shape(ct_a, tuple(aval(a2).shape))
    ct_b = sum_to_shape(ct_b, tuple(aval(b2).shape))
    return [anp.reshape(ct_a, a_shape), anp.reshape(ct_b, b_shape)]


def _einsum_parts(subscripts: str, shapes: Sequence[tuple[int, ...]]
                  ) -> tuple[list[str], str]:
    """Each operand's subscripts and the output's, with an ellipsis spelled out in letters
    the subscripts do not use and an implicit output made explicit (NumPy's rules)."""
    lhs, arrow, rhs = subscripts.replace(" ", "").partition("->")
    inputs = lhs.split(",")
    spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                 if c not in subscripts)
    width = max((len(shape) - (len(spec) - 3) for spec, shape in zip(inputs, shapes)
                 if "..." in spec), default=0)
    ellipsis = "".join(next(spare) for _ in range(width))
    spelled = []
    for spec, shape in zip(inputs, shapes):
        if "..." in spec:
            n = len(shape) - (len(spec) - 3)
            spec = spec.replace("...", ellipsis[width - n:])
        spelled.append(spec)
    if arrow:
        rhs = rhs.replace("...", ellipsis)
    else:
        letters = "".join(spelled)
        rhs = ellipsis + "".join(sorted(c for c in set(letters) - set(ellipsis)
                                        if letters.count(c) == 1))
    return spelled, rhs


def _on_diagonals(part: Value, unique: str, mine: str, shape: tuple[int, ...]) -> Value:
    """The cotangent of an operand whose subscripts ``mine`` repeat an index (a diagonal),
    from its cotangent ``part`` over the ``unique`` letters: zero off the diagonal."""
    spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                 if c not in mine)
    seen: set[str] = set()
    spelled, deltas = "", []
    for c, d in zip(mine, shape):
        if c in seen:
            fresh = next(spare)
            spelled += fresh
            deltas.append((c + fresh, np.eye(d)))
        else:
            seen.add(c)
            spelled += c
    spec = ",".join([unique] + [sub for sub, _ in deltas]) + "->" + spelled
    return anp.einsum(spec, part, *[eye for _, eye in deltas])


def _einsum_vjp(node, ins, out, ct):
    inputs, output = _einsum_parts(node.param["subscripts"], [v.shape for v in node.inputs])
    cts = []
    for k, mine in enumerate(inputs):
        if node.inputs[k].dtype.kind not in "fc":
            cts.append(None)
            continue
        others = [s for j, s in enumerate(inputs) if j != k]
        unique = "".join(dict.fromkeys(mine))
        kept = "".join(c for c in unique if c in output or any(c in s for s in others))
        spec = ",".join([output] + others) + "->" + kept
        part = anp.einsum(spec, ct, *[x for j, x in enumerate(ins) if j != k])
        shape = node.inputs[k].shape
        sizes = dict(zip(mine, shape))
        if kept != unique:       # letters summed in this operand alone: broadcast back
            part = anp.broadcast_to(anp.reshape(part, tuple(
                sizes[c] if c in kept else 1 for c in unique)), tuple(sizes[c] for c in unique))
        if unique != mine:
            part = _on_diagonals(part, unique, mine, shape)
        cts.append(as_dtype(part, node.inputs[k].dtype))
    return cts


def _concatenate_vjp(node, ins, out, ct):
    axis = node.param["axis"]
    cts, start = [], 0
    for v in node.inputs:
        starts = tuple(start if k == axis else 0 for k in range(v.ndim))
        cts.append(p.bind_slice(ct, starts, (1,) * v.ndim, v.shape))
        start += v.shape[axis]
    return cts


def _sort_order(node, x):
    return anp.argsort(x, axis=node.param["axis"], stable=True)


def _sort_jvp(node, ins, out, tangents):
    return anp.take_along_axis(tangents[0], _sort_order(node, ins[0]), node.param["axis"])


def _sort_vjp(node, ins, out, ct):
    axis = node.param["axis"]
    inverse = anp.argsort(_sort_order(node, ins[0]), axis=axis, stable=True)
    return [anp.take_along_axis(ct, inverse, axis)]


def _cumsum_vjp(node, ins, out, ct):
    axis = node.param["axis"]
    return [anp.flip(anp.cumsum(anp.flip(ct, axis), axis=axis), axis)]


def _along_front(x: Value, axis: int) -> Value:
    return anp.moveaxis(x, axis, 0)


def _cumprod_jvp(node, ins, out, tangents):
    """t_out[i] = t_out[i-1] x[i] + out[i-1] t[i] (the product rule on out[i] = out[i-1] x[i]),
    a loop along the axis: exact where x has zeros, unlike out * cumsum(t / x)."""
    axis = node.param["axis"]
    x, y, t = (_along_front(v, axis) for v in (ins[0], out, tangents[0]))
    n = aval(x).shape[0]
    first = row(t, 0)
    acc0 = set_row(anp.zeros_like(t), 0, first)

    def step(i, state):
        prev, acc = state
        cur = anp.add(anp.multiply(prev, row(x, i)), anp.multiply(row(y, i - 1), row(t, i)))
        return cur, set_row(acc, i, cur)

    _, acc = lax.fori_loop(1, n, step, (first, acc0)) if n > 1 else (first, acc0)
    return anp.moveaxis(acc, 0, axis)


def _cumprod_vjp(node, ins, out, ct):
    """The transpose of the recurrence above: q[j] = ct[j] + x[j+1] q[j+1], then
    ct_x[j] = out[j-1] q[j] (out[-1] = 1), a loop from the end."""
    axis = node.param["axis"]
    x, y, c = (_along_front(v, axis) for v in (ins[0], out, ct))
    n = aval(x).shape[0]
    last = row(c, n - 1)
    q_all0 = set_row(anp.zeros_like(c), n - 1, last)

    def step(k, state):
        q, q_all = state
        j = n - 2 - k
        q = anp.add(row(c, j), anp.multiply(row(x, j + 1), q))
        return q, set_row(q_all, j, q)

    _, q_all = lax.fori_loop(0, n - 1, step, (last, q_all0)) if n > 1 else (last, q_all0)
    ones = anp.ones((1,) + tuple(aval(y).shape[1:]), aval(y).dtype)
    before = anp.concatenate([ones, y[:-1]], axis=0)
    return [anp.moveaxis(anp.multiply(before, q_all), 0, axis)]


def _gather_vjp(node, ins, out, ct):
    src = node.inputs[0]
    return [scatter(zeros(src.shape, src.dtype), node.param["index"], ins[1:], ct, "add")] + [
        None] * (len(ins) - 1)


def _scatter_parts(node, ins):
    x, arrays, updates = ins[0], list(ins[1:-1]), ins[-1]
    return x, arrays, updates, node.param["index"], node.param["mode"]


def _scatter_jvp(node, ins, out, tangents):
    x, arrays, u, index, mode = _scatter_parts(node, ins)
    tx, tu = tangents[0], tangents[-1]
    tx = tx if tx is not None else zeros(aval(x).shape, aval(x).dtype)
    tu = tu if tu is not None else anp.zeros_like(u)
    if mode in ("set", "add"):
        return scatter(tx, index, arrays, tu, mode)
    if mode == "multiply":
        scaled = scatter(tx, index, arrays, u, "multiply")
        return scatter(scaled, index, arrays, anp.multiply(gather(x, index, arrays), tu), "add")
    kept = anp.equal(x, out)
    return anp.where(kept, tx, scatter(anp.zeros_like(tx), index, arrays, tu, "set"))


def _scatter_vjp(node, ins, out, ct):
    x, arrays, u, index, mode = _scatter_parts(node, ins)
    u_shape = node.inputs[-1].shape
    picked = gather(ct, index, arrays)
    none = [None] * len(arrays)
    if mode == "set":
        return [scatter(ct, index, arrays, 0, "set"), *none, sum_to_shape(picked, u_shape)]
    if mode == "add":
        return [ct, *none, sum_to_shape(picked, u_shape)]
    if mode == "multiply":
        factor = scatter(anp.ones_like(ct), index, arrays, u, "multiply")
        ct_u = anp.multiply(picked, gather(x, index, arrays))
        return [anp.multiply(ct, factor), *none, sum_to_shape(ct_u, u_shape)]
    kept = anp.equal(x, out)
    ct_x = anp.where(kept, ct, anp.zeros_like(ct))
    won = anp.logical_and(anp.logical_not(gather(kept, index, arrays)),
                          anp.equal(u, gather(out, index, arrays)))
    ct_u = anp.where(won, picked, anp.zeros_like(picked))
    return [ct_x, *none, sum_to_shape(ct_u, u_shape)]


JVP_RULES: dict[Op, JvpRule] = {
    Op.SELECT: _linear_in((1, 2)),
    Op.CAST: _same_op, Op.REAL: _same_op, Op.IMAG: _same_op, Op.COMPLEX: _same_op,
    Op.CONJ: _same_op,
    Op.BROADCAST: _same_op, Op.TRANSPOSE: _same_op, Op.RESHAPE: _same_op, Op.SLICE: _same_op,
    Op.ROLL: _same_op,
    Op.REDUCE_SUM: _same_op, Op.REDUCE_PROD: _prod_jvp,
    Op.REDUCE_MAX: _extreme_jvp, Op.REDUCE_MIN: _extreme_jvp,
    Op.MATMUL: _matmul_jvp, Op.EINSUM: multilinear_jvp, Op.CONCATENATE: _same_op,
    Op.SORT: _sort_jvp, Op.CUMSUM: _same_op, Op.CUMPROD: _cumprod_jvp,
    Op.GATHER: _linear_in((0,)), Op.SCATTER: _scatter_jvp,
}

VJP_RULES: dict[Op, VjpRule] = {
    Op.SELECT: _select_vjp,
    Op.CAST: _cast_vjp, Op.REAL: _real_vjp, Op.IMAG: _imag_vjp, Op.COMPLEX: _complex_vjp,
    Op.CONJ: _conj_vjp,
    Op.BROADCAST: _broadcast_vjp, Op.TRANSPOSE: _transpose_vjp, Op.RESHAPE: _reshape_vjp,
    Op.SLICE: _slice_vjp, Op.ROLL: _roll_vjp,
    Op.REDUCE_SUM: _sum_vjp, Op.REDUCE_PROD: _prod_vjp,
    Op.REDUCE_MAX: _extreme_vjp, Op.REDUCE_MIN: _extreme_vjp,
    Op.MATMUL: _matmul_vjp, Op.EINSUM: _einsum_vjp, Op.CONCATENATE: _concatenate_vjp,
    Op.SORT: _sort_vjp, Op.CUMSUM: _cumsum_vjp, Op.CUMPROD: _cumprod_vjp,
    Op.GATHER: _gather_vjp, Op.SCATTER: _scatter_vjp,
}


def transpose_of_jvp(node: Node, ins, out, ct) -> list:
    """The VJP rule of most ops of ``LINALG_JVP``: the transpose of their JVP, which reverse
    mode derives itself (``reverse.Linearized``) by pulling cotangents back through the
    primitives the JVP rule records. Reverse mode recognises this rule and never calls it."""
    raise AssertionError(f"reverse mode transposes the JVP of {node.op.value}")


JVP_RULES.update(LINALG_JVP)
VJP_RULES.update({op: transpose_of_jvp for op in LINALG_JVP})
VJP_RULES.update({Op.SOLVE: solve_vjp, Op.CONVOLVE: convolve_vjp})   # linear in an operand
assert set(JVP_RULES) == set(VJP_RULES)
