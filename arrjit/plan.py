"""Executable plans: buffer slots, allocation, donation, and the calls into compiled code.

A plan is built once per call signature. Running it allocates outputs and intermediates with
``np.empty`` (faster than allocating inside numba), then makes one native call per segment of
consecutive kernels; library calls (BLAS) run between segments. Kernels over many elements are
split across threads by their outermost loop (each kernel is ``nogil``).
"""
from __future__ import annotations

import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import compile as compiler
from . import library
from .codegen import cpu
from .config import config
from .errors import DonationWarning
from .fuse import Affine, Kernel, LibraryCall, Load, Partition
from .ir import Graph, Op, Var


_pool: ThreadPoolExecutor | None = None


def thread_count() -> int:
    wanted = config.num_threads or os.cpu_count() or 1
    return max(1, int(wanted))


def _thread_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max(1, thread_count() - 1), thread_name_prefix="arrjit")
    return _pool


@dataclass
class KernelCall:
    kernel: Kernel
    rendered: cpu.RenderedKernel
    slots: list[int]        # write slots then read slots
    entry: Callable | None = None

    @property
    def extent(self) -> int:
        return cpu.outer_extent(self.kernel)


@dataclass
class NativeSegment:
    """Consecutive kernels compiled into one module with a ``program`` function."""

    calls: list[KernelCall]
    source: str
    slots: list[int]
    parallel: bool
    stats: "CompileStats"
    entry: Callable | None = None

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
                kargs = [bufs[s] for s in call.slots] + [call.rendered.params, 0, 1]
                call.entry = self._compile(loaded, call.rendered.name, kargs)

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
        threads = thread_count()
        for call in self.calls:
            args = [bufs[s] for s in call.slots] + [call.rendered.params]
            extent = call.extent
            if (not call.kernel.splittable or call.kernel.elements < config.parallel_threshold
                    or extent < 2):
                call.entry(*args, 0, extent)
                continue
            chunks = min(threads, extent)
            bounds = [extent * t // chunks for t in range(chunks + 1)]
            futures = [_thread_pool().submit(call.entry, *args, bounds[t], bounds[t + 1])
                       for t in range(1, chunks)]
            call.entry(*args, bounds[0], bounds[1])
            for f in futures:
                f.result()


@dataclass
class LibrarySegment:
    """A library call (``arrjit.library``); its result becomes the buffer in ``out_slot``."""

    node: Any
    in_slots: list[int]
    out_slot: int

    def __call__(self, bufs: list) -> None:
        node = self.node
        bufs[self.out_slot] = library.call(node.op, [bufs[s] for s in self.in_slots],
                                           node.param, node.out.dtype)


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
    allocations: list[tuple[tuple[int, ...], np.dtype, int]]  # shape, dtype, donor
    segments: list
    outputs: list[tuple[str, Any]]         # ("slot", index) or ("const", array)
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
        self.fast_run = make_runner(self)
        return outs

    def _run_generic(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        bufs = list(args)
        bufs.extend(self.constants)
        for shape, dtype, donor in self.allocations:
            bufs.append(np.empty(shape, dtype) if donor == -1 else
                        None if donor == -2 else args[donor])
        if self.donated_inputs:
            self._refuse_aliased_donations(args, bufs)
        for segment in self.segments:
            segment(bufs)
        return [bufs[ref] if kind == "slot" else np.array(ref) for kind, ref in self.outputs]

    def _refuse_aliased_donations(self, args: Sequence[np.ndarray], bufs: list) -> None:
        """A donated array that is also passed as another argument is still read through that
        argument, so its output is written to a fresh buffer instead."""
        for i, out_slot in self.donated_inputs.items():
            if any(j != i and isinstance(a, np.ndarray) and np.shares_memory(args[i], a)
                   for j, a in enumerate(args)):
                bufs[out_slot] = np.empty_like(args[i])
                warnings.warn(DonationWarning(
                    f"Some donated buffers were not usable: {_describe(args[i])} (argument "
                    f"{i} is also passed as another argument)"), stacklevel=4)


def _describe(a: np.ndarray) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def _donation_slots(graph: Graph, partition: Partition, donate: Sequence[int],
                    arg_names: Sequence[str]) -> tuple[dict[Var, int], list[str]]:
    """Which kernel outputs may be written into which donated inputs. A donated input can hold
    an output when the kernel writing it reads the input only at the index it writes, and no
    later step reads the input. Returns (output var -> input index, refusal reasons)."""
    steps = partition.steps
    assigned: dict[Var, int] = {}
    refused: list[str] = []
    outputs = list(graph.outputs)
    for i in donate:
        var = graph.inputs[i]
        reason = "no output has its shape and dtype"
        if var in outputs:
            reason = "it is returned unchanged"
            refused.append(f"{var.aval} (argument {arg_names[i]!r}: {reason})")
            continue
        for k, step in enumerate(steps):
            if not isinstance(step, Kernel):
                continue
            for w, (out_var, store) in enumerate(zip(step.writes, step.stores)):
                if (out_var not in outputs or out_var in assigned or out_var.aval.shape != var.shape
                        or out_var.dtype != var.dtype):
                    continue
                why = _unsafe_read(var, store.access, step, steps[k + 1:])
                if why is None:
                    assigned[out_var] = i
                    break
                reason = why
            else:
                continue
            break
        if i not in assigned.values():
            refused.append(f"{var.aval} (argument {arg_names[i]!r}: {reason})")
    return assigned, refused


def _unsafe_read(var: Var, store: Affine, kernel: Kernel, later: Sequence) -> str | None:
    if var in kernel.reads:
        idx = kernel.reads.index(var)
        for stmt in kernel.stmts:
            if isinstance(stmt, Load) and stmt.buffer == idx and stmt.access != store:
                return "read at a different index than the output is written"
    for step in later:
        reads = step.reads if isinstance(step, Kernel) else step.node.inputs
        if var in reads:
            return "read again after the output is written"
    return None


def make_runner(plan: Plan) -> Callable | None:
    """Generate straight-line Python for the hot path: allocate, call each compiled entry point
    with its buffers, return the outputs. ``None`` (keep the generic path) for plans that need
    run-time decisions: threaded segments, or donations that must check argument aliasing."""
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
    for k, (shape, dtype, donor) in enumerate(plan.allocations):
        name = f"t{k}"
        ns[f"shape{k}"], ns[f"dtype{k}"] = shape, dtype
        if donor == -1:
            lines.append(f"    {name} = empty(shape{k}, dtype{k})")
        elif donor >= 0:
            lines.append(f"    {name} = x{donor}")
        names.append(name)
    for k, seg in enumerate(plan.segments):
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
        else:
            ns[f"lib{k}"] = library.LIBRARY_IMPLS[seg.node.op]
            ns[f"params{k}"] = seg.node.param
            ns[f"dtype_out{k}"] = seg.node.out.dtype
            ins = ", ".join(names[s] for s in seg.in_slots)
            lines.append(f"    {names[seg.out_slot]} = asarray(lib{k}({ins}, **params{k}), "
                         f"dtype_out{k})")
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
    donated_to, refused = _donation_slots(graph, partition, donate, arg_names)
    if refused:
        warnings.warn(DonationWarning("Some donated buffers were not usable: " +
                                      ", ".join(refused)), stacklevel=5)
    allocations = []
    next_slot = len(graph.inputs) + len(constants)
    for step in partition.steps:
        written = step.writes if isinstance(step, Kernel) else (step.node.out,)
        for v in written:
            if v not in slot:
                slot[v] = next_slot
                # library results arrive from the call: their slot starts empty (donor -2)
                donor = -2 if isinstance(step, LibraryCall) else donated_to.get(v, -1)
                allocations.append((v.shape, v.dtype, donor))
                next_slot += 1

    segments: list = []
    pending: list[KernelCall] = []

    def flush() -> None:
        if not pending:
            return
        rendered = [c.rendered for c in pending]
        source, slots = cpu.render_module(rendered, [c.slots for c in pending],
                                           [bool(c.kernel.sizes) for c in pending])
        parallel = thread_count() > 1 and any(
            c.kernel.elements >= config.parallel_threshold for c in pending)
        segments.append(NativeSegment(list(pending), source, slots, parallel, stats))
        pending.clear()

    for step in partition.steps:
        if isinstance(step, Kernel):
            slots = [slot[v] for v in step.writes] + [slot[v] for v in step.reads]
            pending.append(KernelCall(step, cpu.render_kernel(step), slots))
        else:
            flush()
            segments.append(LibrarySegment(step.node, [slot[v] for v in step.node.inputs],
                                           slot[step.node.out]))
    flush()

    outputs = []
    for v in graph.outputs:
        node = producer.get(v)
        if node is not None and node.op is Op.CONST:
            outputs.append(("const", node.param["value"].array))  # copied on every return
        else:
            outputs.append(("slot", slot[v]))
    return Plan(len(graph.inputs), constants, allocations, segments, outputs,
                {i: slot[o] for o, i in donated_to.items()},
                [s.source for s in segments if isinstance(s, NativeSegment)],
                [s for s in partition.steps if isinstance(s, Kernel)])
