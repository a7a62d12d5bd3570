"""Loops on the CPU: a ``LoopStep``'s condition and body plans run natively or from Python.

When both consist of native kernels, library steps the driver renders (``NATIVE_LIBRARY``)
and loops that run natively themselves, one generated numba ``driver`` runs the whole loop,
nested loops included (no Python per iteration); otherwise the loop runs the two compiled
plans from Python.
"""
from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from ...core.dtypes import Aval
from ...core.ir import Op
from ...executor import CompiledPlan, run_loop, store_results
from ...memory import StepMemory
from ...plan import LoopStep, OutputKind
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from . import entries, indexing, loopfunctions, products, sequences
from .steps import LibraryRun, compile_entry, not_compiled, uncompiled
from .target import cache_key_fields

class CpuPlan(CompiledPlan, Protocol):
    """A condition or body plan as the CPU backend compiles it (``runner.CpuExecutable``)."""

    runs: list                  # KernelRun, LibraryRun and LoopRun, in order

    @property
    def memory(self) -> list[StepMemory]:
        """Per run: its allocations before it, its releases after it."""


class LoopRun:
    """A ``WHILE`` loop in a CPU executable; ``cond`` and ``body`` are its two plans as the
    backend compiles any plan (rendered, not yet compiled)."""

    def __init__(self, step: LoopStep, cond: CpuPlan, body: CpuPlan):
        self.in_slots = list(step.in_slots)
        self.out_slots = list(step.out_slots)
        self.n_carry, self.n_cond = step.n_carry, step.n_cond_consts
        self.trip_count = step.trip_count
        self.cond, self.body = cond, body
        self.obstacle = _obstacle(self.cond, self.body)
        self.native = _native_loop(self.cond, self.body) if self.obstacle is None else None
        self.report = ("natively, one compiled driver for every iteration"
                       if self.obstacle is None
                       else f"from Python, once per iteration: {self.obstacle}")
        self.sources = ([self.native.source] if self.native is not None
                        else self.cond.sources + self.body.sources)
        self._driver: Callable = not_compiled
        self._raising_driver: Callable = not_compiled   # numba's entry: raises a run's error
        self._spare: list[list[np.ndarray]] = []   # scratch buffers of finished runs

    def jobs(self, examples: list) -> list:
        """The native driver, when not compiled yet (see ``KernelRun.jobs``)."""
        if self.native is None:
            return []
        return uncompiled(self.native.source, [("driver", self.native.example_values())])

    def compile(self, examples: list, stats: CompileStats) -> None:
        if self.native is None:
            self.cond.compile(stats)
            self.body.compile(stats)
            return
        loaded = compiler.load_module(self.native.source, cache_key_fields())
        examples = self.native.example_values()
        self._driver = compile_entry(loaded, "driver", examples, stats, on_error=_raised)
        self._raising_driver = entries.numba_fallback(loaded, "driver", examples)

    def compute(self, *operands: np.ndarray) -> tuple:
        if self.native is not None:
            # a run takes a set of scratch buffers and gives it back when it returns (one
            # that raises drops it); runs on other threads meanwhile take sets of their own
            try:
                scratch = self._spare.pop()
            except IndexError:
                scratch = self.native.scratch()
            values = self.native.values(operands, self.n_carry, scratch)
            odd = self._driver(*values)
            if odd is _raised:
                # the run changed its carries: numba's entry raises the error from new copies
                values = self.native.values(operands, self.n_carry, scratch)
                odd = self._raising_driver(*values)
            self._spare.append(scratch)
            return self.native.final_carries(values, odd)
        return run_loop(self.cond, self.body, operands, self.n_carry, self.n_cond,
                        self.trip_count)

    def __call__(self, bufs: list) -> None:
        store_results(bufs, self.out_slots, self.compute(*(bufs[s] for s in self.in_slots)))


def _raised(*values: np.ndarray) -> Callable:
    """What a driver's native entry returns when the run met an error (itself: not a bool)."""
    return _raised


# The library steps a driver runs natively, each with its renderer (``supported``/``render``).
NATIVE_LIBRARY = (indexing, products, sequences)


def _native_renderer(step, slot_avals):
    if any(step.in_perms) and step.node.op is not Op.MATMUL:
        return None           # an operand read transposed: only products read it so
    return next((r for r in NATIVE_LIBRARY if r.supported(step, slot_avals)), None)


def _read_slots(run) -> list[int]:
    if isinstance(run, LibraryRun):
        return list(run.step.read_slots)
    if isinstance(run, LoopRun):
        return list(run.in_slots)
    return [s for call in run.calls for s in call.read_slots]


def _library_call(run: LibraryRun, plan, names: dict[int, str], carried: list[int],
                  layout: loopfunctions.LoopLayout, later_reads: set[int],
                  kept: set[int]) -> list[str]:
    """A library step (gather, scatter, concatenation, product) in a native driver: names its
    output and returns the statements. A scatter updates
    its operand's buffer in place when nothing reads that buffer afterwards and it is a value
    computed in the body or a carry's own buffer (``now<k>``): then a scatter into carry
    ``k`` leaves the result where it is, and ``kept`` collects ``k`` (it is not swapped)."""
    step, out = run.step, run.step.out_slots[0]
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
    reads = [names[s] for s in step.read_slots]
    # updates in registers are stored element by element, not through their buffer
    by_elements = (reads[-1] in layout.registered and reads[-1] not in layout.scalar
                   and indexing.updates_by_elements(step, plan.slot_avals))
    rendered = (indexing.render(step, plan.slot_avals, in_place, tuple_updates=True)
                if by_elements else renderer.render(step, plan.slot_avals, in_place))
    if renderer.by_value(step):
        # positions and a scalar update by value; one element gathered into a register
        passed = layout.scalar | ({reads[-1]} if by_elements else set())
        args = [reads[0]] + [f"{n}_s" if n in passed else n for n in reads[1:]]
        if step.node.op is Op.GATHER and aval.ndim == 0:
            layout.defined.add(names[out])
            return [*layout.to_arrays(args[:1]),
                    f"{names[out]}_s = {layout.extra.call(rendered, tuple(args), 1)}"]
        return [*layout.to_arrays(args),
                *layout.extra.run(rendered, (names[out], *args), 1),
                *layout.from_arrays([names[out]])]
    return [*layout.to_arrays(reads),
            *layout.extra.run(rendered, (names[out], *reads), 1),
            *layout.from_arrays([names[out]])]


def _nested_loop(run: LoopRun, names: dict[int, str], outputs: list[int],
                 layout: loopfunctions.LoopLayout, slot_avals: list[Aval], later_reads: set[int],
                 kept: set[int]) -> list[str]:
    """A loop inside a loop's condition or body (``outputs``: the body's results, whose
    buffers are ``nxt<k>``): its function is called by the enclosing one. A carry the inner
    loop updates in place is handed its buffer, not a copy, when nothing reads that buffer
    afterwards and it belongs to this iteration: a value computed here, or the enclosing
    loop's own carry that the inner loop's result replaces (which then stays in place too,
    ``kept``)."""
    assert run.native is not None   # _obstacle accepted it
    tag = layout.extra.nested
    layout.extra.nested += 1
    later = {names.get(s) for s in later_reads}
    carry = [names[s] for s in run.in_slots[:run.n_carry]]
    invariants = [names[s] for s in run.in_slots[run.n_carry:]]
    handed: set[int] = set()
    for k in run.native.kept:
        x, out = carry[k], run.out_slots[k]
        if x in later or x in layout.inputs or carry.count(x) > 1 or x in invariants:
            continue
        if x.startswith("now"):
            if out in outputs and x == f"now{outputs.index(out)}" and outputs.count(out) == 1:
                kept.add(outputs.index(out))
                handed.add(k)
        else:
            handed.add(k)
    results, after = [], []
    for k, slot in enumerate(run.out_slots):
        local = f"r{tag}_{k}"
        results.append(local)
        if k in handed and (carry[k].startswith("now") or slot not in outputs):
            names[slot] = carry[k]     # the result is in the handed buffer
            after += layout.from_arrays([carry[k]])
        elif slot in outputs:   # a carry of the enclosing loop: into its buffer
            names[slot] = layout.value(f"nxt{outputs.index(slot)}", slot_avals[slot])
            after.append(layout.load(names[slot], local) if names[slot] in layout.registered
                         else f"_M.copy_elements({names[slot]}, {local})")
        else:
            names[slot] = layout.value(local, slot_avals[slot])
            after += layout.from_arrays([local])
    return (layout.to_arrays(invariants + [carry[k] for k in sorted(handed)]) +
            run.native.call_nested(layout, carry, invariants, results, handed) + after)


def _obstacle(cond: CpuPlan, body: CpuPlan) -> str | None:
    """Why the loop cannot run as one native driver (the first reason found), or None."""
    for which, executable in (("condition", cond), ("body", body)):
        for run in executable.runs:
            if isinstance(run, LoopRun) and run.obstacle is not None:
                return f"its {which} holds a loop that cannot run natively ({run.obstacle})"
            if isinstance(run, LibraryRun) and _native_renderer(
                    run.step, executable.plan.slot_avals) is None:
                avals = ", ".join(str(executable.plan.slot_avals[s]) for s in run.step.in_slots)
                return (f"its {which} calls the library step {run.step.node.op.value}({avals}), "
                        f"which the driver cannot run natively")
        if any(o.kind is not OutputKind.SLOT for o in executable.plan.outputs):
            return f"its {which} returns a constant or passes an input through"
    return None


def _native_loop(cond: CpuPlan, body: CpuPlan) -> loopfunctions.LoopFunction:
    """Lay out the native function of a loop whose plans ``_obstacle`` accepts."""
    n_carry = len(body.plan.outputs)
    carry_avals = body.plan.slot_avals[:n_carry]
    extra = loopfunctions.LoopArguments()
    layout = loopfunctions.LoopLayout(extra)
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
            names[slot] = layout.constant(c, plan.slot_avals[slot])
        outputs = [o.slot for o in plan.outputs]
        results = outputs if which == 1 else []
        for mem in executable.memory:
            for a in mem.allocs:
                name = (f"nxt{outputs.index(a.slot)}" if a.slot in results
                        else extra.temp(a.shape, a.dtype))
                names[a.slot] = layout.value(name, plan.slot_avals[a.slot])
        for k_run, run in enumerate(executable.runs):
            if isinstance(run, (LibraryRun, LoopRun)):
                later = {s for other in executable.runs[k_run + 1:]
                         for s in _read_slots(other)} | set(outputs)
            if isinstance(run, LibraryRun):
                statements[which].extend(
                    _library_call(run, plan, names, results, layout, later, kept))
            elif isinstance(run, LoopRun):
                statements[which].extend(
                    _nested_loop(run, names, results, layout, plan.slot_avals, later, kept))
            else:
                for c in run.calls:
                    statements[which].extend(layout.kernel(c, names))
        if which == 0:
            predicate = names[outputs[0]]
    swapped = [k for k in range(n_carry) if k not in kept]
    lines = loopfunctions.render_loop_lines(
        layout.entry, statements[0], statements[1], f"{predicate}_s",
        [(f"now{k}", f"nxt{k}", f"now{k}" in layout.registered) for k in swapped],
        layout.to_arrays(f"now{k}" for k in range(n_carry)))
    buffers_swapped = frozenset(k for k in swapped if f"now{k}" not in layout.registered)
    return loopfunctions.LoopFunction(carry_avals, invariant, arguments + extra.names(), lines,
                                extra, frozenset(kept), buffers_swapped)
