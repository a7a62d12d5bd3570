"""Reductions split across threads: each chunk of the reduced loop accumulates into its own
slot of partial arrays (``<name>_part``), then one call folds the slots in chunk order and runs
the epilogue and the stores (``<name>_finish``).

Two kinds split: a full reduction (no outer loop; a scalar partial per chunk) and a reduction
over leading axes rendered in column order (``columns``: a partial per chunk and column, the
chunks taken over the rows), when its columns are few enough for the partials to stay small
and its folds are exact in any grouping (extremes, logic, integers): a column's float sum
keeps NumPy's row-by-row order, so such a kernel splits its columns instead, one contiguous
slab a thread (``steps.CHUNKS_PER_THREAD_IN_COLUMNS``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.rules import ARG_REDUCTIONS, REDUCTION_RULES
from ...passes.kernel import Kernel, Reduce
from .access import ParamTable
from .codegen import (REDUCTION_OPTIONS, RenderedKernel, RenderMode, array_names, flat_entry,
                      not_flat, render_passes)

# A column-order kernel splits its rows only up to this many columns: the partials are
# chunks x columns, and a wider array reads long runs of each row from column chunks anyway.
MAX_ROW_SPLIT_COLUMNS = 8192


@dataclass(frozen=True)
class Split:
    """How a kernel's reduction is split: over which loop, and how many partial slots each
    chunk takes."""

    rows: bool         # the rows of a kernel in column order (else the only loop nest)
    extent: int        # the trip count of the loop split into chunks
    slots: int         # partial slots per chunk (the columns, or one)


def split_of(kernel: Kernel, rendered: RenderedKernel) -> Split | None:
    """How ``kernel`` splits across threads, or None when it does not split this way."""
    if kernel.passes != 1 or not kernel.sizes:
        return None
    if kernel.n_outer == 0:
        return Split(False, kernel.sizes[0], 1)
    if rendered.column_order and kernel.sizes[0] <= MAX_ROW_SPLIT_COLUMNS \
            and kernel.sizes[1] >= 2 and all(_exact(r) for r in kernel.reductions):
        return Split(True, kernel.sizes[1], kernel.sizes[0])
    return None


def _exact(r: Reduce) -> bool:
    """Whether folding ``r`` in chunks gives the running fold's result exactly: extremes and
    logic always, sums and products of integers (modular arithmetic is associative); a float
    sum would round differently from NumPy's row-by-row sum."""
    update = REDUCTION_RULES[r.op].update
    return update in ("max", "min", "and", "or") or r.acc_dtype.kind in "iub"


def partial_arrays(kernel: Kernel) -> list[tuple[str, np.dtype]]:
    """(name, dtype) of the per-chunk partial arrays of a split kernel: each reduction's
    accumulator, plus the extreme value for argmax/argmin."""
    arrays: list[tuple[str, np.dtype]] = []
    for k, r in enumerate(kernel.reductions):
        if r.op in ARG_REDUCTIONS:
            arrays += [(f"part{k}", np.dtype(np.int64)), (f"part{k}_m", r.dtype)]
        else:
            arrays.append((f"part{k}", r.acc_dtype))
    return arrays


def part_name(name: str) -> str:
    """The name of kernel ``name``'s function that fills one partial slot."""
    return f"{name}_part"


def render_split(kernel: Kernel, name: str, split: Split) -> str:
    """``<name>_part(part..., reads..., P, start, stop, t)`` accumulates ``range(start,
    stop)`` of the split loop into slot ``t`` of the partial arrays; ``<name>_finish(
    writes..., reads..., part..., P, n)`` combines ``n`` partials and runs the epilogue and
    the stores."""
    writes, reads = array_names(kernel)
    parts = [name for name, _ in partial_arrays(kernel)]
    sources = []
    part, finish = ((RenderMode.ROWS_PART, RenderMode.ROWS_FINISH) if split.rows else
                    (RenderMode.PART, RenderMode.FINISH))
    for function, mode, signature in (
            (part_name(name), part, parts + reads + ["P", "start", "stop", "t"]),
            (f"{name}_finish", finish, writes + reads + parts + ["P", "n"])):
        params = ParamTable()
        for size in kernel.sizes:
            params.slot(size)
        body: list[str] = []
        render_passes(kernel, params, body, mode)
        text = "\n".join("    " + line for line in params.prologue() + body)
        sources.append(flat_entry(function, signature, not_flat(kernel), text,
                                  REDUCTION_OPTIONS))
    return "\n\n".join(sources)
