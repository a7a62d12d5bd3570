"""Sorts and running sums and products (``sort``, stable ``argsort``, ``cumsum``,
``cumprod``) along one axis, as native functions for loop drivers.

Outside loops they are NumPy library calls; inside a loop body such a call sent every
iteration back to Python. Here each line along the axis (the array seen as ``outer x n x
inner``, C order) is processed in turn: running sums and products add in order in the
output's dtype, as NumPy's do (bit for bit); a sort sorts a copy of the line with numba's
``np.sort`` (NaN last, as NumPy), a stable argsort with its merge sort (ties keep their
order, as ``np.argsort(stable=True)`` and JAX's default).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> print(render_body(Op.CUMSUM, Aval((2, 3), np.dtype("float64")), np.dtype("float64"), 1))
    x = _M.flat(r0)
    w = _M.flat(w0)
    for o in range(2):
        for q in range(1):
            acc = np.float64(0)
            for k in range(3):
                at = (o * 3 + k) * 1 + q
                acc = acc + np.float64(x[at])
                w[at] = acc
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


def by_value(step: LibraryStep) -> bool:
    """``render``'s function takes every operand as an array (see ``indexing.by_value``)."""
    return False


def render(step: LibraryStep, slot_avals: Sequence[Aval], in_place: bool) -> RenderedKernel:
    """The step as ``name(w0, r0, P, start, stop)`` (it never writes into its operand)."""
    x = slot_avals[step.in_slots[0]]
    out = slot_avals[step.out_slots[0]]
    axis = step.node.param["axis"] % x.ndim
    body = render_body(step.node.op, x, out.dtype, axis)
    name = f"{step.node.op.value}_{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    source = f"@njit({DRIVER_OPTIONS})\ndef {name}(w0, r0, P, start, stop):\n{body}\n"
    return RenderedKernel(name, source, np.zeros(1, np.int64))


def render_body(op: Op, x: Aval, out: np.dtype, axis: int) -> str:
    outer, n = math.prod(x.shape[:axis]), x.shape[axis]
    inner = math.prod(x.shape[axis + 1:])
    lines = ["    x = _M.flat(r0)", "    w = _M.flat(w0)",
             f"    for o in range({outer}):", f"        for q in range({inner}):"]
    at = f"(o * {n} + k) * {inner} + q"
    if op in RUNNING:
        cast = type_name(out)
        lines += [f"            acc = {cast}({0 if op is Op.CUMSUM else 1})",
                  f"            for k in range({n}):",
                  f"                at = {at}",
                  f"                acc = acc {RUNNING[op]} {cast}(x[at])",
                  "                w[at] = acc"]
    else:
        lines += [f"            line = np.empty({n}, x.dtype)",
                  f"            for k in range({n}):",
                  f"                line[k] = x[{at}]",
                  f"            done = {SORTS[op]}",
                  f"            for k in range({n}):",
                  f"                w[{at}] = done[k]"]
    return "\n".join(lines)
