"""Dask integration: a jitted function called with ``dask.array`` arguments returns lazy dask
arrays, planned over the chunks with dask's own ``blockwise`` and ``reduction``.

The function is traced once on the whole arrays' shapes and dtypes (so ``x.shape[0]`` and the
count ``mean`` divides by are the whole array's), its graph is cut into passes over the blocks
(``stages``), and each pass runs as one compiled arrjit program per block (``blocks``). Dask is
imported only when a dask array arrives; importing arrjit never imports it.

>>> import numpy as np, dask.array as da, arrjit, arrjit.numpy as anp
>>> f = arrjit.jit(lambda x, w: anp.tanh(x * w).sum(axis=0))
>>> x = da.from_array(np.arange(12.0).reshape(6, 2) / 10, chunks=(2, 2))
>>> y = f(x, np.array([1.0, -1.0]))
>>> type(y).__name__, y.shape
('Array', (2,))
>>> np.allclose(y.compute(), np.tanh(x.compute() * [1.0, -1.0]).sum(axis=0))
True
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..api import register_collection
from ..core.tree import flatten_with_paths, unflatten
from ..passes.simplify import simplify
from .blocks import process_stats
from .stages import ChunkedAxis, ChunkingError

if TYPE_CHECKING:
    from ..api import Jitted

__all__ = ["is_dask_array", "call", "ChunkingError", "process_stats"]

_plans: "weakref.WeakKeyDictionary[Jitted, dict]" = weakref.WeakKeyDictionary()


def is_dask_array(x: Any) -> bool:
    """True for a ``dask.array.Array`` (without importing dask)."""
    return type(x).__module__.startswith("dask.array") and hasattr(x, "chunks") and hasattr(
        x, "__dask_graph__")


def call(jitted: "Jitted", values: Sequence, leaves: list) -> Any:
    """``jitted(*values)`` with some leaves dask arrays: lazy dask arrays, same pytree."""
    import dask.array as da
    from dask.base import tokenize

    stand_ins = _stand_in_values(jitted, values)
    key, _ = jitted._key(stand_ins)
    pattern = tuple(tuple(len(c) > 1 for c in x.chunks) if is_dask_array(x) else None
                    for x in leaves)
    cached = _plans.setdefault(jitted, {}).get((key, pattern))
    if cached is None:
        cached = _plan(jitted, stand_ins, leaves)
        _plans[jitted][(key, pattern)] = cached
    graph, out_tree, plan, names = cached
    from .arrays import build

    inputs: dict[int, Any] = {}
    for v, x in zip(graph.inputs, leaves):
        inputs[v.id] = x if is_dask_array(x) or np.ndim(x) == 0 and not isinstance(
            x, np.ndarray) else da.asarray(x)
    token = tokenize(jitted._name, key, [x.name if is_dask_array(x) else x for x in leaves])
    label = "".join(ch if ch.isalnum() or ch in "_." else "-" for ch in jitted._name)
    computed = build(plan, inputs, f"arrjit-{label}", token)
    outs = []
    for v in graph.outputs:
        value = computed.get(v.id)
        if value is None:                  # an output that is a constant of the function
            value = _constant(graph, v)
        outs.append(value if is_dask_array(value) else da.asarray(value))
    return outs[0] if out_tree.kind is None else unflatten(out_tree, outs)


def _stand_in_values(jitted: "Jitted", values: Sequence) -> list:
    """``values`` with each dask leaf replaced by a zero-strided NumPy view of its shape and
    dtype (no memory), for tracing."""
    out = []
    for k, v in enumerate(values):
        if k in jitted._static_positions:
            out.append(v)
            continue
        leaves, _, tree = flatten_with_paths(v)
        if any(is_dask_array(x) for x in leaves):
            v = unflatten(tree, [np.broadcast_to(np.zeros((), x.dtype), x.shape)
                                 if is_dask_array(x) else x for x in leaves])
        out.append(v)
    return out


def _plan(jitted: "Jitted", stand_ins: list, leaves: list):
    from .axes import classify
    from .stages import plan_stages

    _, stand_in_leaves = jitted._key(stand_ins)
    traced, out_tree, names, _ = jitted._trace(stand_ins, stand_in_leaves)
    graph = simplify(traced)
    axes = classify(graph)
    chunked: dict[int, ChunkedAxis] = {}
    for v, x, name in zip(graph.inputs, leaves, names):
        if is_dask_array(x):
            for axis, c in enumerate(x.chunks):
                if len(c) > 1:
                    chunked.setdefault(axes.of(v)[axis], ChunkedAxis(name, axis, tuple(c)))
    plan = plan_stages(graph, axes, chunked, jitted._name)
    return graph, out_tree, plan, names


def _constant(graph, v):
    node = graph.producer(v)
    if node is None or node.param.get("value") is None:
        raise ChunkingError(f"output {v} is neither computed nor a constant")
    return node.param["value"].array


register_collection(is_dask_array, call)
