"""Reductions over leading axes in column order.

A kernel that reduces over the leading axis of a C-ordered array (``x.sum(axis=0)``, the
bias and scale gradients of a backward pass) keeps the columns as its outer loop. Reading
each column down the rows strides through memory one element per row: 7x slower than NumPy
on 4096 x 256. Rendered in column order instead, the kernel keeps one accumulator per column
in a small array and runs the rows outside, so the inner loop reads each row contiguously
and vectorises. Each column still folds its rows in the same order, so the results are the
same bit for bit. The columns go in blocks of ``BLOCK``, whose accumulators live on the
kernel's stack (``mathlib.block``): no allocation, and a block's rows stay in cache.

Run on threads, a kernel whose fold is exact in any grouping splits its rows (``splits``):
each row chunk ``t`` accumulates every column into ``part<k>[t * columns + column]``
(``render_rows_part``); ``render_rows_finish`` folds the chunks column by column, in chunk
order, and runs the epilogue and the stores. A float sum keeps NumPy's order by splitting its
columns instead, one slab of whole cache lines per thread (``steps``), so each thread reads a
narrow run of every row: the row loop asks for the slab's lines ``ROWS_AHEAD`` rows ahead
(``prefetch_lines``), since the hardware's prefetchers follow runs within a page, not the jump
from one row to the next.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ...core.rules import ARG_REDUCTIONS, REDUCTION_RULES
from ...passes.kernel import Affine, Kernel, Load, Reduce
from .access import ParamTable, index_expr
from .mathnames import BLOCK

# How far below the current row the row loop asks for its lines.
ROWS_AHEAD = 16
LINE_BYTES = 64
NARROW_LINES = 8


def suits(kernel: Kernel, simple: bool) -> bool:
    """Whether ``kernel`` is one pass over two loops (columns outside, rows inside) whose
    loads run contiguously along the columns and with a stride along the rows. ``simple``:
    the renderer found nothing but loads and constants between the loops and no store in
    the pass. The decision depends on the pattern of unit and other strides only, so it is
    the same for every size of the same structure."""
    if not (simple and kernel.n_outer == 1 and len(kernel.sizes) == 2 and kernel.passes == 1):
        return False
    if any(r.op in ARG_REDUCTIONS for r in kernel.reductions):
        return False
    loads = [s for s in kernel.stmts if isinstance(s, Load) and 1 in s.access.loops()]
    if any(s.access.wraps or s.access.coefs[0] not in (0, 1) for s in loads):
        return False
    return any(s.access.coefs[1] not in (0, 1) for s in loads)


def _accumulator_dtype(r: Reduce) -> str:
    rule = REDUCTION_RULES[r.op]
    dtype = r.dtype if rule.update in ("max", "min") else r.acc_dtype
    return f"np.{dtype.name}" if dtype.name != "bool" else "np.bool_"


Lines = Callable[[Reduce], tuple[list[str], list[str]]]


def _row_strided_loads(kernel: Kernel) -> list[tuple[Load, int]]:
    """The loads strided along the rows, each with the elements in a cache line of its
    buffer."""
    return [(s, max(1, LINE_BYTES // kernel.reads[s.buffer].dtype.itemsize))
            for s in kernel.stmts
            if isinstance(s, Load) and not s.own_output and s.access.coefs[1] not in (0, 1)]


def prefetch_lines(kernel: Kernel, params: ParamTable) -> list[str]:
    """Per load strided along the rows: a loop over the lines of its columns ``b0:b1`` at row
    ``i1 + ROWS_AHEAD`` asking for each (the last line too where ``b1`` is not at a line's
    start; past the last row the hints ask for nothing that is read, harmlessly). Only for a
    slab ``start:stop`` narrower than ``NARROW_LINES`` lines of rows at least that long: over
    wider runs of a row, or rows that follow each other closely, the hardware's prefetchers
    keep up and the hints only cost time."""
    lines = []
    for s, step in _row_strided_loads(kernel):
        a = s.access
        ahead = Affine(a.offset + ROWS_AHEAD * a.coefs[1], a.coefs, True, a.wraps, a.positions)
        narrow = NARROW_LINES * step
        lines += [f"if stop - start < {narrow} and {params.slot(a.coefs[1])} >= {narrow}:",
                  f"    for i0 in range(b0, b1 + {step - 1}, {step}):",
                  f"        _M.prefetch(r{s.buffer}, {index_expr(ahead, params)})"]
    return lines


def line_elements(kernel: Kernel) -> int:
    """Elements in a cache line of the buffers read along the rows (the most of any): a slab
    of columns starting at a multiple of it starts at a line of each (rows aligned)."""
    return max((step for _, step in _row_strided_loads(kernel)), default=1)


def _row_loop(body: list[str], per_column: list[str], per_element: list[str],
              reductions: tuple[Reduce, ...], reduction_lines: Lines, rows: str,
              prefetches: list[str]) -> None:
    """Inside a block of columns ``b0:b1``: the accumulators' rows loop over ``rows``."""
    body.append(f"    for i1 in {rows}:")
    body.extend("        " + line for line in prefetches)
    body.append("        for i0 in range(b0, b1):")
    inner = list(per_column) + [f"{r.name} = _M.load({r.name}_c, i0 - b0)" for r in reductions]
    inner += per_element
    for r in reductions:
        inner.extend(reduction_lines(r)[1])
        inner.append(f"_M.store({r.name}_c, i0 - b0, {r.name})")
    body.extend("            " + line for line in inner)


def _blocks(body: list[str], reductions: tuple[Reduce, ...], reduction_lines: Lines,
            start: str, stop: str) -> None:
    """The accumulators' blocks, the loop over blocks of columns ``start:stop``, their
    initialisation."""
    for r in reductions:
        body.append(f"{r.name}_c = _M.block({_accumulator_dtype(r)})")
    body.append(f"for b0 in range({start}, {stop}, {BLOCK}):")
    body.append(f"    b1 = _M.imin(b0 + {BLOCK}, {stop})")
    body.append("    for i0 in range(b0, b1):")
    for r in reductions:
        body.extend("        " + line for line in reduction_lines(r)[0])
        body.append(f"        _M.store({r.name}_c, i0 - b0, {r.name})")


def render(body: list[str], before: list[str], per_column: list[str], per_element: list[str],
           reductions: tuple[Reduce, ...], after: list[str], reduction_lines: Lines,
           prefetches: list[str]) -> None:
    """The kernel in column order: ``before`` (no loop), ``per_column`` (loads of the
    column's values, repeated where needed), ``per_element`` (the statements of the rows
    loop, after the ``prefetches``), then the accumulators' updates, and ``after`` (epilogue
    and stores)."""
    body.extend(before)
    _blocks(body, reductions, reduction_lines, "start", "stop")
    _row_loop(body, per_column, per_element, reductions, reduction_lines, "range(p1)",
              prefetches)
    body.append("    for i0 in range(b0, b1):")
    last = list(per_column) + [f"{r.name} = _M.load({r.name}_c, i0 - b0)" for r in reductions]
    body.extend("        " + line for line in last + after)


def render_rows_part(body: list[str], before: list[str], per_column: list[str],
                     per_element: list[str], reductions: tuple[Reduce, ...], after: list[str],
                     reduction_lines: Lines, prefetches: list[str]) -> None:
    """Rows ``range(start, stop)`` of every column into the partials' slot ``t`` (whole rows:
    no ``prefetches``)."""
    body.extend(before)
    _blocks(body, reductions, reduction_lines, "0", "p0")
    _row_loop(body, per_column, per_element, reductions, reduction_lines, "range(start, stop)",
              [])
    body.append("    for i0 in range(b0, b1):")
    body.extend(f"        _M.store(part{k}, t * p0 + i0, _M.load({r.name}_c, i0 - b0))"
                for k, r in enumerate(reductions))


def render_rows_finish(body: list[str], before: list[str], per_column: list[str],
                       per_element: list[str], reductions: tuple[Reduce, ...],
                       after: list[str], reduction_lines: Lines, prefetches: list[str]) -> None:
    """Each column's ``n`` partials folded in chunk order, then its epilogue and stores."""
    body.extend(before)
    body.append("for i0 in range(p0):")
    inner = list(per_column)
    for k, r in enumerate(reductions):
        inner.extend(reduction_lines(r)[0])
        inner.append("for t in range(n):")
        update = reduction_lines(replace(r, value=f"_M.load(part{k}, t * p0 + i0)"))[1]
        inner.extend("    " + line for line in update)
    body.extend("    " + line for line in inner + after)

