"""Sorts and running sums and products (``sort``, stable ``argsort``, ``cumsum``,
``cumprod``) along one axis, as native functions.

In loop drivers each of them runs natively (a library call would send every iteration back to
Python); outside loops running sums and products do too (``runs_outside_loops``), and sorts
stay NumPy's calls (vectorised sorts). The array is seen as ``outer x n x inner`` (C order).
Running sums and products combine in order in the output's dtype, as NumPy's do, bit for
bit: the first element of a line is the operand's own (cast), each next one the previous
result combined with the operand's element; with ``inner > 1`` a whole row of the block at a
time, so the loop over the row vectorises. A sort sorts a copy of each line with numba's
``np.sort`` (NaN last, as NumPy), a stable argsort with its merge sort (ties keep their
order, as ``np.argsort(stable=True)`` and JAX's default).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> print(render_body(Op.CUMSUM, Aval((2, 3), np.dtype("float64")), np.dtype("float64"), 1))
    x = _M.flat(r0)
    w = _M.flat(w0)
    for o in range(2):
        at = o * 3
        acc = np.float64(_M.load(x, at))
        _M.store(w, at, acc)
        for k in range(1, 3):
            acc = acc + np.float64(_M.load(x, at + k))
            _M.store(w, at + k, acc)
"""
from __future__ import annotations

import hashlib
import math
from typing import Sequence

import numpy as np

from ...core.dtypes import Aval
from ...core.ir import Op
from ...plan import LibraryStep
from ..source import type_name
from .codegen import DRIVER_OPTIONS, RenderedKernel

RUNNING = {Op.CUMSUM: "+", Op.CUMPROD: "*"}
SORTS = {Op.SORT: "np.sort(line)", Op.ARGSORT: 'np.argsort(line, kind="mergesort")'}


def supported(step: LibraryStep, slot_avals: Sequence[Aval]) -> bool:
    """Whether ``step`` is a sort or running sum this module renders."""
    op = step.node.op
    if op not in RUNNING and op not in SORTS:
        return False
    x = slot_avals[step.in_slots[0]]
    if op is Op.ARGSORT and not step.node.param.get("stable", False):
        return False   # an unstable sort's order of ties is NumPy's algorithm's own
    kinds = "iufc" if op in RUNNING else "iuf"
    return x.ndim >= 1 and x.dtype.kind in kinds and step.node.param.get("axis") is not None


def runs_outside_loops(step: LibraryStep, slot_avals: Sequence[Aval]) -> bool:
    """Whether ``step`` runs natively as a step of its own: running sums and products (NumPy's
    ``add.accumulate`` goes through its generic ufunc loop)."""
    return step.node.op in RUNNING and supported(step, slot_avals)


def by_value(step: LibraryStep) -> bool:
    """``render``'s function takes every operand as an array (see ``indexing.by_value``)."""
    return False


def render(step: LibraryStep, slot_avals: Sequence[Aval], in_place: bool,
           options: str = DRIVER_OPTIONS) -> RenderedKernel:
    """The step as ``name(w0, r0, P, start, stop)`` (it never writes into its operand),
    inlined into a loop driver, or with ``NJIT_OPTIONS`` called as a step of its own."""
    x = slot_avals[step.in_slots[0]]
    out = slot_avals[step.out_slots[0]]
    axis = step.node.param["axis"] % x.ndim
    body = render_body(step.node.op, x, out.dtype, axis)
    name = f"{step.node.op.value}_{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    source = f"@njit({options})\ndef {name}(w0, r0, P, start, stop):\n{body}\n"
    return RenderedKernel(name, source, np.zeros(1, np.int64))


def render_body(op: Op, x: Aval, out: np.dtype, axis: int) -> str:
    outer, n = math.prod(x.shape[:axis]), x.shape[axis]
    inner = math.prod(x.shape[axis + 1:])
    lines = ["    x = _M.flat(r0)", "    w = _M.flat(w0)"]
    if op in RUNNING:
        return "\n".join(lines + _running_lines(RUNNING[op], type_name(out), outer, n, inner))
    at = f"(o * {n} + k) * {inner} + q"
    lines += [f"    for o in range({outer}):", f"        for q in range({inner}):",
              f"            line = np.empty({n}, x.dtype)",
              f"            for k in range({n}):",
              f"                line[k] = x[{at}]",
              f"            done = {SORTS[op]}",
              f"            for k in range({n}):",
              f"                w[{at}] = done[k]"]
    return "\n".join(lines)


def _running_lines(combine: str, cast: str, outer: int, n: int, inner: int) -> list[str]:
    if n == 0:
        return []
    if inner == 1:   # one line: the running value stays in a register
        return [f"    for o in range({outer}):",
                f"        at = o * {n}",
                f"        acc = {cast}(_M.load(x, at))",
                "        _M.store(w, at, acc)",
                f"        for k in range(1, {n}):",
                f"            acc = acc {combine} {cast}(_M.load(x, at + k))",
                "            _M.store(w, at + k, acc)"]
    return [f"    for o in range({outer}):",
            f"        at = o * {n * inner}",
            f"        for q in range(at, at + {inner}):",
            f"            _M.store(w, q, {cast}(_M.load(x, q)))",
            f"        for k in range(1, {n}):",
            f"            row = at + k * {inner}",
            f"            for q in range(row, row + {inner}):",
            f"                _M.store(w, q, _M.load(w, q - {inner}) {combine} "
            f"{cast}(_M.load(x, q)))"]
