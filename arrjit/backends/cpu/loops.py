"""Loops on the CPU: a ``LoopStep``'s condition and body plans run natively or from Python.

When both consist of native kernels only, one generated numba ``driver`` runs the whole loop
(no Python per iteration); otherwise the loop runs the two compiled plans from Python.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...core.dtypes import Aval
from ...plan import LoopStep
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from . import drivers
from .segments import NativeSegment, compile_entry, not_compiled
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
        self.native = _native_loop(self.cond, self.body)
        self.sources = ([self.native.source] if self.native is not None
                        else self.cond.sources + self.body.sources)
        self._driver: Callable = not_compiled

    def compile(self, examples: list, stats: CompileStats) -> None:
        if self.native is None:
            self.cond.compile(stats)
            self.body.compile(stats)
            return
        loaded = compiler.load_module(self.native.source, cache_key_fields())
        self._driver = compile_entry(loaded, "driver", self.native.example_values(), stats)

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


def _native_loop(cond: "CpuExecutable", body: "CpuExecutable") -> "_NativeLoop | None":
    """Lay out one native driver for a loop, or None when a plan needs Python (library calls,
    nested loops, constant outputs)."""
    executables = (cond, body)
    if any(not isinstance(seg, NativeSegment) for e in executables for seg in e.segments):
        return None
    if any(kind != "slot" for e in executables for kind, _ in e.plan.outputs):
        return None
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
        outputs = [ref for _, ref in plan.outputs]
        for mem in executable.memory:
            for a in mem.allocs:
                if which == 1 and a.slot in outputs:
                    names[a.slot] = f"nxt{outputs.index(a.slot)}"
                else:
                    names[a.slot] = f"t{len(temps)}"
                    temps.append((a.shape, a.dtype))
        if which == 0:
            predicate = names[outputs[0]]
        for seg in executable.segments:
            for call in seg.calls:
                pname = f"P{len(params)}"
                params.append(call.rendered.params)
                calls[which].append(drivers.DriverCall(call.rendered, tuple(
                    names[s] for s in call.slots), pname, len(extents)))
                extents.append(call.extent)
    arguments += [f"c{k}" for k in range(len(constants))]
    arguments += [f"t{k}" for k in range(len(temps))]
    arguments += [f"P{k}" for k in range(len(params))]
    source = drivers.render_loop_driver(calls[0], calls[1], predicate,
                                    [f"now{k}" for k in range(n_carry)],
                                    [f"nxt{k}" for k in range(n_carry)], arguments)
    invariant = (cond.plan.slot_avals[n_carry:cond.plan.n_inputs] +
                 body.plan.slot_avals[n_carry:body.plan.n_inputs])
    return _NativeLoop(source, body.plan.slot_avals[:n_carry], invariant, constants, temps,
                       params, np.asarray(extents, np.int64))
