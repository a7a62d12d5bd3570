"""A stage plan as dask arrays: each stage is one ``dask.array.blockwise`` task per block
(its outputs taken from that task), each reduction over a chunked axis a
``dask.array.reduction`` of the partials, each arg-reduction dask's own ``argmax``/``argmin``.

Index letters: a chunked axis class is one letter shared by every array that runs along it
(dask unifies their chunks); every other axis gets a letter of its own, so its block is the
whole axis.
"""
from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from ..core.ir import Op, Var
from .blocks import BlockProgram, Combine
from .stages import ARG_REDUCTIONS, Stage, StagePlan


def build(plan: StagePlan, inputs: dict[int, Any], name: str, token: str) -> dict[int, Any]:
    """Dask arrays for the plan's values: ``inputs`` maps graph input ids to dask arrays or
    scalars; returns every value the plan computes (stage outputs and reductions)."""
    import dask.array as da

    values = dict(inputs)

    def reduce_what_is_ready() -> None:
        for node in plan.reductions:
            partial = -node.out.id - 1
            if node.out.id in values:
                continue
            if node.op in ARG_REDUCTIONS and node.inputs[0].id in values:
                values[node.out.id] = _arg_reduce(node.op, values[node.inputs[0].id],
                                                  node.param["axes"], node.out.dtype)
            elif partial in values:
                combine = Combine(node.op, node.out.dtype)
                values[node.out.id] = da.reduction(
                    values.pop(partial), chunk=combine, combine=combine, aggregate=combine,
                    axis=node.param["axes"], keepdims=False, dtype=node.out.dtype,
                    concatenate=True, meta=np.empty((0,) * node.out.ndim, node.out.dtype),
                    name=f"{name}-{node.op.value}-{token}-{node.out.id}")

    reduce_what_is_ready()
    for k, stage in enumerate(plan.stages):
        leaves = _run_stage(plan, stage, values, f"{name}-{k}-{token}", name)
        for out, leaf in zip(stage.outputs, leaves):
            values[out.var.id if out.kind == "value" else -out.var.id - 1] = leaf
        reduce_what_is_ready()
    return values


def _arg_reduce(op: Op, x, axes: tuple[int, ...], dtype: np.dtype):
    import dask.array as da

    fn = da.argmax if op is Op.ARGMAX else da.argmin
    axis = None if len(axes) == x.ndim and x.ndim != 1 else axes[0]
    return fn(x, axis=axis).astype(dtype)


def _run_stage(plan: StagePlan, stage: Stage, values: dict[int, Any], task: str,
               function: str) -> list:
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    classes, chunked = plan.classes, plan.chunked
    fresh = (f"u{k}" for k in itertools.count())

    def index(v: Var) -> tuple[str, ...]:
        return tuple(f"c{c}" if c in chunked else next(fresh) for c in classes.of(v))

    grid = tuple(sorted({f"c{c}" for v in stage.graph.inputs for c in classes.of(v)
                         if c in chunked}))
    args: list = []
    for v in stage.graph.inputs:
        x = values[v.id]
        if v.ndim == 0 and not hasattr(x, "chunks"):
            args.extend([x, None])
        else:
            args.extend([da.asarray(x), index(v)])
    program = BlockProgram(
        stage.graph, {v.id: classes.of(v) for v in _stage_vars(stage)}, chunked,
        tuple((o.reduce.op, o.reduce.param["axes"]) if o.reduce is not None else (None, ())
              for o in stage.outputs), function)
    blocks = da.blockwise(program, grid, *args, concatenate=True, name=task,
                          meta=np.empty((0,) * len(grid), object))
    chunks_of = dict(zip(grid, blocks.chunks))
    leaves = []
    for k, out in enumerate(stage.outputs):
        src = out.source
        reduced = set(out.reduce.param["axes"]) if out.reduce is not None else set()
        letters: list[str | None] = []
        chunks: list[tuple[int, ...]] = []
        for axis, (cls, n) in enumerate(zip(classes.of(src), src.shape)):
            letter = f"c{cls}" if cls in chunked else None
            letters.append(letter)
            if letter is None:
                chunks.append((1,) if axis in reduced else (n,))
            else:
                c = chunks_of[letter]
                chunks.append((1,) * len(c) if axis in reduced else c)
        leaf = f"{task}-out{k}"
        layer: dict[Any, Any] = {}
        for block in itertools.product(*(range(len(c)) for c in chunks)):
            at = dict(zip(letters, block))
            source = (task, *(at.get(letter, 0) for letter in grid))
            layer[(leaf, *block)] = (operator.getitem, source, k)
        graph = HighLevelGraph.from_collections(leaf, layer, dependencies=[blocks])
        dtype = src.dtype
        leaves.append(da.Array(graph, leaf, chunks=tuple(chunks),
                               meta=np.empty((0,) * len(chunks), dtype)))
    return leaves


def _stage_vars(stage: Stage):
    yield from stage.graph.inputs
    for node in stage.graph.nodes:
        yield from node.outs
