"""Reference evaluator: runs a Graph node by node with NumPy.

It is the test oracle for the compiler and the executor behind ``ARRJIT_DISABLE_JIT=1``.
Every op has an entry in ``IMPLS`` (a test checks the table covers ``Op``).

>>> import numpy as np
>>> from arrjit.dtypes import Aval
>>> from arrjit.ir import Graph, Node, Op, Var
>>> x = Var(0, Aval((2,), np.dtype("float64"))); y = Var(1, Aval((2,), np.dtype("float64")))
>>> evaluate(Graph((x,), (Node(Op.SQRT, (x,), y),), (y,)), [np.array([4.0, 9.0])])
[array([2., 3.])]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .ir import UFUNC_OPS, Graph, Node, Op, ufunc_of


def _slice(x: np.ndarray, *, starts, steps, out_shape) -> np.ndarray:
    index = []
    for start, step, n in zip(starts, steps, out_shape):
        stop = start + step * n
        index.append(slice(start, stop if stop >= 0 else None, step))
    return x[tuple(index)]


IMPLS: dict[Op, Callable[..., Any]] = {op: ufunc_of(op) for op in UFUNC_OPS}
IMPLS.update({
    Op.CONST: lambda *, value, out_shape: value.array,
    Op.SELECT: lambda p, a, b, *, out_shape: np.where(p, a, b),
    Op.CAST: lambda x, *, dtype, out_shape: np.asarray(x).astype(dtype),
    Op.BROADCAST: lambda x, *, shape, out_shape: np.broadcast_to(x, shape),
    Op.TRANSPOSE: lambda x, *, perm, out_shape: np.transpose(x, perm),
    Op.RESHAPE: lambda x, *, shape, out_shape: np.reshape(x, shape),
    Op.SLICE: _slice,
    Op.DOT: lambda a, b, *, out_shape: np.dot(a, b),
})


def evaluate_node(node: Node, values: Sequence[np.ndarray]) -> np.ndarray:
    impl = IMPLS[node.op]
    if node.op in UFUNC_OPS:
        with np.errstate(all="ignore"):
            out = impl(*values)
    else:
        out = impl(*values, **node.param, out_shape=node.out.shape)
    return np.asarray(out, dtype=node.out.dtype)


def evaluate(graph: Graph, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate ``graph`` on concrete arrays; returns fresh arrays (never views of inputs)."""
    env = dict(zip(graph.inputs, args))
    for node in graph.nodes:
        env[node.out] = evaluate_node(node, [env[v] for v in node.inputs])
    return [np.array(env[v]) for v in graph.outputs]
