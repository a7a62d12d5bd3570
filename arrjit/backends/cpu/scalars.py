"""0-d kernels as functions of scalars, for loop drivers.

In a loop body the small values (a counter, a CRC register, the three variables of an ODE)
are 0-d. As kernels they read and write 0-d arrays, so a driver iteration went through
memory and array bookkeeping for every statement. An elementwise kernel whose writes are all
0-d is rendered here a second time as ``name(r0, r1, ..., P)`` returning its written values,
cast to their dtypes, as a tuple: the driver keeps such values in local variables (registers)
and calls it instead (``backends/cpu/loops.py``). Its 0-d reads are values; other reads are
arrays it reads one element of (``u[i - 1, j] + u[i + 1, j]``: ``Position`` statements).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Op, Var
>>> from arrjit.passes.kernel import Affine, Compute, Kernel, Load, Store
>>> f64 = np.dtype("float64")
>>> at0, x = Affine(0, ()), Var(0, Aval((), f64))
>>> k = Kernel((), (x,), (x,), (Load("v0", 0, at0), Compute("v1", Op.MUL, ("v0", "v0"), f64,
...            (f64, f64), ())), (Store(0, "v1", at0),))
>>> print(render_scalar_kernel(k).source.split("\\n", 1)[1])
def scalar_...(r0, P):
    v0 = r0
    v1 = (v0 * v0)
    return (np.float64(v1),)
<BLANKLINE>
"""
from __future__ import annotations

import hashlib

import numpy as np

from ...passes.kernel import Const, Kernel, Load, Position
from ..source import affine_text, constant_text, position_lines, type_name
from .access import ParamTable
from .codegen import DRIVER_OPTIONS, RenderedKernel
from .expressions import expression


def scalar_kernel(kernel: Kernel) -> bool:
    """Whether ``kernel`` is elementwise and writes 0-d values only (``render_scalar_kernel``)."""
    return (kernel.n_outer is None and not kernel.sizes
            and all(v.ndim == 0 for v in kernel.writes)
            and len(kernel.stores) == len(kernel.writes)
            and sorted(s.buffer for s in kernel.stores) == list(range(len(kernel.writes)))
            and not any(isinstance(s, Load) and s.own_output for s in kernel.stmts))


def render_scalar_kernel(kernel: Kernel) -> RenderedKernel:
    """The 0-d ``kernel`` as a function of its read values returning its written values."""
    assert scalar_kernel(kernel)
    params = ParamTable()
    lines = [f"r{k} = _M.flat(r{k})" for k, v in enumerate(kernel.reads) if v.ndim > 0]
    for stmt in kernel.stmts:
        if isinstance(stmt, Load) and kernel.reads[stmt.buffer].ndim == 0:
            lines.append(f"{stmt.name} = r{stmt.buffer}")
        elif isinstance(stmt, Load):
            lines.append(f"{stmt.name} = _M.load(r{stmt.buffer}, "
                         f"{affine_text(stmt.access, params.slot)})")
        elif isinstance(stmt, Const):
            lines.append(f"{stmt.name} = {constant_text(stmt, params.slot)}")
        elif isinstance(stmt, Position):
            lines += position_lines(stmt, params.slot)
        else:
            lines.append(f"{stmt.name} = {expression(stmt)}")
    stores = sorted(kernel.stores, key=lambda s: s.buffer)
    values = [f"{type_name(kernel.writes[s.buffer].dtype)}({s.value})" for s in stores]
    lines.append(f"return ({', '.join(values)},)")
    signature = [f"r{k}" for k in range(len(kernel.reads))] + ["P"]
    text = "\n".join("    " + line for line in params.prologue() + lines)
    digest = hashlib.sha256((", ".join(signature) + "\n" + text).encode()).hexdigest()[:16]
    name = f"scalar_{digest}"
    source = f"@njit({DRIVER_OPTIONS})\ndef {name}({', '.join(signature)}):\n{text}\n"
    return RenderedKernel(name, source, np.asarray(params.values, dtype=np.int64))
