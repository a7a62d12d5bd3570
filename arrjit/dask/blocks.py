"""What runs on a worker: a stage's sub-graph compiled for the shapes of one block, and the
functions that combine reduction partials. Both are small picklable objects holding IR as
data; each process compiles a program once per block signature (or loads it from the disk
cache) and keeps it for every later task.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Op, Var
>>> x, y = Var(0, Aval((6,), np.dtype("float64"))), Var(1, Aval((6,), np.dtype("float64")))
>>> program = BlockProgram(Graph((x,), (Node(Op.SQRT, (x,), y),), (y,)),
...                        {0: (7,), 1: (7,)}, frozenset({7}), ((None, ()),))
>>> program(np.array([4.0, 9.0]))           # a block of 2 of the 6 elements
(array([2., 3.]),)
"""
from __future__ import annotations

import hashlib
import pickle
import threading
from typing import Any, Callable

import numpy as np

from ..api import Jitted, jit
from ..config import config
from ..core.dtypes import Aval
from ..core.ir import Graph, Op, Var
from ..core.trace import Tracer, current_trace

_programs: dict[str, Jitted] = {}     # per process: content digest -> compiled program
_lock = threading.Lock()
blocks_run = [0]                      # blocks this process has computed (tests count them)


class BlockProgram:
    """``graph`` run on blocks: sizes along chunked classes come from the blocks, every other
    size is the graph's. ``outputs`` lists, per graph output, ``(reduce op, axes)`` to reduce
    it to a partial with those axes kept, or ``(None, ())`` for the block itself."""

    def __init__(self, graph: Graph, classes: dict[int, tuple[int, ...]],
                 chunked: frozenset[int], outputs: tuple[tuple[Op | None, tuple[int, ...]], ...],
                 name: str = "block"):
        self.graph, self.classes, self.chunked = graph, classes, chunked
        self.outputs, self.name = outputs, name
        self.digest = hashlib.sha256(pickle.dumps(
            (graph.inputs, graph.nodes, graph.outputs, sorted(classes.items()), sorted(chunked),
             outputs))).hexdigest()

    def __call__(self, *blocks: Any) -> tuple[np.ndarray, ...]:
        size_threads_to_worker()
        program = _programs.get(self.digest)
        if program is None:
            with _lock:
                program = _programs.setdefault(self.digest, jit(self._replay))
                program._name = f"{self.name} (one block)"
        blocks_run[0] += 1
        return tuple(program(*blocks))

    def _replay(self, *args: Any) -> tuple:
        """Re-record the graph in the current trace with this block's shapes."""
        ctx = current_trace()
        assert ctx is not None, "replayed only while jit traces"
        classes, chunked = self.classes, self.chunked
        env: dict[int, Var] = {}
        sizes: dict[int, int] = {}

        def whole(var_id: int, shape: tuple[int, ...]) -> list[int]:
            """The extents of ``shape`` along the axes no chunk splits."""
            return [n for cls, n in zip(classes[var_id], shape) if cls not in chunked]

        for k, (v, a) in enumerate(zip(self.graph.inputs, args)):
            var = _as_var(ctx, a, v)
            env[v.id] = var
            if var.ndim != v.ndim or whole(v.id, v.shape) != whole(v.id, var.shape):
                raise ValueError(
                    f"{self.name} (one block): input {k} of the block program came as a block "
                    f"of shape {var.shape}; its value has shape {v.shape}, split only along "
                    f"chunked axes. dask handed the task a block that does not match the "
                    f"plan: please report this with the dask version.")
            for cls, n in zip(classes[v.id], var.shape):
                if cls in chunked:
                    sizes[cls] = n

        def aval(v: Var) -> Aval:
            shape = tuple(sizes[c] if c in chunked else n for c, n in zip(classes[v.id], v.shape))
            return Aval(shape, v.dtype, v.aval.weak)

        for node in self.graph.nodes:
            params = dict(node.params)
            if node.op in (Op.BROADCAST, Op.RESHAPE):
                params["shape"] = aval(node.out).shape
            inputs = tuple(env[v.id] for v in node.inputs)
            if node.extra:
                outs = ctx.add_multi(node.op, inputs, [aval(v) for v in node.outs], **params)
            else:
                outs = [ctx.add_node(node.op, inputs, aval(node.out), **params)]
            for v, new in zip(node.outs, outs):
                env[v.id] = new
        results = []
        for v, (op, axes) in zip(self.graph.outputs, self.outputs):
            var = env[v.id]
            if op is not None:
                var = _partial(ctx, op, var, axes)
            results.append(Tracer(ctx, var, frozenset()))
        return tuple(results)


def _as_var(ctx, a: Any, v: Var) -> Var:
    if isinstance(a, Tracer):
        return a.ir_var
    return ctx.constant(np.asarray(a, dtype=v.dtype))


def _partial(ctx, op: Op, var: Var, axes: tuple[int, ...]) -> Var:
    """``op`` over ``axes`` of ``var`` with those axes kept (size 1)."""
    dtype = var.dtype            # the graph cast the reduced value to the result's dtype
    shape = tuple(n for a, n in enumerate(var.shape) if a not in axes)
    reduced = ctx.add_node(op, (var,), Aval(shape, dtype), axes=axes)
    kept = tuple(1 if a in axes else n for a, n in enumerate(var.shape))
    return ctx.add_node(Op.RESHAPE, (reduced,), Aval(kept, dtype), shape=kept)


class Combine:
    """dask's ``chunk`` / ``combine`` / ``aggregate`` for partials of one reduction op: the
    same reduction, compiled by arrjit, over the concatenated partials."""

    def __init__(self, op: Op, dtype: np.dtype):
        self.op, self.dtype = op, np.dtype(dtype)

    def __call__(self, x: np.ndarray, axis: Any = None, keepdims: bool = False, **_: Any):
        axes = tuple(range(np.ndim(x))) if axis is None else (
            (axis,) if isinstance(axis, int) else tuple(axis))
        axes = tuple(sorted(a % max(np.ndim(x), 1) for a in axes))
        key = f"combine-{self.op.value}-{self.dtype.str}"
        program = _programs.get(key)
        if program is None:
            with _lock:
                program = _programs.setdefault(key, jit(
                    _combiner(self.op, self.dtype), static_argnames=("axes", "keepdims")))
        return program(np.asarray(x, self.dtype), axes=axes, keepdims=keepdims)


def _combiner(op: Op, dtype: np.dtype) -> Callable:
    def combine(x, axes, keepdims):
        ctx = current_trace()
        var = _partial(ctx, op, x.ir_var, axes)
        if not keepdims:
            shape = tuple(n for a, n in enumerate(x.shape) if a not in axes)
            var = ctx.add_node(Op.RESHAPE, (var,), Aval(shape, var.dtype), shape=shape)
        return Tracer(ctx, var, frozenset())
    return combine


def size_threads_to_worker() -> None:
    """In a ``dask.distributed`` worker, kernels use at most the worker's ``nthreads`` threads
    (unless ``ARRJIT_NUM_THREADS`` chose a count): a worker runs that many tasks at once."""
    if config.num_threads or _sized[0]:
        return
    _sized[0] = True
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return
    nthreads = getattr(getattr(worker, "state", worker), "nthreads", None) or 1
    config.update("num_threads", max(1, int(nthreads)))


_sized = [False]


def process_stats() -> dict[str, int]:
    """This process's compiles and disk-cache loads of block programs and combiners, and the
    blocks it computed (``client.run(arrjit.dask.process_stats)`` asks every worker)."""
    infos = [p.cache_info() for p in list(_programs.values())]
    return {"compiles": sum(i.compiles for i in infos),
            "disk_hits": sum(i.disk_hits for i in infos),
            "blocks": blocks_run[0]}
