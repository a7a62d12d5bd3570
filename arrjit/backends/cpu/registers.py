"""Kernels over values in registers, for loop drivers.

In a loop body the small values (a counter, a CRC register, the state of an ODE) are 0-d or
a few elements. As kernels they read and write arrays, so a driver iteration went through
memory and array bookkeeping for every statement. An elementwise kernel whose writes are all
small (``in_registers``) is rendered here a second time as ``name(r0, r1, ..., P)`` returning
its written values, cast to their dtypes, as a tuple: a 0-d value as a scalar, a small array
as the tuple of its elements in C order. The driver keeps such values in local variables
(registers) and calls this form instead (``backends/cpu/loopfunctions.LoopLayout``). Its reads in
registers arrive the same way; other reads are arrays it reads single elements of
(``u[i - 1, j] + u[i + 1, j]``: ``Position`` statements).

A small array's loops are unrolled: every statement that depends on a loop index is written
once per element, with the index a literal, so a read of a constant at a literal index is
the constant's element (``stack``'s ``select`` over a constant index folds away).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Op, Var
>>> from arrjit.passes.kernel import Affine, Compute, Kernel, Load, Store
>>> f64 = np.dtype("float64")
>>> at0, x = Affine(0, ()), Var(0, Aval((), f64))
>>> k = Kernel((), (x,), (x,), (Load("v0", 0, at0), Compute("v1", Op.MUL, ("v0", "v0"), f64,
...            (f64, f64), ())), (Store(0, "v1", at0),))
>>> print(render_register_kernel(k).source.split("\\n", 1)[1])
def registers_...(r0, P):
    v0 = r0
    v1 = (v0 * v0)
    return (np.float64(v1),)
<BLANKLINE>
>>> v = Var(1, Aval((2,), f64))
>>> at_i = Affine(0, (1,))
>>> k = Kernel((2,), (v,), (v,), (Load("v0", 0, at_i), Compute("v1", Op.MUL, ("v0", "v0"),
...            f64, (f64, f64), ())), (Store(0, "v1", at_i),))
>>> print(render_register_kernel(k).source.split("\\n", 1)[1])
def registers_...(r0, P):
    v0_0 = r0[0]
    v1_0 = (v0_0 * v0_0)
    v0_1 = r0[1]
    v1_1 = (v0_1 * v0_1)
    return ((np.float64(v1_0), np.float64(v1_1),),)
<BLANKLINE>
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import operator
import re
from typing import Any, Callable, Mapping

import numpy as np

from ...core.dtypes import Aval
from ...core.ir import Op
from ...passes.kernel import Affine, Compute, Const, Kernel, Load, Position, checked
from ..source import constant_text, literal, position_lines, type_name
from .access import ParamTable
from .codegen import LEAF_OPTIONS, RenderedKernel
from .expressions import expression

# The most elements of a value a loop driver keeps in registers (a 4x4 matrix).
REGISTER_ELEMENTS = 16


def in_registers(aval: Aval) -> bool:
    """Whether a loop driver keeps a value of ``aval`` in local variables: 0-d values as
    scalars, arrays of 1 to ``REGISTER_ELEMENTS`` elements as tuples of their elements (an
    empty array stays an array: numba has no empty tuple of a dtype)."""
    return aval.ndim == 0 or 0 < aval.size <= REGISTER_ELEMENTS


def register_kernel(kernel: Kernel) -> bool:
    """Whether ``kernel`` is elementwise and writes every element of each of its values once,
    all in registers (``render_register_kernel``)."""
    if (kernel.n_outer is not None or kernel.elements > REGISTER_ELEMENTS
            or not all(in_registers(v.aval) for v in kernel.writes)
            or len(kernel.stores) != len(kernel.writes)
            or sorted(s.buffer for s in kernel.stores) != list(range(len(kernel.writes)))
            or any(isinstance(s, Load) and s.own_output for s in kernel.stmts)):
        return False
    return all(writes_every_element(kernel, k) for k in range(len(kernel.writes)))


def writes_every_element(kernel: Kernel, buffer: int) -> bool:
    """Whether ``kernel``'s stores write each element of its write ``buffer``, a value in
    registers, exactly once (not a region of it, whose other elements the buffer holds)."""
    aval = kernel.writes[buffer].aval
    outer = kernel.sizes if kernel.n_outer is None else kernel.sizes[:kernel.n_outer]
    stores = [s for s in kernel.stores if s.buffer == buffer]
    if not in_registers(aval) or int(np.prod(outer)) * len(stores) != aval.size:
        return False
    if any(s.access.positions for s in stores):
        return False
    stored = sorted(_flat_index(s.access, at) for s in stores for at in _points(outer))
    return stored == list(range(aval.size))


# The locals of a register kernel's statements: its reads, its parameters and their vector,
# its values (``codegen``'s names)
_LOCAL = re.compile(r"\b(?:[rpv]\d+(?:_\d+)?|P)\b")


@dataclasses.dataclass(frozen=True)
class RegisterCode:
    """A register kernel's statements: ``lines`` compute ``returns``, the tuple of its written
    values, from its reads ``r0, r1, ...`` and its parameter vector ``P`` (``params``)."""

    lines: list[str]
    returns: str
    n_reads: int
    params: np.ndarray

    def function(self) -> RenderedKernel:
        """The statements as a function ``registers_<digest>(r0, r1, ..., P)``."""
        signature = [f"r{k}" for k in range(self.n_reads)] + ["P"]
        text = "\n".join("    " + line for line in self.lines + [f"return {self.returns}"])
        digest = hashlib.sha256((", ".join(signature) + "\n" + text).encode()).hexdigest()[:16]
        name = f"registers_{digest}"
        source = f"@njit({LEAF_OPTIONS})\ndef {name}({', '.join(signature)}):\n{text}\n"
        return RenderedKernel(name, source, self.params)

    def inlined(self, prefix: str, operands: list[str], params: str, results: str
                ) -> list[str]:
        """The statements in a caller, which passes the reads ``operands`` and the parameter
        vector ``params`` and binds the written values to ``results`` (``"a, b, "``): the
        kernel's locals take ``prefix`` so that they meet none of the caller's. (A function
        per kernel cost numba a compile of its own, and LLVM an optimisation of its module,
        before the driver inlined it.)"""
        def local(text: str) -> str:
            return _LOCAL.sub(lambda m: prefix + m.group(0), text)
        bound = [f"{prefix}r{k} = {x}" for k, x in enumerate(operands)]
        if len(self.params):
            bound.append(f"{prefix}P = {params}")
        return bound + [local(line) for line in self.lines] + [
            f"{results}= {local(self.returns)}"]


def render_register_kernel(kernel: Kernel,
                           known: Mapping[int, np.ndarray] | None = None) -> RenderedKernel:
    """``kernel`` as a function of its read values returning its written values; ``known``:
    reads whose values are constants (by read index), whose elements at literal indices
    become literals."""
    return register_code(kernel, known).function()


def register_code(kernel: Kernel, known: Mapping[int, np.ndarray] | None = None
                  ) -> RegisterCode:
    """``kernel``'s statements in registers (``render_register_kernel``)."""
    assert register_kernel(kernel)
    known = known or {}
    params = ParamTable()
    registered = [in_registers(v.aval) for v in kernel.reads]
    lines = [f"r{k} = _M.flat(r{k})" for k, v in enumerate(kernel.reads)
             if not registered[k] and v.ndim > 0]
    varying = _varying(kernel)
    points = list(_points(kernel.sizes))
    # each statement once, or once per element (its number and loop indices) where it varies
    entries: list[tuple[Any, tuple[int, tuple[int, ...]] | None]]
    entries = [(stmt, None) for stmt in kernel.stmts if stmt.name not in varying]
    entries += [(stmt, (e, at)) for e, at in enumerate(points)
                for stmt in kernel.stmts if stmt.name in varying]
    folded, aliases = _fold(entries, kernel, known, varying)

    def resolve(name: str, e: int) -> str:
        named = _named(name, e, varying)
        return aliases.get(named, named)

    results = []
    for store in sorted(kernel.stores, key=lambda s: s.buffer):
        if kernel.writes[store.buffer].ndim == 0:
            results.append([resolve(store.value, 0)])
            continue
        by_index = {_flat_index(store.access, at): e for e, at in enumerate(points)}
        results.append([resolve(store.value, by_index[j]) for j in range(len(by_index))])
    live = _live(entries, {n for names in results for n in names}, resolve,
                 set(folded) | set(aliases), varying)
    entries = [(stmt, point) for stmt, point in entries
               if checked(stmt)
               or _named(stmt.name, _element(point), varying) in live.difference(aliases)]
    head, together = _positions_first(entries, resolve)

    def emit(stmt, point) -> None:
        name = resolve(stmt.name, _element(point))
        if name in folded:
            lines.append(f"{name} = {literal(folded[name].item(), folded[name].dtype)}")
        else:
            lines.extend(_statement(stmt, point, kernel, registered, known, params, resolve))

    for stmt, point in head:
        emit(stmt, point)
    if together:
        lines.extend(_checked_together(together, resolve, params))
    placed = {id(entry) for entry in head + together}
    for entry in entries:
        if id(entry) not in placed:
            emit(*entry)
    values = []
    for store, names in zip(sorted(kernel.stores, key=lambda s: s.buffer), results):
        cast = type_name(kernel.writes[store.buffer].dtype)
        if kernel.writes[store.buffer].ndim == 0:
            values.append(f"{cast}({names[0]})")
        else:
            values.append("(" + ", ".join(f"{cast}({n})" for n in names) + ",)")
    return RegisterCode(params.prologue() + lines, f"({', '.join(values)},)",
                        len(kernel.reads), np.asarray(params.values, dtype=np.int64))


def _points(sizes: tuple[int, ...]):
    """The loop indices of every iteration, in order."""
    return itertools.product(*(range(n) for n in sizes))


def _flat_index(access: Affine, at: tuple[int, ...]) -> int:
    """The literal part of an access's flat index at loop indices ``at``."""
    index = access.offset + sum(c * i for c, i in zip(access.coefs, at))
    for w in access.wraps:
        index += w.add if _flat_index(w.value, at) < w.below else 0
    return index


def _varying(kernel: Kernel) -> set[str]:
    """The statements whose value depends on the loop indices."""
    varying: set[str] = set()
    for stmt in kernel.stmts:
        if isinstance(stmt, Load):
            depends = bool(stmt.access.loops())
        elif isinstance(stmt, Position):
            depends = stmt.value in varying
        elif isinstance(stmt, Compute):
            depends = any(a in varying for a in stmt.args)
        else:
            depends = False
        if depends:
            varying.add(stmt.name)
    return varying


def _named(name: str, e: int, varying: set[str]) -> str:
    return f"{name}_{e}" if name in varying else name


# Comparisons ``_fold`` evaluates on known operands (a ``stack``'s element index against a
# piece's), by NumPy's scalars.
_FOLDED_COMPARISONS = {Op.EQ: operator.eq, Op.NE: operator.ne, Op.LT: operator.lt,
                       Op.LE: operator.le, Op.GT: operator.gt, Op.GE: operator.ge}


def _fold(entries, kernel: Kernel, known: Mapping[int, np.ndarray],
          varying: set[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The statements (by element name) whose value is known when rendering: literal loads of
    ``known`` reads, constants, comparisons of known values; and the selects whose condition
    is known, as aliases of the operand they choose. Unrolling writes ``stack``'s selects once
    per element with the element's index a literal: each folds to its piece."""
    folded: dict[str, Any] = {}   # NumPy scalars
    aliases: dict[str, str] = {}
    for stmt, point in entries:
        e, at = point if point is not None else (0, (0,) * len(kernel.sizes))
        name = _named(stmt.name, e, varying)
        if isinstance(stmt, Load) and stmt.buffer in known and not stmt.access.positions:
            value = known[stmt.buffer].reshape(-1)[_flat_index(stmt.access, at)]
            folded[name] = kernel.reads[stmt.buffer].dtype.type(value)
        elif isinstance(stmt, Const) and not stmt.runtime:
            folded[name] = stmt.dtype.type(stmt.value)
        elif isinstance(stmt, Compute):
            args = [_named(a, e, varying) for a in stmt.args]
            args = [aliases.get(a, a) for a in args]
            if stmt.op in _FOLDED_COMPARISONS and all(a in folded for a in args):
                left, right = (folded[a] for a in args)
                folded[name] = np.bool_(_FOLDED_COMPARISONS[stmt.op](left, right))
            elif stmt.op is Op.SELECT and args[0] in folded:
                chosen = args[1] if folded[args[0]] else args[2]
                aliases[name] = chosen
    return folded, aliases


def _positions_first(entries, resolve: Callable[[str, int], str]) -> tuple[list, list]:
    """With two or more positions none of which depends on a read at a position: the
    statements the positions need, in order, and the positions (checked together before any
    read, ``_checked_together``). Otherwise nothing: each position is checked where it is."""
    positions = [entry for entry in entries if checked(entry[0])]
    if len(positions) < 2:
        return [], []
    defined = {resolve(stmt.name, _element(point)): (stmt, point) for stmt, point in entries}
    needed: set[str] = set()
    pending = [resolve(stmt.value, _element(point)) for stmt, point in positions]
    while pending:
        name = pending.pop()
        if name in needed or name not in defined:
            continue
        stmt, point = defined[name]
        if isinstance(stmt, Position) or (isinstance(stmt, Load) and stmt.access.positions):
            return [], []
        needed.add(name)
        if isinstance(stmt, Compute):
            pending.extend(resolve(a, _element(point)) for a in stmt.args)
    head = [entry for entry in entries if resolve(entry[0].name, _element(entry[1])) in needed]
    return head, positions


def _element(point: tuple[int, tuple[int, ...]] | None) -> int:
    """The element number of an entry's point (0 for a statement written once)."""
    return point[0] if point is not None else 0


def _checked_together(positions, resolve: Callable[[str, int], str],
                      params: ParamTable) -> list[str]:
    """The positions' values as int64, one test of them all and a call raising NumPy's error
    for the first outside its axis on the error path, then each counted from the end where
    negative: one call site that may raise instead of one per position."""
    names, extents, lines = [], [], []
    for stmt, point in positions:
        e = _element(point)
        name = resolve(stmt.name, e)
        names.append(name)
        extents.append(params.slot(stmt.extent))
        lines.append(f"{name} = np.int64({resolve(stmt.value, e)})")
    test = " | ".join(f"_M.outside({n}, {x})" for n, x in zip(names, extents))
    axes = ", ".join(f"np.int64({stmt.axis})" for stmt, _ in positions)
    lines.append(f"if {test}: _M.first_out_of_bounds(({', '.join(names)},), ({axes},), "
                 f"({', '.join(f'np.int64({x})' for x in extents)},))")
    lines += [f"{n} = _M.wrapped({n}, {x})" for n, x in zip(names, extents)]
    return lines


def _live(entries, results: set[str], resolve: Callable[[str, int], str],
          settled: set[str], varying: set[str]) -> set[str]:
    """The names the results need, through the operands of the statements not ``settled``
    (folded or aliased); a checked ``Position`` is always needed: it raises NumPy's
    ``IndexError``."""
    live = set(results)
    for stmt, point in reversed(entries):
        e = _element(point)
        name = _named(stmt.name, e, varying)
        if name in settled or not (checked(stmt) or name in live):
            continue
        if isinstance(stmt, Load):
            live.update(resolve(p, e) for p, _ in stmt.access.positions)
        elif isinstance(stmt, Position):
            live.add(resolve(stmt.value, e))
        elif isinstance(stmt, Compute):
            live.update(resolve(a, e) for a in stmt.args)
    return live


def _statement(stmt, point: tuple[int, tuple[int, ...]] | None, kernel: Kernel,
               registered: list[bool], known: Mapping[int, np.ndarray], params: ParamTable,
               resolve: Callable[[str, int], str]) -> list[str]:
    """The lines of one statement, at one element ``point`` (its number and loop indices) when
    it varies with the loop indices; ``resolve`` names a value at an element."""
    e, at = point if point is not None else (0, (0,) * len(kernel.sizes))
    name = resolve(stmt.name, e)
    if isinstance(stmt, Load):
        index = _flat_index(stmt.access, at)
        positions = "".join(f" + {resolve(p, e)}" + (f" * {stride}" if stride != 1 else "")
                            for p, stride in stmt.access.positions)
        read = kernel.reads[stmt.buffer]
        if stmt.buffer in known and not positions:
            value = known[stmt.buffer].reshape(-1)[index]
            return [f"{name} = {literal(value.item(), read.dtype)}"]
        if registered[stmt.buffer] and read.ndim == 0:
            return [f"{name} = r{stmt.buffer}"]
        if registered[stmt.buffer]:
            return [f"{name} = r{stmt.buffer}[{index}{positions}]"]
        return [f"{name} = _M.load(r{stmt.buffer}, {index}{positions})"]
    if isinstance(stmt, Const):
        return [f"{name} = {constant_text(stmt, params.slot)}"]
    if isinstance(stmt, Position):
        renamed = dataclasses.replace(stmt, name=name, value=resolve(stmt.value, e))
        return position_lines(renamed, params.slot)
    renamed = dataclasses.replace(stmt, name=name,
                                  args=tuple(resolve(a, e) for a in stmt.args))
    return [f"{name} = {expression(renamed)}"]
