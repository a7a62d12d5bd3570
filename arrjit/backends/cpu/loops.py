"""Loops on the CPU: a ``LoopStep``'s condition and body plans run natively or from Python.

When both consist of native kernels only, one generated numba ``driver`` runs the whole loop
(no Python per iteration); otherwise the loop runs the two compiled plans from Python.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...core.dtypes import Aval
from ...core.ir import Op
from ...plan import LoopStep, OutputKind
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from . import drivers, indexing, products
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
        obstacle = _obstacle(self.cond, self.body)
        self.native = _native_loop(self.cond, self.body) if obstacle is None else None
        self.report = ("natively, one compiled driver for every iteration" if obstacle is None
                       else f"from Python, once per iteration: {obstacle}")
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
class _NativeLoop:
    source: str
    carry_avals: list[Aval]
    invariant_avals: list[Aval]   # the condition's loop-invariant inputs, then the body's
    constants: list[np.ndarray]
    temps: list[tuple[tuple[int, ...], np.dtype]]
    params: list[np.ndarray]
    extents: np.ndarray

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
        return [*carry, *(np.empty_like(x) for x in carry), *invariant, *self.constants,
                *(np.empty(shape, dtype) for shape, dtype in self.temps), *self.params,
                self.extents]


# The library steps a driver runs natively, each with its renderer (``supported``/``render``).
NATIVE_LIBRARY = (indexing, products)


def _native_renderer(step, slot_avals):
    return next((r for r in NATIVE_LIBRARY if r.supported(step, slot_avals)), None)


def _read_slots(seg) -> list[int]:
    if isinstance(seg, LibrarySegment):
        return list(seg.in_slots)
    return [s for call in seg.calls for s in call.read_slots]


def _library_call(seg: LibrarySegment, plan, names: dict[int, str], carried: list[int],
                  temps: list, later_reads: set[int], kept: set[int]) -> tuple:
    """A library step (gather, scatter, concatenation, product) in a native driver and its
    output's name. A scatter updates
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
        names[out] = f"t{len(temps)}"
        aval = plan.slot_avals[out]
        temps.append((aval.shape, aval.dtype))
    rendered = _native_renderer(step, plan.slot_avals).render(step, plan.slot_avals, in_place)
    return rendered, (names[out],) + tuple(names[s] for s in step.in_slots), 1


def _obstacle(cond: "CpuExecutable", body: "CpuExecutable") -> str | None:
    """Why the loop cannot run as one native driver (the first reason found), or None."""
    for which, executable in (("condition", cond), ("body", body)):
        for seg in executable.segments:
            if isinstance(seg, LoopSegment):
                return f"its {which} holds a nested loop"
            if isinstance(seg, LibrarySegment) and _native_renderer(
                    seg.step, executable.plan.slot_avals) is None:
                avals = ", ".join(str(executable.plan.slot_avals[s]) for s in seg.step.in_slots)
                return (f"its {which} calls the library step {seg.step.node.op.value}({avals}), "
                        f"which the driver cannot run natively")
        if any(o.kind is not OutputKind.SLOT for o in executable.plan.outputs):
            return f"its {which} returns a constant or passes an input through"
    return None


def _native_loop(cond: "CpuExecutable", body: "CpuExecutable") -> "_NativeLoop":
    """Lay out one native driver for a loop whose plans ``_obstacle`` accepts."""
    executables = (cond, body)
    n_carry = len(body.plan.outputs)
    n_cond_consts = cond.plan.n_inputs - n_carry
    n_body_consts = body.plan.n_inputs - n_carry
    arguments = [f"now{k}" for k in range(n_carry)] + [f"nxt{k}" for k in range(n_carry)]
    arguments += [f"cc{k}" for k in range(n_cond_consts)]
    arguments += [f"bc{k}" for k in range(n_body_consts)]
    constants: list[np.ndarray] = []
    temps: list[tuple[tuple[int, ...], np.dtype]] = []
    params: list[np.ndarray] = []
    extents: list[int] = []
    calls: tuple[list, list] = ([], [])
    kept: set[int] = set()     # carries updated in place by the body
    predicate = ""
    for which, executable in enumerate(executables):
        plan = executable.plan
        names: dict[int, str] = {}
        for k in range(plan.n_inputs):
            if k < n_carry:
                names[k] = f"now{k}"
            else:
                names[k] = (f"cc{k - n_carry}" if which == 0 else f"bc{k - n_carry}")
        for k, c in enumerate(plan.constants):
            names[plan.n_inputs + k] = f"c{len(constants)}"
            constants.append(c)
        outputs = [o.slot for o in plan.outputs]
        for mem in executable.memory:
            for a in mem.allocs:
                if which == 1 and a.slot in outputs:
                    names[a.slot] = f"nxt{outputs.index(a.slot)}"
                else:
                    names[a.slot] = f"t{len(temps)}"
                    temps.append((a.shape, a.dtype))
        for k_seg, seg in enumerate(executable.segments):
            if isinstance(seg, LibrarySegment):
                later = {s for other in executable.segments[k_seg + 1:]
                         for s in _read_slots(other)} | set(outputs)
                seg_calls = [_library_call(seg, plan, names, outputs if which == 1 else [],
                                           temps, later, kept)]
            else:
                seg_calls = [(c.rendered, tuple(names[s] for s in c.slots), c.extent)
                             for c in seg.calls]
            for rendered, args, extent in seg_calls:
                pname = f"P{len(params)}"
                params.append(rendered.params)
                calls[which].append(drivers.DriverCall(rendered, args, pname, len(extents)))
                extents.append(extent)
        if which == 0:
            predicate = names[outputs[0]]
    arguments += [f"c{k}" for k in range(len(constants))]
    arguments += [f"t{k}" for k in range(len(temps))]
    arguments += [f"P{k}" for k in range(len(params))]
    swapped = [k for k in range(n_carry) if k not in kept]
    source = drivers.render_loop_driver(calls[0], calls[1], predicate,
                                        [f"now{k}" for k in swapped],
                                        [f"nxt{k}" for k in swapped], arguments,
                                        [f"now{k}" for k in range(n_carry)])
    invariant = (cond.plan.slot_avals[n_carry:cond.plan.n_inputs] +
                 body.plan.slot_avals[n_carry:body.plan.n_inputs])
    return _NativeLoop(source, body.plan.slot_avals[:n_carry], invariant, constants, temps,
                       params, np.asarray(extents, np.int64))
