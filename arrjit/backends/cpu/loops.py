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
from . import drivers, indexing, products, scalars, sequences
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
    scalar_calls: int = 0     # kernels called in their scalar form (values in registers)
    array_calls: int = 0      # kernels and library steps called on arrays

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
        self.array_calls += 1
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
    kept: frozenset[int]          # carries updated in their own buffer (never swapped)

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
                    results: list[str], scalar: set[str], handed: set[int]) -> list[str]:
        """Statements of an enclosing loop function that run this loop on its variables
        ``carry`` and ``invariants`` and bind the final carries to ``results``: the carries
        are copied into two scratch buffers of the enclosing function (the loop swaps them),
        except the carries in ``handed``, whose buffer the enclosing function hands over
        (this loop updates them in place, ``kept``); this loop's own arguments become the
        enclosing function's (``scalar``: the enclosing function's names whose value is the
        local ``<name>_s``)."""
        definition = self.definition("{name}")
        name = "loop_" + hashlib.sha256(definition.encode()).hexdigest()[:16]
        outer.functions.update(self.extra.functions)
        outer.functions[name] = self.definition(name)
        now = [x if k in handed else outer.temp(a.shape, a.dtype)
               for k, (x, a) in enumerate(zip(carry, self.carry_avals))]
        nxt = [x if k in handed else outer.temp(a.shape, a.dtype)   # unused when handed
               for k, (x, a) in enumerate(zip(carry, self.carry_avals))]
        own = ([outer.constant(c) for c in self.extra.constants] +
               [outer.temp(shape, dtype) for shape, dtype in self.extra.temps] +
               [outer.param(p) for p in self.extra.params] + [outer.constant(self.extents)])
        lines = [f"_M.flat({buf})[0] = {x}_s" if x in scalar else
                 f"_M.copy_elements({buf}, {x})"
                 for k, (buf, x) in enumerate(zip(now, carry)) if k not in handed]
        lines.append(f"{', '.join(results)}, = {name}({', '.join(now + nxt + invariants + own)})")
        return lines


# The library steps a driver runs natively, each with its renderer (``supported``/``render``).
NATIVE_LIBRARY = (indexing, products, sequences)


def _native_renderer(step, slot_avals):
    if any(step.in_perms):    # an operand read transposed: NumPy's call transposes it
        return None
    return next((r for r in NATIVE_LIBRARY if r.supported(step, slot_avals)), None)


def _read_slots(seg) -> list[int]:
    if isinstance(seg, LibrarySegment):
        return list(seg.in_slots)
    if isinstance(seg, LoopSegment):
        return list(seg.in_slots)
    return [s for call in seg.calls for s in call.read_slots]


class _Layout:
    """The statements of one loop function, laid out from its condition and body plans.

    A 0-d value (a counter, a scalar carry) lives in a local variable ``<name>_s``: kernels
    over 0-d values only are called in their scalar form (``scalars``); where an array is
    needed (other kernels, library steps, nested loops) the value is stored into its 0-d
    buffer ``<name>`` before the call and read back after a call that writes it."""

    def __init__(self, extra: _Arguments):
        self.extra = extra
        self.scalar: set[str] = set()    # names whose value is the local ``<name>_s``
        self.inputs: set[str] = set()    # the loop's invariants and constants: read only
        self.entry: list[str] = []       # before the loop: 0-d arguments into locals

    def argument(self, name: str, aval: Aval) -> str:
        if aval.ndim == 0:
            self.scalar.add(name)
            self.entry.append(f"{name}_s = _M.flat({name})[0]")
        return name

    def value(self, name: str, aval: Aval) -> str:
        if aval.ndim == 0:
            self.scalar.add(name)
        return name

    def to_arrays(self, names) -> list[str]:
        """Store 0-d values into their buffers (inputs never change: already there)."""
        return [f"_M.flat({n})[0] = {n}_s" for n in dict.fromkeys(names)
                if n in self.scalar and n not in self.inputs]

    def from_arrays(self, names) -> list[str]:
        return [f"{n}_s = _M.flat({n})[0]" for n in dict.fromkeys(names) if n in self.scalar]

    def kernel(self, call, names: dict[int, str]) -> list[str]:
        args = tuple(names[s] for s in call.slots)
        n_writes = len(call.kernel.writes)
        writes, reads = args[:n_writes], args[n_writes:]
        if scalars.scalar_kernel(call.kernel):
            rendered = scalars.render_scalar_kernel(call.kernel)
            self.extra.functions[rendered.name] = rendered.source
            params = self.extra.param(rendered.params)
            self.extra.scalar_calls += 1
            results = "".join(f"{n}_s, " for n in writes)
            operands = "".join(f"{n}_s, " for n in reads)
            return [f"{results}= {rendered.name}({operands}{params})"]
        return [*self.to_arrays(reads), self.extra.call(call.rendered, args, call.extent),
                *self.from_arrays(writes)]


def _library_call(seg: LibrarySegment, plan, names: dict[int, str], carried: list[int],
                  layout: _Layout, later_reads: set[int], kept: set[int]) -> list[str]:
    """A library step (gather, scatter, concatenation, product) in a native driver: names its
    output and returns the statements. A scatter updates
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
    aval = plan.slot_avals[out]
    if in_place:
        names[out] = x_name
        if target is not None:
            kept.add(carried.index(out))
    elif target is not None:
        names[out] = layout.value(f"nxt{carried.index(out)}", aval)
    else:
        names[out] = layout.value(layout.extra.temp(aval.shape, aval.dtype), aval)
    renderer = _native_renderer(step, plan.slot_avals)
    reads = [names[s] for s in step.in_slots]
    if renderer is indexing and step.node.op is not Op.CONCATENATE:
        # positions and a scalar update by value; one element gathered into a register
        rendered = indexing.render(step, plan.slot_avals, in_place, by_value=True)
        args = [reads[0]] + [f"{n}_s" if n in layout.scalar else n for n in reads[1:]]
        if step.node.op is Op.GATHER and aval.ndim == 0:
            return [*layout.to_arrays(args[:1]),
                    f"{names[out]}_s = {layout.extra.call(rendered, tuple(args), 1)}"]
        return [*layout.to_arrays(args),
                layout.extra.call(rendered, (names[out], *args), 1),
                *layout.from_arrays([names[out]])]
    rendered = renderer.render(step, plan.slot_avals, in_place)
    return [*layout.to_arrays(reads),
            layout.extra.call(rendered, (names[out], *reads), 1),
            *layout.from_arrays([names[out]])]


def _nested_loop(seg: LoopSegment, names: dict[int, str], outputs: list[int],
                 layout: _Layout, slot_avals: list[Aval], later_reads: set[int],
                 kept: set[int]) -> list[str]:
    """A loop inside a loop's condition or body (``outputs``: the body's results, whose
    buffers are ``nxt<k>``): its function is called by the enclosing one. A carry the inner
    loop updates in place is handed its buffer, not a copy, when nothing reads that buffer
    afterwards and it belongs to this iteration: a value computed here, or the enclosing
    loop's own carry that the inner loop's result replaces (which then stays in place too,
    ``kept``)."""
    assert seg.native is not None   # _obstacle accepted it
    tag = layout.extra.nested
    layout.extra.nested += 1
    later = {names.get(s) for s in later_reads}
    carry = [names[s] for s in seg.in_slots[:seg.n_carry]]
    invariants = [names[s] for s in seg.in_slots[seg.n_carry:]]
    handed: set[int] = set()
    for k in seg.native.kept:
        x, out = carry[k], seg.out_slots[k]
        if x in later or x in layout.inputs or carry.count(x) > 1 or x in invariants:
            continue
        if x.startswith("now"):
            if out in outputs and x == f"now{outputs.index(out)}" and outputs.count(out) == 1:
                kept.add(outputs.index(out))
                handed.add(k)
        else:
            handed.add(k)
    results, after = [], []
    for k, slot in enumerate(seg.out_slots):
        local = f"r{tag}_{k}"
        results.append(local)
        if k in handed and (carry[k].startswith("now") or slot not in outputs):
            names[slot] = carry[k]     # the result is in the handed buffer
        elif slot in outputs:   # a carry of the enclosing loop: into its buffer
            names[slot] = layout.value(f"nxt{outputs.index(slot)}", slot_avals[slot])
            after.append(f"{names[slot]}_s = _M.flat({local})[0]" if names[slot] in layout.scalar
                         else f"_M.copy_elements({names[slot]}, {local})")
        else:
            names[slot] = layout.value(local, slot_avals[slot])
            after += layout.from_arrays([local])
    return (layout.to_arrays(invariants) +
            seg.native.call_nested(layout.extra, carry, invariants, results, layout.scalar,
                                   handed)
            + after)


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
    carry_avals = body.plan.slot_avals[:n_carry]
    extra = _Arguments()
    layout = _Layout(extra)
    arguments = [layout.argument(f"now{k}", a) for k, a in enumerate(carry_avals)]
    arguments += [f"nxt{k}" for k in range(n_carry)]
    invariant: list[Aval] = []
    statements: tuple[list[str], list[str]] = ([], [])
    kept: set[int] = set()     # carries updated in place by the body
    predicate = ""
    for which, executable in enumerate((cond, body)):
        plan = executable.plan
        names: dict[int, str] = {k: f"now{k}" for k in range(n_carry)}
        for k in range(n_carry, plan.n_inputs):
            name = f"{'cb'[which]}c{k - n_carry}"
            names[k] = layout.argument(name, plan.slot_avals[k])
            layout.inputs.add(name)
            arguments.append(name)
            invariant.append(plan.slot_avals[k])
        for k, c in enumerate(plan.constants):
            slot = plan.n_inputs + k
            names[slot] = layout.argument(extra.constant(c), plan.slot_avals[slot])
            layout.inputs.add(names[slot])
        outputs = [o.slot for o in plan.outputs]
        results = outputs if which == 1 else []
        for mem in executable.memory:
            for a in mem.allocs:
                name = (f"nxt{outputs.index(a.slot)}" if a.slot in results
                        else extra.temp(a.shape, a.dtype))
                names[a.slot] = layout.value(name, plan.slot_avals[a.slot])
        for k_seg, seg in enumerate(executable.segments):
            if isinstance(seg, LibrarySegment):
                later = {s for other in executable.segments[k_seg + 1:]
                         for s in _read_slots(other)} | set(outputs)
                statements[which].extend(
                    _library_call(seg, plan, names, results, layout, later, kept))
            elif isinstance(seg, LoopSegment):
                later = {s for other in executable.segments[k_seg + 1:]
                         for s in _read_slots(other)} | set(outputs)
                statements[which].extend(
                    _nested_loop(seg, names, results, layout, plan.slot_avals, later, kept))
            else:
                for c in seg.calls:
                    statements[which].extend(layout.kernel(c, names))
        if which == 0:
            predicate = names[outputs[0]]
    swapped = [k for k in range(n_carry) if k not in kept]
    lines = drivers.render_loop_lines(
        layout.entry, statements[0], statements[1], f"{predicate}_s",
        [(f"now{k}", f"nxt{k}", f"now{k}" in layout.scalar) for k in swapped],
        layout.to_arrays(f"now{k}" for k in range(n_carry)),
        [f"now{k}" for k in range(n_carry)])
    return _NativeLoop(carry_avals, invariant, arguments + extra.names(), lines, extra,
                       frozenset(kept))
