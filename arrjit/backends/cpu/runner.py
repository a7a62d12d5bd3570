"""Running a plan on the CPU: native segments, library calls, loops, and the hot-path runner.

``compile_plan`` groups consecutive kernel steps into one native module each (a
``program`` function calls them, so a call crosses from Python into native code once per
segment), renders and compiles every module through the disk cache, and returns a
``CpuExecutable``. Nothing compiles when it runs. Running allocates outputs and
intermediates with ``np.empty`` (faster than allocating inside numba), then calls each
segment; library calls (BLAS) run between segments. Kernels over many elements are split
across threads by their outermost loop (each kernel is ``nogil``; ``threads``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ...config import config
from ...core import library
from ...memory import StepMemory
from ...passes.kernel import Kernel
from ...plan import KernelStep, LibraryStep, LoopStep, Plan, Step, aliased_donors
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from . import codegen as cpu
from . import drivers
from .cost import splittable, work
from .target import cache_key_fields
from .threads import chunk_state, run_chunks, thread_count


def not_compiled(*args: Any) -> None:
    """Stands for an entry point until the executable is compiled (when the plan is built;
    nothing compiles while a plan runs)."""
    raise RuntimeError("arrjit: this executable was not compiled")


@dataclass
class KernelCall:
    kernel: Kernel
    rendered: cpu.RenderedKernel
    slots: list[int]        # write slots then read slots
    entry: Callable = not_compiled
    split: bool = False     # a full reduction run as per-chunk partials, then combined
    chunked: bool = False   # run on chunks of the outer loop by all threads
    worker: Callable = not_compiled   # takes chunks (of the kernel, or of its part function)
    finish: Callable = not_compiled

    @property
    def extent(self) -> int:
        return drivers.outer_extent(self.kernel)

    def buffers(self, bufs: list) -> tuple[list, list]:
        """(written arrays, read arrays) of this call."""
        n = len(self.kernel.writes)
        return [bufs[s] for s in self.slots[:n]], [bufs[s] for s in self.slots[n:]]


def compile_entry(loaded: compiler.LoadedModule, name: str, args: Sequence[Any],
                  stats: CompileStats) -> Callable:
    """The entry point of ``name`` for ``args``' types, counted in ``stats``."""
    t0 = time.perf_counter()
    result = compiler.entry_point(loaded, name, args)
    stats.add(result, time.perf_counter() - t0)
    return result.entry


class NativeSegment:
    """Consecutive kernels compiled into one module with a ``program`` function."""

    def __init__(self, calls: list[KernelCall]):
        self.calls = calls
        self.parallel = thread_count() > 1 and any(
            work(c.kernel) >= config.parallel_threshold for c in calls)
        extra: list[str] = []
        for c in calls:
            big = self.parallel and work(c.kernel) >= config.parallel_threshold
            c.split = big and cpu.can_split(c.kernel)
            c.chunked = big and not c.split and splittable(c.kernel)
            if c.split:
                extra.append(cpu.render_split(c.kernel, c.rendered.name))
            if c.split or c.chunked:
                extra.append(drivers.render_worker(c.kernel, c.rendered.name, c.split))
        self.source, self.slots = drivers.render_module(
            [c.rendered for c in calls], [c.slots for c in calls],
            [bool(c.kernel.sizes) for c in calls], tuple(extra))
        self.entry: Callable = not_compiled

    @property
    def sources(self) -> list[str]:
        return [self.source]

    def program_args(self, bufs: list) -> list:
        if len(self.calls) == 1:
            call = self.calls[0]
            return [bufs[s] for s in call.slots] + [call.rendered.params, 0, call.extent]
        return [bufs[s] for s in self.slots] + [c.rendered.params for c in self.calls]

    def compile(self, examples: list, stats: CompileStats) -> None:
        """Compile every entry point for the buffer types in ``examples`` (one per slot)."""
        loaded = compiler.load_module(self.source, cache_key_fields())
        name = self.calls[0].rendered.name if len(self.calls) == 1 else "program"
        self.entry = compile_entry(loaded, name, self.program_args(examples), stats)
        if not self.parallel:
            return
        for call in self.calls:
            args = [examples[s] for s in call.slots] + [call.rendered.params]
            call.entry = compile_entry(loaded, call.rendered.name, args + [0, 1], stats)
            if call.split:
                writes, reads = call.buffers(examples)
                parts = _partials(call.kernel, 1)
                call.worker = compile_entry(loaded, call.rendered.name + "_part_worker",
                                            parts + reads + [call.rendered.params] +
                                            _worker_tail(), stats)
                call.finish = compile_entry(loaded, call.rendered.name + "_finish",
                                            writes + reads + parts + [call.rendered.params, 1],
                                            stats)
            elif call.chunked:
                call.worker = compile_entry(loaded, call.rendered.name + "_worker",
                                            args + _worker_tail(), stats)

    def _run_split(self, call: KernelCall, bufs: list, chunks: int) -> None:
        writes, reads = call.buffers(bufs)
        parts = _partials(call.kernel, chunks)
        params = call.rendered.params
        if not run_chunks(call.worker, [*parts, *reads, params], call.extent, chunks):
            call.entry(*writes, *reads, params, 0, call.extent)   # raises the chunk's error
        call.finish(*writes, *reads, *parts, params, chunks)

    def __call__(self, bufs: list) -> None:
        if not self.parallel:
            self.entry(*self.program_args(bufs))
            return
        chunks_wanted = CHUNKS_PER_THREAD * thread_count()
        for call in self.calls:
            args = [bufs[s] for s in call.slots] + [call.rendered.params]
            extent = call.extent
            chunks = min(chunks_wanted, extent)
            if call.split and extent >= 2:
                self._run_split(call, bufs, chunks)
            elif call.chunked and extent >= 2:
                if not run_chunks(call.worker, args, extent, chunks):
                    call.entry(*args, 0, extent)   # raises the error a chunk met
            else:
                call.entry(*args, 0, extent)


# Chunks are taken from atomic counters in native code, so many chunks cost nothing in
# hand-overs and balance a helper that starts late (a descheduled vCPU, measured up to 3.6 ms
# here). Softmax 4096x1024 float32 with 2 threads: 1.9 ms with one chunk per thread handed out
# in Python, 1.6 ms with 4 per thread, 1.5 ms with 16.
CHUNKS_PER_THREAD = 16


def _worker_tail() -> list:
    """Example arguments after a worker's kernel arguments, for compiling it: extent, chunks,
    state, t, threads, bell (see ``codegen.render_worker``)."""
    return [1, 1, chunk_state(1, 1), 0, 1, np.zeros(1, np.int64)]


def _partials(kernel: Kernel, count: int) -> list[np.ndarray]:
    """The partial arrays of a split kernel (``codegen.partial_arrays``), ``count`` long."""
    return [np.empty(count, dtype) for _, dtype in cpu.partial_arrays(kernel)]


class LibrarySegment:
    """A library call; its result becomes the buffer in ``out_slot``."""

    sources: tuple[str, ...] = ()  # NumPy code: nothing generated

    def __init__(self, step: LibraryStep):
        self.node = step.node
        self.in_slots = list(step.in_slots)
        self.out_slot = step.out_slot
        self.in_place_donor = step.in_place_donor

    def compute(self, *operands: np.ndarray) -> np.ndarray:
        return self._call(operands, self.in_place_donor >= 0)

    def _call(self, operands, in_place: bool) -> np.ndarray:
        node = self.node
        params = dict(node.param, in_place=True) if in_place else node.param
        return library.call(node.op, operands, params, node.out.dtype)

    def __call__(self, bufs: list, in_place: bool | None = None) -> None:
        in_place = self.in_place_donor >= 0 if in_place is None else in_place
        bufs[self.out_slot] = self._call([bufs[s] for s in self.in_slots], in_place)


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
        from .loops import LoopSegment

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
                self.segments.append(LoopSegment(first, stats))
            else:
                self.segments.append(LibrarySegment(first))
            self.memory.append(mem)
        self.sources = [text for seg in self.segments for text in seg.sources]
        self.fast_run: Callable | None = None
        if compile:
            self.compile(stats)

    def compile(self, stats: CompileStats) -> None:
        examples = example_buffers(self.plan)
        for seg in self.segments:
            if not isinstance(seg, LibrarySegment):   # NumPy code: nothing to compile
                seg.compile(examples, stats)
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
                    bufs[a.slot] = np.empty(a.shape, a.dtype)
            if isinstance(segment, LibrarySegment) and segment.in_place_donor in aliased:
                segment(bufs, in_place=False)
            else:
                segment(bufs)
            for sl in mem.release:
                bufs[sl] = None
        return [bufs[ref] if kind == "slot" else np.array(ref) for kind, ref in plan.outputs]


def make_runner(executable: CpuExecutable) -> Callable | None:
    """Generate straight-line Python for the hot path: allocate, call each compiled entry point
    with its buffers, drop dead buffers, return the outputs. ``None`` (keep the generic path)
    for plans that need run-time decisions: threaded segments, or donations that must check
    argument aliasing."""
    plan = executable.plan
    if plan.donated_inputs or any(isinstance(s, NativeSegment) and s.parallel
                                  for s in executable.segments):
        return None
    ns: dict[str, Any] = {"empty": np.empty, "array": np.array, "asarray": np.asarray}
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
            ns[f"entry{k}"] = seg.entry
            if len(seg.calls) == 1:
                call = seg.calls[0]
                ns[f"P{k}"] = call.rendered.params
                args = [names[s] for s in call.slots] + [f"P{k}", "0", str(call.extent)]
            else:
                args = [names[s] for s in seg.slots]
                for j, call in enumerate(seg.calls):
                    ns[f"P{k}_{j}"] = call.rendered.params
                    args.append(f"P{k}_{j}")
            lines.append(f"    entry{k}({', '.join(args)})")
        elif isinstance(seg, LibrarySegment):
            ns[f"seg{k}"] = seg
            ins = ", ".join(names[s] for s in seg.in_slots)
            lines.append(f"    {names[seg.out_slot]} = seg{k}.compute({ins})")
        else:  # a loop: several results
            ns[f"seg{k}"] = seg
            ins = ", ".join(names[s] for s in seg.in_slots)
            outs = ", ".join(names[s] for s in seg.out_slots)
            lines.append(f"    {outs}, = seg{k}.compute({ins})")
        for sl in mem.release:
            lines.append(f"    {names[sl]} = None")
    results = []
    for k, (kind, ref) in enumerate(plan.outputs):
        if kind == "slot":
            results.append(names[ref])
        else:
            ns[f"out_const{k}"] = ref
            results.append(f"array(out_const{k})")
    lines.append(f"    return [{', '.join(results)}]")
    exec(compile("\n".join(lines), "<arrjit runner>", "exec"), ns)
    return ns["run"]
