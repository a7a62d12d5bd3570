"""Executable plans: buffer slots, allocation, donation, and the calls into compiled code.

A plan is built once per call signature. Running it allocates outputs and intermediates with
``np.empty`` (faster than allocating inside numba), then makes one native call per segment of
consecutive kernels; library calls (BLAS) run between segments. Kernels over many elements are
split across threads by their outermost loop (each kernel is ``nogil``; ``arrjit.threads``).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import compile as compiler
from . import library
from .codegen import cpu
from .threads import chunk_state, run_chunks, thread_count
from .config import config
from .errors import DonationWarning
from .fuse import Kernel, Partition
from .memory import StepMemory, plan_buffers, plan_donations
from .ir import Graph, Op, Var


@dataclass
class KernelCall:
    kernel: Kernel
    rendered: cpu.RenderedKernel
    slots: list[int]        # write slots then read slots
    entry: Callable | None = None
    split: bool = False     # a full reduction run as per-chunk partials, then combined
    chunked: bool = False   # run on chunks of the outer loop by all threads
    worker: Callable | None = None   # takes chunks (of the kernel, or of its part function)
    finish: Callable | None = None

    @property
    def extent(self) -> int:
        return cpu.outer_extent(self.kernel)

    def buffers(self, bufs: list) -> tuple[list, list]:
        """(written arrays, read arrays) of this call."""
        n = len(self.kernel.writes)
        return [bufs[s] for s in self.slots[:n]], [bufs[s] for s in self.slots[n:]]


@dataclass
class NativeSegment:
    """Consecutive kernels compiled into one module with a ``program`` function."""

    calls: list[KernelCall]
    source: str
    slots: list[int]
    parallel: bool
    stats: "CompileStats"
    entry: Callable | None = None

    @property
    def sources(self) -> list[str]:
        return [self.source]

    def _program_args(self, bufs: list) -> list:
        if len(self.calls) == 1:
            call = self.calls[0]
            return [bufs[s] for s in call.slots] + [call.rendered.params, 0, call.extent]
        return [bufs[s] for s in self.slots] + [c.rendered.params for c in self.calls]

    def prepare(self, bufs: list) -> None:
        loaded = compiler.load_module(self.source)
        name = self.calls[0].rendered.name if len(self.calls) == 1 else "program"
        self.entry = self._compile(loaded, name, self._program_args(bufs))
        if self.parallel:
            for call in self.calls:
                args = [bufs[s] for s in call.slots] + [call.rendered.params]
                call.entry = self._compile(loaded, call.rendered.name, args + [0, 1])
                if call.split:
                    self._compile_split(loaded, call, bufs)
                elif call.chunked:
                    call.worker = self._compile(loaded, call.rendered.name + "_worker",
                                                args + _worker_tail())

    def _compile_split(self, loaded, call: KernelCall, bufs: list) -> None:
        writes, reads = call.buffers(bufs)
        parts = _partials(call.kernel, 1)
        name, params = call.rendered.name, call.rendered.params
        call.worker = self._compile(loaded, name + "_part_worker",
                                    parts + reads + [params] + _worker_tail())
        call.finish = self._compile(loaded, name + "_finish",
                                    writes + reads + parts + [params, 1])

    def _run_split(self, call: KernelCall, bufs: list, chunks: int) -> None:
        writes, reads = call.buffers(bufs)
        parts = _partials(call.kernel, chunks)
        params = call.rendered.params
        if not run_chunks(call.worker, [*parts, *reads, params], call.extent, chunks):
            call.entry(*writes, *reads, params, 0, call.extent)   # raises the chunk's error
        call.finish(*writes, *reads, *parts, params, chunks)

    def _compile(self, loaded, name: str, args: list) -> Callable:
        t0 = time.perf_counter()
        result = compiler.entry_point(loaded, name, args)
        elapsed = time.perf_counter() - t0
        self.stats.compiles += result.compiled
        self.stats.disk_hits += result.disk_hits
        if result.compiled:
            self.stats.compile_seconds += elapsed
        elif result.disk_hits:
            self.stats.load_seconds += elapsed
        return result.entry

    def __call__(self, bufs: list) -> None:
        if self.entry is None:
            self.prepare(bufs)
        if not self.parallel:
            self.entry(*self._program_args(bufs))
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
    state, t, threads, bell (see ``codegen.cpu.render_worker``)."""
    return [1, 1, chunk_state(1, 1), 0, 1, np.zeros(1, np.int64)]


def _partials(kernel: Kernel, count: int) -> list[np.ndarray]:
    """The partial arrays of a split kernel (``codegen.cpu.partial_arrays``), ``count`` long."""
    return [np.empty(count, dtype) for _, dtype in cpu.partial_arrays(kernel)]


@dataclass
class LibrarySegment:
    """A library call (``arrjit.library``); its result becomes the buffer in ``out_slot``.
    ``in_place_donor`` >= 0 marks a scatter that updates that donated input in place."""

    node: Any
    in_slots: list[int]
    out_slot: int
    in_place_donor: int = -1
    sources = ()  # NumPy code: nothing generated

    def compute(self, *operands: np.ndarray) -> np.ndarray:
        return self._call(operands, self.in_place_donor >= 0)

    def _call(self, operands, in_place: bool) -> np.ndarray:
        node = self.node
        params = dict(node.param, in_place=True) if in_place else node.param
        return library.call(node.op, operands, params, node.out.dtype)

    def __call__(self, bufs: list, in_place: bool | None = None) -> None:
        in_place = self.in_place_donor >= 0 if in_place is None else in_place
        bufs[self.out_slot] = self._call([bufs[s] for s in self.in_slots], in_place)


def plan_graph(graph: Graph, stats: "CompileStats") -> "Plan":
    """The whole pipeline after tracing: simplify, fuse, plan."""
    from .fuse import partition
    from .simplify import simplify

    simple = simplify(graph)
    return build_plan(simple, partition(simple), stats=stats)


@dataclass
class CompileStats:
    compiles: int = 0
    disk_hits: int = 0
    compile_seconds: float = 0.0   # spent in numba compiling
    load_seconds: float = 0.0      # spent loading machine code from the disk cache


@dataclass
class Plan:
    n_inputs: int
    constants: list[np.ndarray]
    n_slots: int
    segments: list
    memory: list[StepMemory]                # per segment: allocations before, releases after
    outputs: list[tuple[str, Any]]          # ("slot", index) or ("const", array)
    donated_inputs: dict[int, int] = field(default_factory=dict)  # input index -> output slot
    sources: list[str] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)

    fast_run: Callable | None = None

    def run(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the plan. The first run compiles; later runs use a generated straight-line
        runner (``fast_run``) when the plan allows one."""
        if self.fast_run is not None:
            return self.fast_run(args)
        outs = self._run_generic(args)
        self.fast_run = make_runner(self) or self._run_generic
        return outs

    def _run_generic(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        bufs: list = list(args) + list(self.constants)
        bufs.extend([None] * (self.n_slots - len(bufs)))
        aliased = self._aliased_donors(args) if self.donated_inputs else set()
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
        return [bufs[ref] if kind == "slot" else np.array(ref) for kind, ref in self.outputs]

    def _aliased_donors(self, args: Sequence[np.ndarray]) -> set[int]:
        """Donated arrays that are also passed as another argument are still read through
        that argument: their outputs go to fresh buffers instead (with a warning)."""
        aliased = set()
        for i in self.donated_inputs:
            if any(j != i and isinstance(a, np.ndarray) and np.shares_memory(args[i], a)
                   for j, a in enumerate(args)):
                aliased.add(i)
                warnings.warn(DonationWarning(
                    f"Some donated buffers were not usable: {_describe(args[i])} (argument "
                    f"{i} is also passed as another argument)"), stacklevel=4)
        return aliased


def _describe(a: np.ndarray) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def make_runner(plan: Plan) -> Callable | None:
    """Generate straight-line Python for the hot path: allocate, call each compiled entry point
    with its buffers, drop dead buffers, return the outputs. ``None`` (keep the generic path)
    for plans that need run-time decisions: threaded segments, or donations that must check
    argument aliasing."""
    if plan.donated_inputs or any(isinstance(s, NativeSegment) and s.parallel
                                  for s in plan.segments):
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
    for k, (seg, mem) in enumerate(zip(plan.segments, plan.memory)):
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
    outs = []
    for k, (kind, ref) in enumerate(plan.outputs):
        if kind == "slot":
            outs.append(names[ref])
        else:
            ns[f"out_const{k}"] = ref
            outs.append(f"array(out_const{k})")
    lines.append(f"    return [{', '.join(outs)}]")
    exec(compile("\n".join(lines), "<arrjit runner>", "exec"), ns)
    return ns["run"]


def build_plan(graph: Graph, partition: Partition, *, donate: Sequence[int] = (),
               arg_names: Sequence[str] = (), stats: CompileStats) -> Plan:
    slot: dict[Var, int] = {v: k for k, v in enumerate(graph.inputs)}
    constants: list[np.ndarray] = []
    producer = {n.out: n for n in graph.nodes}
    for v in sorted(partition.buffers, key=lambda v: v.id):
        node = producer.get(v)
        if node is not None and node.op is Op.CONST and v not in slot:
            slot[v] = len(graph.inputs) + len(constants)
            constants.append(node.param["value"].array)
    steps = list(partition.steps)
    donations = plan_donations(graph, steps, donate, arg_names)
    if donations.refused:
        warnings.warn(DonationWarning("Some donated buffers were not usable: " +
                                      ", ".join(donations.refused)), stacklevel=5)
    next_slot = len(graph.inputs) + len(constants)
    for step in steps:
        written = step.writes if isinstance(step, Kernel) else step.node.outs
        for v in written:
            if v not in slot:
                slot[v] = next_slot
                next_slot += 1

    segments: list = []
    segment_steps: list[list] = []
    pending: list[KernelCall] = []

    def flush() -> None:
        if not pending:
            return
        rendered = [c.rendered for c in pending]
        parallel = thread_count() > 1 and any(
            c.kernel.work >= config.parallel_threshold for c in pending)
        extra: list[str] = []
        for c in pending:
            big = parallel and c.kernel.work >= config.parallel_threshold
            c.split = big and cpu.can_split(c.kernel)
            c.chunked = big and not c.split and c.kernel.splittable
            if c.split:
                extra.append(cpu.render_split(c.kernel, c.rendered.name))
            if c.split or c.chunked:
                extra.append(cpu.render_worker(c.kernel, c.rendered.name, c.split))
        source, slots = cpu.render_module(rendered, [c.slots for c in pending],
                                          [bool(c.kernel.sizes) for c in pending], tuple(extra))
        segments.append(NativeSegment(list(pending), source, slots, parallel, stats))
        segment_steps.append([c.kernel for c in pending])
        pending.clear()

    for k, step in enumerate(steps):
        if isinstance(step, Kernel):
            slots = [slot[v] for v in step.writes] + [slot[v] for v in step.reads]
            pending.append(KernelCall(step, cpu.render_kernel(step), slots))
        elif step.node.op is Op.WHILE:
            from .loops import LoopSegment

            flush()
            segments.append(LoopSegment(step.node, [slot[v] for v in step.node.inputs],
                                        [slot[v] for v in step.node.outs], stats))
            segment_steps.append([step])
        else:
            flush()
            segments.append(LibrarySegment(step.node, [slot[v] for v in step.node.inputs],
                                           slot[step.node.out],
                                           donations.scatters.get(k, -1)))
            segment_steps.append([step])
    flush()

    outputs = []
    for v in graph.outputs:
        node = producer.get(v)
        if node is not None and node.op is Op.CONST:
            outputs.append(("const", node.param["value"].array))  # copied on every return
        else:
            outputs.append(("slot", slot[v]))
    keep = {ref for kind, ref in outputs if kind == "slot"}
    memory = plan_buffers(segment_steps, slot, keep, donations.outputs)
    donated_inputs = {i: slot[o] for o, i in donations.outputs.items()}
    for k, i in donations.scatters.items():
        donated_inputs[i] = slot[steps[k].node.out]
    sources = [text for seg in segments for text in seg.sources]
    return Plan(len(graph.inputs), constants, next_slot, segments, memory, outputs,
                donated_inputs, sources, [s for s in steps if isinstance(s, Kernel)])
