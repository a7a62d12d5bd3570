"""Loops in a plan: a ``WHILE`` node's condition and body are planned like whole functions.
When both consist of native kernels only, one generated numba ``driver`` runs the whole loop
(no Python per iteration); otherwise the loop runs the two plans from Python."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import compile as compiler
from .codegen import cpu
from .plan import CompileStats, NativeSegment, Plan, plan_graph


class LoopSegment:
    """A ``WHILE`` node in a plan."""

    def __init__(self, node, in_slots: list[int], out_slots: list[int], stats: "CompileStats"):
        p = node.param
        self.node = node
        self.in_slots = in_slots
        self.out_slots = out_slots
        self.n_carry, self.n_cond = p["n_carry"], p["n_cond_consts"]
        self.stats = stats
        self.cond_plan = plan_graph(p["cond"], stats)
        self.body_plan = plan_graph(p["body"], stats)
        self.native = _native_loop(self.cond_plan, self.body_plan)
        self.sources = self.cond_plan.sources + self.body_plan.sources
        self._driver: Callable | None = None

    def compute(self, *operands: np.ndarray) -> tuple:
        if self.native is not None:
            return self._run_native(operands)
        n, m = self.n_carry, self.n_cond
        carry = list(operands[:n])
        cond_consts, body_consts = list(operands[n:n + m]), list(operands[n + m:])
        cond_run, body_run = self.cond_plan.run, self.body_plan.run
        while cond_run(carry + cond_consts)[0]:
            carry = body_run(carry + body_consts)
        return tuple(carry)

    def _run_native(self, operands) -> tuple:
        layout = self.native
        n = self.n_carry
        values = [np.array(x) for x in operands[:n]]               # carry now (copies)
        values += [np.empty_like(x) for x in values]                # carry next
        values += list(operands[n:])                                # loop-invariant inputs
        values += layout.constants
        values += [np.empty(shape, dtype) for shape, dtype in layout.temps]
        values += layout.params
        values.append(layout.extents)
        if self._driver is None:
            loaded = compiler.load_module(layout.source)
            result = compiler.entry_point(loaded, "driver", values)
            self.stats.compiles += result.compiled
            self.stats.disk_hits += result.disk_hits
            self._driver = result.entry
        return self._driver(*values)

    def __call__(self, bufs: list) -> None:
        for slot, value in zip(self.out_slots, self.compute(*(bufs[s] for s in self.in_slots))):
            bufs[slot] = value


@dataclass
class _NativeLoop:
    source: str
    constants: list[np.ndarray]
    temps: list[tuple[tuple[int, ...], np.dtype]]
    params: list[np.ndarray]
    extents: np.ndarray


def _native_loop(cond: "Plan", body: "Plan") -> "_NativeLoop | None":
    """Lay out one native driver for a loop, or None when a plan needs Python (library calls,
    nested loops, constant outputs)."""
    plans = (cond, body)
    if any(not isinstance(seg, NativeSegment) for p in plans for seg in p.segments):
        return None
    if any(kind != "slot" for p in plans for kind, _ in p.outputs):
        return None
    n_carry = len(body.outputs)
    n_cond_consts = cond.n_inputs - n_carry
    n_body_consts = body.n_inputs - n_carry
    arguments = [f"now{k}" for k in range(n_carry)] + [f"nxt{k}" for k in range(n_carry)]
    arguments += [f"cc{k}" for k in range(n_cond_consts)]
    arguments += [f"bc{k}" for k in range(n_body_consts)]
    constants: list[np.ndarray] = []
    temps: list[tuple[tuple[int, ...], np.dtype]] = []
    params: list[np.ndarray] = []
    extents: list[int] = []
    calls = ([], [])
    predicate = ""
    for which, plan in enumerate(plans):
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
        for mem in plan.memory:
            for a in mem.allocs:
                if which == 1 and a.slot in outputs:
                    names[a.slot] = f"nxt{outputs.index(a.slot)}"
                else:
                    names[a.slot] = f"t{len(temps)}"
                    temps.append((a.shape, a.dtype))
        if which == 0:
            predicate = names[outputs[0]]
        for seg in plan.segments:
            for call in seg.calls:
                pname = f"P{len(params)}"
                params.append(call.rendered.params)
                calls[which].append(cpu.DriverCall(call.rendered, tuple(
                    names[s] for s in call.slots), pname, len(extents)))
                extents.append(call.extent)
    arguments += [f"c{k}" for k in range(len(constants))]
    arguments += [f"t{k}" for k in range(len(temps))]
    arguments += [f"P{k}" for k in range(len(params))]
    source = cpu.render_loop_driver(calls[0], calls[1], predicate,
                                    [f"now{k}" for k in range(n_carry)],
                                    [f"nxt{k}" for k in range(n_carry)], arguments)
    return _NativeLoop(source, constants, temps, params, np.asarray(extents, np.int64))
