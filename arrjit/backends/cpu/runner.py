"""Running a plan on the CPU: its segments (``segments``, ``loops``) and the hot-path runner.

``compile_plan`` groups consecutive kernel steps into one native module each, renders and
compiles every kernel of it through the disk cache, and returns a ``CpuExecutable``. Nothing
compiles when it runs. Running takes outputs and intermediates from the buffer pool
(``runtime.pool``: warm pages, and faster than allocating inside numba), then calls each
segment; library calls (BLAS) run between segments. Kernels over many elements are split
across threads (``threads``, ``dispatch``).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from ...memory import StepMemory
from ...plan import KernelStep, LoopStep, OutputKind, Plan, Step, aliased_donors
from ...runtime import cache as disk
from ...runtime import pool as buffers
from ...runtime import compile as compiler
from ...runtime import workers
from ...runtime.compile import CompileStats
from . import codegen as cpu
from . import entries
from .loops import LoopSegment
from .segments import KernelCall, LibrarySegment, NativeSegment, compile_in_worker
from .target import cache_key_fields


def example_buffers(plan: Plan) -> list:
    """One array per slot with that slot's type as the compiled code sees it: the constants
    themselves (read-only), and empty C-contiguous arrays of each other slot's dtype and
    rank (entry points do not check the read-only flag, so inputs of either kind share one)."""
    examples: list = [np.empty((0,) * len(a.shape), a.dtype) for a in plan.slot_avals]
    examples[plan.n_inputs:plan.n_inputs + len(plan.constants)] = plan.constants
    return examples


def _segment_steps(plan: Plan) -> list[tuple[list[Step], StepMemory]]:
    """The plan's steps grouped into segments: consecutive kernels share one native module
    (allocated before it, released after it); every other step is a segment of its own."""
    groups: list[tuple[list[Step], StepMemory]] = []
    for step, mem in zip(plan.steps, plan.memory):
        if isinstance(step, KernelStep) and groups and isinstance(groups[-1][0][-1], KernelStep):
            steps, merged = groups[-1]
            steps.append(step)
            merged.allocs.extend(mem.allocs)
            merged.release.extend(mem.release)
        else:
            groups.append(([step], StepMemory(list(mem.allocs), list(mem.release))))
    return groups


class CpuExecutable:
    """A plan's segments, compiled; ``run`` executes it on NumPy arrays."""

    def __init__(self, plan: Plan, stats: CompileStats, compile: bool = True):
        self.plan = plan
        self.segments: list = []
        self.memory: list[StepMemory] = []   # per segment
        for steps, mem in _segment_steps(plan):
            first = steps[0]
            if isinstance(first, KernelStep):
                self.segments.append(NativeSegment([
                    KernelCall(s.kernel, cpu.render_kernel(s.kernel), list(s.slots))
                    for s in steps if isinstance(s, KernelStep)]))
            elif isinstance(first, LoopStep):
                # rendered now; the loop compiles only what its way of running needs
                self.segments.append(LoopSegment(
                    first, CpuExecutable(first.cond, stats, compile=False),
                    CpuExecutable(first.body, stats, compile=False)))
            else:
                self.segments.append(LibrarySegment(first))
            self.memory.append(mem)
        self.sources = [text for seg in self.segments for text in seg.sources]
        self.loops = [seg.report for seg in self.segments if isinstance(seg, LoopSegment)]
        self.fast_run: Callable | None = None
        if compile:
            self.compile(stats)

    def compile(self, stats: CompileStats) -> None:
        examples = example_buffers(self.plan)
        units: list[tuple[str | None, Callable[[], None]]] = []   # (module source, compile)
        for seg in self.segments:
            if isinstance(seg, NativeSegment):
                units += [(source, partial(seg.compile_call, k, examples, stats))
                          for k, source in enumerate(seg.modules)]
            elif isinstance(seg, LoopSegment):
                units.append((seg.native.source if seg.native is not None else None,
                              partial(seg.compile, examples, stats)))
        if not compile_ahead(self.segments, examples):
            for _, compile_unit in units:
                compile_unit()
        else:
            # from the last, while the workers take them from the first; one a worker is
            # compiling now comes last, loaded once the worker has stored it
            waiting = []
            for source, compile_unit in reversed(units):
                if source is not None and compiler.busy(
                        compiler.load_module(source, cache_key_fields())):
                    waiting.append(compile_unit)
                else:
                    compile_unit()
            for compile_unit in waiting:
                compile_unit()
        self.fast_run = make_runner(self)

    def run(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        if self.fast_run is not None:
            return self.fast_run(args)
        return self._run_generic(args)

    def _run_generic(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        plan = self.plan
        bufs: list = list(args) + list(plan.constants)
        bufs.extend([None] * (plan.n_slots - len(bufs)))
        aliased = aliased_donors(plan, args) if plan.donated_inputs else set()
        for segment, mem in zip(self.segments, self.memory):
            for a in mem.allocs:
                if a.donor >= 0 and a.donor not in aliased:
                    bufs[a.slot] = args[a.donor]
                elif a.reuse >= 0:
                    bufs[a.slot] = bufs[a.reuse].reshape(a.shape)
                else:
                    bufs[a.slot] = buffers.empty(a.shape, a.dtype)
            if isinstance(segment, LibrarySegment) and segment.in_place_donor in aliased:
                segment(bufs, in_place=False)
            else:
                segment(bufs)
            for sl in mem.release:
                bufs[sl] = None
        return [bufs[o.slot] if o.kind is OutputKind.SLOT else
                bufs[o.slot].reshape(o.shape) if o.kind is OutputKind.VIEW else
                np.array(o.value) for o in plan.outputs]


# Uncached modules that are worth starting workers for: a worker needs about a second to start
# (Python, arrjit, numba), the time the caller takes for about this many kernels.
MODULES_TO_START_WORKERS = 5


def compile_ahead(segments: list, examples: list) -> bool:
    """Hand the kernel modules and loop drivers that are not compiled yet to the compile
    workers (``runtime.workers``), when there are two or more, the disk cache is on, workers
    are configured, and they are running or there are enough to be worth starting them
    (``MODULES_TO_START_WORKERS``; a smaller program does not start them). True
    when some were handed over: the caller then compiles from the last one (the workers from
    the first) and loads what they have stored."""
    if workers.worker_count() == 0 or not entries.native_in_use() \
            or disk.open_cache(cache_key_fields()) is None:
        return False   # workers hand over native entries through the disk cache
    jobs = list({source: (source, specs) for seg in segments
                 if not isinstance(seg, LibrarySegment)
                 for source, specs in seg.jobs(examples)}.values())
    if len(jobs) < 2:
        return False
    running = workers.running()
    if not (running is not None and running.warm or len(jobs) >= MODULES_TO_START_WORKERS):
        return False
    pool = workers.compile_workers()
    assert pool is not None   # worker_count() > 0
    cache_dir = str(disk.root_dir())
    for source, specs in jobs:
        pool.submit(compile_in_worker, source, specs, cache_dir)
    return True


def make_runner(executable: CpuExecutable) -> Callable | None:
    """Generate straight-line Python for the hot path: allocate, call each compiled entry point
    with its buffers, drop dead buffers, return the outputs. ``None`` (keep the generic path)
    for plans that need run-time decisions: threaded segments, or donations that must check
    argument aliasing."""
    plan = executable.plan
    if plan.donated_inputs or any(isinstance(s, NativeSegment) and s.parallel
                                  for s in executable.segments):
        return None
    ns: dict[str, Any] = {"empty": buffers.empty, "array": np.array, "asarray": np.asarray}
    names = [f"x{i}" for i in range(plan.n_inputs)]
    lines = ["def run(args):"]
    if names:
        lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = args")
    for k, c in enumerate(plan.constants):
        ns[f"const{k}"] = c
        names.append(f"const{k}")
    names.extend(f"t{sl}" for sl in range(len(names), plan.n_slots))
    for k, (seg, mem) in enumerate(zip(executable.segments, executable.memory)):
        for a in mem.allocs:
            ns[f"shape{a.slot}"], ns[f"dtype{a.slot}"] = a.shape, a.dtype
            if a.donor >= 0:
                lines.append(f"    {names[a.slot]} = x{a.donor}")
            elif a.reuse >= 0:
                lines.append(f"    {names[a.slot]} = {names[a.reuse]}.reshape(shape{a.slot})")
            else:
                lines.append(f"    {names[a.slot]} = empty(shape{a.slot}, dtype{a.slot})")
        if isinstance(seg, NativeSegment):
            for j, call in enumerate(seg.calls):
                ns[f"entry{k}_{j}"], ns[f"P{k}_{j}"] = call.entry, call.rendered.params
                args = [names[s] for s in call.slots] + [f"P{k}_{j}", "0", str(call.extent)]
                lines.append(f"    entry{k}_{j}({', '.join(args)})")
        elif isinstance(seg, LibrarySegment):
            ns[f"seg{k}"] = seg
            ins = ", ".join(names[s] for s in seg.in_slots)
            outs = ", ".join(names[s] for s in seg.out_slots)
            comma = "," if len(seg.out_slots) > 1 else ""
            lines.append(f"    {outs}{comma} = seg{k}.compute({ins})")
        else:  # a loop: several results
            ns[f"seg{k}"] = seg
            ins = ", ".join(names[s] for s in seg.in_slots)
            outs = ", ".join(names[s] for s in seg.out_slots)
            lines.append(f"    {outs}, = seg{k}.compute({ins})")
        for sl in mem.release:
            lines.append(f"    {names[sl]} = None")
    results = []
    for k, out in enumerate(plan.outputs):
        if out.kind is OutputKind.SLOT:
            results.append(names[out.slot])
        elif out.kind is OutputKind.VIEW:
            ns[f"out_shape{k}"] = out.shape
            results.append(f"{names[out.slot]}.reshape(out_shape{k})")
        else:
            ns[f"out_const{k}"] = out.value
            results.append(f"array(out_const{k})")
    lines.append(f"    return [{', '.join(results)}]")
    exec(compile("\n".join(lines), "<arrjit runner>", "exec"), ns)
    return ns["run"]
