"""Reference evaluator: runs a Graph node by node with NumPy.

It is the test oracle for the compiler and the executor behind ``ARRJIT_DISABLE_JIT=1``.
Every op has an entry in ``IMPLS`` (a test checks the table covers ``Op``).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> x = Var(0, Aval((2,), np.dtype("float64"))); y = Var(1, Aval((2,), np.dtype("float64")))
>>> evaluate(Graph((x,), (Node(Op.SQRT, (x,), y),), (y,)), [np.array([4.0, 9.0])])
[array([2., 3.])]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .dtypes import complex_dtype
from .ir import LIBRARY_CALLS, SPECIAL, UFUNC_OPS, Graph, Node, Op, ufunc_of
from .library import LIBRARY_IMPLS
from .rules import ARG_REDUCTIONS, REDUCTION_RULES
from .special import SCALAR, vectorized


def _reduce(fn):
    return lambda x, *, axes, out_shape: fn(x, axis=axes)


def _arg_reduce(fn):
    def impl(x, *, axes, out_shape):
        if len(axes) == x.ndim and x.ndim != 1:
            return fn(x.reshape(-1))
        return fn(x, axis=axes[0])
    return impl


def _cast(x, dtype) -> np.ndarray:
    """``x.astype(dtype)``; complex to real keeps the real part, as NumPy does (without its
    ComplexWarning: ``astype`` asked for exactly this)."""
    x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(dtype).kind not in "cb":
        x = x.real
    return x.astype(dtype)


def _complex(re, im) -> np.ndarray:
    out = np.empty(np.shape(re), complex_dtype(np.result_type(re)))
    out.real, out.imag = re, im
    return out


def slice_window(x: np.ndarray, *, starts, steps, out_shape) -> np.ndarray:
    """``x`` viewed with ``out[i] = x[starts + steps * i]`` per dimension (a NumPy view)."""
    index = []
    for start, step, n in zip(starts, steps, out_shape):
        stop = start + step * n
        index.append(slice(start, stop if stop >= 0 else None, step))
    return x[tuple(index)]


IMPLS: dict[Op, Callable[..., Any]] = {op: ufunc_of(op) for op in UFUNC_OPS}
IMPLS.update({
    Op.CONST: lambda *, value, out_shape, runtime=False: value.array,
    Op.SELECT: lambda p, a, b, *, out_shape: np.where(p, a, b),
    Op.CAST: lambda x, *, dtype, out_shape: _cast(x, dtype),
    Op.REAL: lambda x, *, out_shape: np.real(x),
    Op.IMAG: lambda x, *, out_shape: np.imag(x),
    Op.COMPLEX: lambda re, im, *, out_shape: _complex(re, im),
    Op.BROADCAST: lambda x, *, shape, out_shape: np.broadcast_to(x, shape),
    Op.TRANSPOSE: lambda x, *, perm, out_shape: np.transpose(x, perm),
    Op.RESHAPE: lambda x, *, shape, out_shape: np.reshape(x, shape),
    Op.SLICE: slice_window,
    Op.ROLL: lambda x, *, axis, shift, out_shape: np.roll(x, shift, axis),
})
IMPLS.update({op: (lambda fn: lambda *xs, out_shape: fn(*xs))(vectorized(SCALAR[op.value]))
              for op in SPECIAL})
IMPLS.update({op: (_arg_reduce if op in ARG_REDUCTIONS else _reduce)(rule.reference)
              for op, rule in REDUCTION_RULES.items()})
IMPLS.update({op: (lambda fn: lambda *xs, out_shape, **p: fn(*xs, **p))(LIBRARY_IMPLS[op])
              for op in LIBRARY_CALLS})


def _while(*inputs, cond: Graph, body: Graph, n_carry: int, n_cond_consts: int,
           out_shape, trip_count: int | None = None) -> tuple:
    carry = list(inputs[:n_carry])
    cond_consts = list(inputs[n_carry:n_carry + n_cond_consts])
    body_consts = list(inputs[n_carry + n_cond_consts:])
    while bool(evaluate(cond, carry + cond_consts)[0]):
        carry = evaluate(body, carry + body_consts)
    return tuple(carry)


IMPLS[Op.WHILE] = _while


def evaluate_node(node: Node, values: Sequence[np.ndarray]):
    impl = IMPLS[node.op]
    if node.extra:
        return impl(*values, **node.param, out_shape=node.out.shape)
    if node.op in UFUNC_OPS:
        with np.errstate(all="ignore"):
            out = impl(*values)
    else:
        out = impl(*values, **node.param, out_shape=node.out.shape)
    return np.asarray(out, dtype=node.out.dtype)


def evaluate(graph: Graph, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate ``graph`` on concrete arrays; returns fresh arrays (never views of inputs).
    A value is dropped after its last reader, as eager NumPy code drops it: the allocator
    then reuses its memory for the next one (keeping them all alive faulted in fresh pages
    for every large intermediate, twice NumPy's time on a 65536-row program)."""
    env = dict(zip(graph.inputs, args))
    dead_after = _dead_after(graph)
    for k, node in enumerate(graph.nodes):
        result = evaluate_node(node, [env[v] for v in node.inputs])
        if node.extra:
            env.update(zip(node.outs, result))
        else:
            env[node.out] = result
        for v in dead_after.get(k, ()):
            del env[v]
    return [np.array(env[v]) for v in graph.outputs]


def _dead_after(graph: Graph) -> dict[int, list]:
    """Node index -> the values no later node reads (outputs are never dead)."""
    last: dict = {}
    for k, node in enumerate(graph.nodes):
        for v in node.inputs:
            last[v] = k
    for v in graph.outputs:
        last.pop(v, None)
    dead: dict[int, list] = {}
    for v, k in last.items():
        dead.setdefault(k, []).append(v)
    return dead
