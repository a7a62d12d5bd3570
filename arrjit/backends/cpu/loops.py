"""Loops on the CPU: a ``LoopStep``'s condition and body plans run natively or from Python.

When both consist of native kernels, library steps the driver renders (``NATIVE_LIBRARY``)
and loops that run natively themselves, one generated numba ``driver`` runs the whole loop,
nested loops included (no Python per iteration); otherwise the loop runs the two compiled
plans from Python.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...core.dtypes import Aval
from ...core.ir import Op
from ...plan import LoopStep, OutputKind
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from . import drivers, indexing, products
from .codegen import NJIT_OPTIONS, RenderedKernel
from .segments import LibrarySegment, compile_entry, not_compiled, uncompiled
from .target import cache_key_fields

if TYPE_CHECKING:  # the executable holds its loops; a loop holds its two plans' executables
    from .runner import CpuExecutable


class LoopSegment:
    """A ``WHILE`` loop in a CPU executable."""

    def __init__(self, step: LoopStep, cond: "CpuExecutable", body: "CpuExecutable"):
        self.in_slots = list(step.in_slots)
        self.out_slots = list(step.out_slots)
        self.n_carry, self.n_cond = step.n_carry, step.n_cond_consts
        self.cond, self.body = cond, body     # rendered, not yet compiled
        self.obstacle = _obstacle(self.cond, self.body)
        self.native = _native_loop(self.cond, self.body) if self.obstacle is None else None
        self.report = ("natively, one compiled driver for every iteration"
                       if self.obstacle is None
                       else f"from Python, once per iteration: {self.obstacle}")
        self.sources = ([self.native.source] if self.native is not None
                        else self.cond.sources + self.body.sources)
        self._driver: Callable = not_compiled

    def jobs(self, examples: list) -> list:
        """The native driver, when not compiled yet (see ``NativeSegment.jobs``)."""
        if self.native is None:
            return []
        return uncompiled(self.native.source, [("driver", self.native.example_values(), False)])

    def compile(self, examples: list, stats: CompileStats) -> None:
        if self.native is None:
            self.cond.compile(stats)
            self.body.compile(stats)
            return
        loaded = compiler.load_module(self.native.source, cache_key_fields())
        self._driver = compile_entry(loaded, "driver", self.native.example_values(), stats,
                                     boxed_result=False)   # returns the carry

    def compute(self, *operands: np.ndarray) -> tuple:
        if self.native is not None:
            return self._driver(*self.native.values(operands, self.n_carry))
        n, m = self.n_carry, self.n_cond
        carry = list(operands[:n])
        cond_consts, body_consts = list(operands[n:n + m]), list(operands[n + m:])
        cond_run, body_run = self.cond.run, self.body.run
        while cond_run(carry + cond_consts)[0]:
            carry = body_run(carry + body_consts)
        return tuple(carry)

    def __call__(self, bufs: list) -> None:
        for slot, value in zip(self.out_slots, self.compute(*(bufs[s] for s in self.in_slots))):
            bufs[slot] = value


@dataclass
class _Arguments:
    """What a loop function takes after its carries and invariants, collected while its
    statements are laid out: constants ``c<k>``, scratch buffers ``t<k>``, the kernels'
    parameter vectors ``P<k>`` and, last, the extents ``E``; and the functions it calls."""

    constants: list[np.ndarray] = field(default_factory=list)
    temps: list[tuple[tuple[int, ...], np.dtype]] = field(default_factory=list)
    params: list[np.ndarray] = field(default_factory=list)
    extents: list[int] = field(default_factory=list)
    functions: dict[str, str] = field(default_factory=dict)
    nested: int = 0           # nested loops laid out so far (their results' names)

    def constant(self, value: np.ndarray) -> str:
        self.constants.append(value)
        return f"c{len(self.constants) - 1}"

    def temp(self, shape: tuple[int, ...], dtype: np.dtype) -> str:
        self.temps.append((shape, dtype))
        return f"t{len(self.temps) - 1}"

    def param(self, vector: np.ndarray) -> str:
        self.params.append(vector)
        return f"P{len(self.params) - 1}"

    def call(self, kernel: RenderedKernel, args: tuple[str, ...], extent: int) -> str:
        """The statement calling ``kernel`` on the driver variables ``args``."""
        self.functions[kernel.name] = kernel.source
        self.extents.append(extent)
        return (f"{kernel.name}({', '.join(args)}, {self.param(kernel.params)}, 0, "
                f"E[{len(self.extents) - 1}])")

    def names(self) -> list[str]:
        return ([f"c{k}" for k in range(len(self.constants))] +
                [f"t{k}" for k in range(len(self.temps))] +
                [f"P{k}" for k in range(len(self.params))])


@dataclass
class _NativeLoop:
    """One loop as a numba function: ``<name>(now..., nxt..., invariants..., c..., t...,
    P..., E)`` runs it on the carries in ``now`` (``nxt`` is their second buffer) and returns
    the final carries. The top-level loop's is the module's ``driver``."""

    carry_avals: list[Aval]
    invariant_avals: list[Aval]   # the condition's loop-invariant inputs, then the body's
    arguments: list[str]          # its parameters before E
    lines: list[str]              # its body
    extra: _Arguments

    def definition(self, name: str) -> str:
        return (f"@njit({NJIT_OPTIONS})\ndef {name}({', '.join(self.arguments + ['E'])}):\n"
                + "\n".join(self.lines) + "\n")

    @cached_property
    def source(self) -> str:
        return drivers.render_functions({**self.extra.functions,
                                         "driver": self.definition("driver")})

    @cached_property
    def extents(self) -> np.ndarray:
        return np.asarray(self.extra.extents, np.int64)

    def values(self, operands, n_carry: int) -> list:
        """The driver's arguments for one run on ``operands`` (carry, then invariants)."""
        carry = [np.array(x) for x in operands[:n_carry]]           # copies: the loop swaps
        return self._arguments(carry, list(operands[n_carry:]))

    def example_values(self) -> list:
        def empty(a: Aval) -> np.ndarray:
            return np.empty((0,) * len(a.shape), a.dtype)
        return self._arguments([empty(a) for a in self.carry_avals],
                               [empty(a) for a in self.invariant_avals])

    def _arguments(self, carry: list, invariant: list) -> list:
        extra = self.extra
        return [*carry, *(np.empty_like(x) for x in carry), *invariant, *extra.constants,
                *(np.empty(shape, dtype) for shape, dtype in extra.temps), *extra.params,
                self.extents]

    def call_nested(self, outer: _Arguments, carry: list[str], invariants: list[str],
                    results: list[str]) -> list[str]:
        """Statements of an enclosing loop function that run this loop on its variables
        ``carry`` and ``invariants`` and bind the final carries to ``results``: the carries
        are copied into two scratch buffers of the enclosing function (the loop swaps them),
        and this loop's own arguments become the enclosing function's."""
        definition = self.definition("{name}")
        name = "loop_" + hashlib.sha256(definition.encode()).hexdigest()[:16]
        outer.functions.update(self.extra.functions)
        outer.functions[name] = self.definition(name)
        now = [outer.temp(a.shape, a.dtype) for a in self.carry_avals]
        nxt = [outer.temp(a.shape, a.dtype) for a in self.carry_avals]
        own = ([outer.constant(c) for c in self.extra.constants] +
               [outer.temp(shape, dtype) for shape, dtype in self.extra.temps] +
               [outer.param(p) for p in self.extra.params] + [outer.constant(self.extents)])
        lines = [f"_M.copy_elements({buf}, {x})" for buf, x in zip(now, carry)]
        lines.append(f"{', '.join(results)}, = {name}({', '.join(now + nxt + invariants + own)})")
        return lines


# The library steps a driver runs natively, each with its renderer (``supported``/``render``).
NATIVE_LIBRARY = (indexing, products)


def _native_renderer(step, slot_avals):
    return next((r for r in NATIVE_LIBRARY if r.supported(step, slot_avals)), None)


def _read_slots(seg) -> list[int]:
    if isinstance(seg, LibrarySegment):
        return list(seg.in_slots)
    if isinstance(seg, LoopSegment):
        return list(seg.in_slots)
    return [s for call in seg.calls for s in call.read_slots]


def _library_call(seg: LibrarySegment, plan, names: dict[int, str], carried: list[int],
                  extra: _Arguments, later_reads: set[int], kept: set[int]) -> str:
    """A library step (gather, scatter, concatenation, product) in a native driver: names its
    output and returns the statement. A scatter updates
    its operand's buffer in place when nothing reads that buffer afterwards and it is a value
    computed in the body or a carry's own buffer (``now<k>``): then a scatter into carry
    ``k`` leaves the result where it is, and ``kept`` collects ``k`` (it is not swapped)."""
    step, out = seg.step, seg.step.out_slots[0]
    x_name = names[step.in_slots[0]]
    unread = x_name not in {names.get(s) for s in later_reads}
    own_carry = x_name.startswith("now") and unread
    target = f"now{carried.index(out)}" if out in carried else None
    in_place = step.node.op is Op.SCATTER and (
        (target is not None and x_name == target and unread and carried.count(out) == 1)
        or (target is None and (step.in_place or own_carry)))
    if in_place:
        names[out] = x_name
        if target is not None:
            kept.add(carried.index(out))
    elif target is not None:
        names[out] = f"nxt{carried.index(out)}"
    else:
        aval = plan.slot_avals[out]
        names[out] = extra.temp(aval.shape, aval.dtype)
    rendered = _native_renderer(step, plan.slot_avals).render(step, plan.slot_avals, in_place)
    return extra.call(rendered, (names[out],) + tuple(names[s] for s in step.in_slots), 1)


def _nested_loop(seg: LoopSegment, names: dict[int, str], outputs: list[int],
                 extra: _Arguments) -> list[str]:
    """A loop inside a loop's condition or body (``outputs``: the body's results, whose
    buffers are ``nxt<k>``): its function is called by the enclosing one."""
    assert seg.native is not None   # _obstacle accepted it
    tag = extra.nested
    extra.nested += 1
    results, copies = [], []
    for k, slot in enumerate(seg.out_slots):
        local = f"r{tag}_{k}"
        results.append(local)
        if slot in outputs:   # a carry of the enclosing loop: into its buffer
            names[slot] = f"nxt{outputs.index(slot)}"
            copies.append(f"_M.copy_elements({names[slot]}, {local})")
        else:
            names[slot] = local
    carry = [names[s] for s in seg.in_slots[:seg.n_carry]]
    invariants = [names[s] for s in seg.in_slots[seg.n_carry:]]
    return seg.native.call_nested(extra, carry, invariants, results) + copies


def _obstacle(cond: "CpuExecutable", body: "CpuExecutable") -> str | None:
    """Why the loop cannot run as one native driver (the first reason found), or None."""
    for which, executable in (("condition", cond), ("body", body)):
        for seg in executable.segments:
            if isinstance(seg, LoopSegment) and seg.obstacle is not None:
                return f"its {which} holds a loop that cannot run natively ({seg.obstacle})"
            if isinstance(seg, LibrarySegment) and _native_renderer(
                    seg.step, executable.plan.slot_avals) is None:
                avals = ", ".join(str(executable.plan.slot_avals[s]) for s in seg.step.in_slots)
                return (f"its {which} calls the library step {seg.step.node.op.value}({avals}), "
                        f"which the driver cannot run natively")
        if any(o.kind is not OutputKind.SLOT for o in executable.plan.outputs):
            return f"its {which} returns a constant or passes an input through"
    return None


def _native_loop(cond: "CpuExecutable", body: "CpuExecutable") -> _NativeLoop:
    """Lay out the native function of a loop whose plans ``_obstacle`` accepts."""
    n_carry = len(body.plan.outputs)
    n_cond_consts = cond.plan.n_inputs - n_carry
    n_body_consts = body.plan.n_inputs - n_carry
    arguments = [f"now{k}" for k in range(n_carry)] + [f"nxt{k}" for k in range(n_carry)]
    arguments += [f"cc{k}" for k in range(n_cond_consts)]
    arguments += [f"bc{k}" for k in range(n_body_consts)]
    extra = _Arguments()
    statements: tuple[list[str], list[str]] = ([], [])
    kept: set[int] = set()     # carries updated in place by the body
    predicate = ""
    for which, executable in enumerate((cond, body)):
        plan = executable.plan
        names: dict[int, str] = {}
        for k in range(plan.n_inputs):
            if k < n_carry:
                names[k] = f"now{k}"
            else:
                names[k] = (f"cc{k - n_carry}" if which == 0 else f"bc{k - n_carry}")
        for k, c in enumerate(plan.constants):
            names[plan.n_inputs + k] = extra.constant(c)
        outputs = [o.slot for o in plan.outputs]
        results = outputs if which == 1 else []
        for mem in executable.memory:
            for a in mem.allocs:
                names[a.slot] = (f"nxt{outputs.index(a.slot)}" if a.slot in results
                                 else extra.temp(a.shape, a.dtype))
        for k_seg, seg in enumerate(executable.segments):
            if isinstance(seg, LibrarySegment):
                later = {s for other in executable.segments[k_seg + 1:]
                         for s in _read_slots(other)} | set(outputs)
                statements[which].append(
                    _library_call(seg, plan, names, results, extra, later, kept))
            elif isinstance(seg, LoopSegment):
                statements[which].extend(_nested_loop(seg, names, results, extra))
            else:
                statements[which].extend(
                    extra.call(c.rendered, tuple(names[s] for s in c.slots), c.extent)
                    for c in seg.calls)
        if which == 0:
            predicate = names[outputs[0]]
    swapped = [k for k in range(n_carry) if k not in kept]
    lines = drivers.render_loop_lines(statements[0], statements[1], predicate,
                                      [f"now{k}" for k in swapped],
                                      [f"nxt{k}" for k in swapped],
                                      [f"now{k}" for k in range(n_carry)])
    invariant = (cond.plan.slot_avals[n_carry:cond.plan.n_inputs] +
                 body.plan.slot_avals[n_carry:body.plan.n_inputs])
    return _NativeLoop(body.plan.slot_avals[:n_carry], invariant, arguments + extra.names(),
                       lines, extra)
