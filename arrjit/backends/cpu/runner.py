"""Running a plan on the CPU: its runs (``steps``, ``loops``) and the hot-path runner.

``CpuExecutable`` renders a plan: consecutive kernel steps become one ``KernelRun`` (each
kernel its own native module), every library step a ``LibraryRun``, every loop a ``LoopRun``
(whose condition and body are ``CpuExecutable``s of their own plans). ``compile`` compiles
every kernel through the disk cache; nothing compiles when it runs (but the thread workers
that compile in the background after a first call: ``steps._worker_later``). Running is the shared
run loop (``executor.run_plan``) on NumPy arrays, outputs and intermediates taken from the
buffer pool (``runtime.pool``: warm pages, and faster than allocating inside numba), or the
straight-line runner ``make_runner`` generates for the hot path. Kernels over many elements
are split across threads (``threads``, ``dispatch``).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from ...executor import HostDevice, Scheduled, run_plan
from ...memory import StepMemory
from ...plan import KernelStep, LoopStep, OutputKind, Plan, Step
from ...runtime import background
from ...runtime import cache as disk
from ...runtime import pool as buffers
from ...runtime import compile as compiler
from ...runtime import workers
from ...runtime.compile import CompileStats
from . import codegen as cpu
from . import entries
from .loops import LoopRun
from .steps import KernelCall, KernelRun, LibraryRun, compile_in_worker
from .target import cache_key_fields

POOLED = HostDevice(buffers.empty)


def example_buffers(plan: Plan) -> list:
    """One array per slot with that slot's type as the compiled code sees it: the constants
    themselves (read-only), and empty C-contiguous arrays of each other slot's dtype and
    rank (entry points do not check the read-only flag, so inputs of either kind share one)."""
    examples: list = [np.empty((0,) * len(a.shape), a.dtype) for a in plan.slot_avals]
    examples[plan.n_inputs:plan.n_inputs + len(plan.constants)] = plan.constants
    return examples


def _group_steps(plan: Plan) -> list[tuple[list[Step], StepMemory]]:
    """The plan's steps grouped into runs: consecutive kernels share one run (allocated
    before it, released after it); every other step is a run of its own."""
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
    """A plan's runs, rendered; ``compile`` compiles them, ``run`` executes them on NumPy
    arrays."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.runs: list = []
        self.schedule: list[Scheduled] = []
        for steps, mem in _group_steps(plan):
            first = steps[0]
            run: KernelRun | LoopRun | LibraryRun
            if isinstance(first, KernelStep):
                run = KernelRun([KernelCall(s.kernel, cpu.render_kernel(s.kernel), list(s.slots))
                                 for s in steps if isinstance(s, KernelStep)])
            elif isinstance(first, LoopStep):
                # the loop compiles only what its way of running needs
                run = LoopRun(first, CpuExecutable(first.cond), CpuExecutable(first.body))
            else:
                run = LibraryRun(first, plan.slot_avals)
            self.runs.append(run)
            self.schedule.append(Scheduled.of(run, mem, first))
        self.sources = [text for run in self.runs for text in run.sources]
        self.loops = [run.report for run in self.runs if isinstance(run, LoopRun)]
        self.fast_run: Callable | None = None
        self.compiled = False

    @property
    def memory(self) -> list[StepMemory]:
        """Per run: its allocations before it, its releases after it."""
        return [scheduled.memory for scheduled in self.schedule]

    def compile(self, stats: CompileStats) -> None:
        if self.compiled:
            return
        with background.holding():   # workers compile once every kernel has
            self._compile(stats)

    def _compile(self, stats: CompileStats) -> None:
        examples = example_buffers(self.plan)
        units: list[tuple[str | None, Callable[[], None]]] = []   # (module source, compile)
        for run in self.runs:
            if isinstance(run, KernelRun):
                units += [(source, partial(run.compile_call, k, examples, stats))
                          for k, source in enumerate(run.modules)]
            elif isinstance(run, LoopRun):
                units.append((run.native.source if run.native is not None else None,
                              partial(run.compile, examples, stats)))
            elif run.sources:
                units.append((run.sources[0], partial(run.compile, examples, stats)))
        if not compile_ahead(self.runs, examples):
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
        self.compiled = True

    def run(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        if self.fast_run is not None:
            return self.fast_run(args)
        return run_plan(self.plan, self.schedule, self.plan.constants, POOLED, args)


# Uncached modules that are worth starting workers for: a worker needs about a second to start
# (Python, arrjit, numba), the time the caller takes for about this many kernels.
MODULES_TO_START_WORKERS = 5


def compile_ahead(runs: list, examples: list) -> bool:
    """Hand the kernel modules and loop drivers that are not compiled yet to the compile
    workers (``runtime.workers``), when there are two or more, the disk cache is on, workers
    are configured, and they are running or there are enough to be worth starting them
    (``MODULES_TO_START_WORKERS``; a smaller program does not start them). True
    when some were handed over: the caller then compiles from the last one (the workers from
    the first) and loads what they have stored."""
    if workers.worker_count() == 0 or not entries.native_in_use() \
            or disk.open_cache(cache_key_fields()) is None:
        return False   # workers hand over native entries through the disk cache
    jobs = list({source: (source, specs) for run in runs
                 for source, specs in run.jobs(examples)}.values())
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
    with its buffers (a kernel that may run on threads through its run's ``run_call``, which
    settles its thread count), drop dead buffers, return the outputs. ``None`` (keep the
    generic path) for plans with donations, which must check argument aliasing."""
    plan = executable.plan
    if plan.donated_inputs:
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
    for k, (run, mem) in enumerate(zip(executable.runs, executable.memory)):
        for a in mem.allocs:
            ns[f"shape{a.slot}"], ns[f"dtype{a.slot}"] = a.shape, a.dtype
            if a.donor >= 0:
                lines.append(f"    {names[a.slot]} = x{a.donor}")
            elif a.reuse >= 0:
                lines.append(f"    {names[a.slot]} = {names[a.reuse]}.reshape(shape{a.slot})")
            else:
                lines.append(f"    {names[a.slot]} = empty(shape{a.slot}, dtype{a.slot})")
        if isinstance(run, KernelRun):
            for j, call in enumerate(run.calls):
                operands = [names[s] for s in call.slots]
                if run.parallel and (call.split or call.chunked):
                    ns[f"run{k}"], ns[f"call{k}_{j}"] = run, call
                    lines.append(f"    run{k}.run_call(call{k}_{j}, [{', '.join(operands)}])")
                    continue
                ns[f"entry{k}_{j}"], ns[f"P{k}_{j}"] = call.entry, call.rendered.params
                args = operands + [f"P{k}_{j}", "0", str(call.extent)]
                lines.append(f"    entry{k}_{j}({', '.join(args)})")
        elif isinstance(run, LibraryRun):
            ns[f"run{k}"] = run
            ins = ", ".join(names[s] for s in run.in_slots)
            outs = ", ".join(names[s] for s in run.out_slots)
            comma = "," if len(run.out_slots) > 1 else ""
            lines.append(f"    {outs}{comma} = run{k}.compute({ins})")
        else:  # a loop: several results
            ns[f"run{k}"] = run
            ins = ", ".join(names[s] for s in run.in_slots)
            outs = ", ".join(names[s] for s in run.out_slots)
            lines.append(f"    {outs}, = run{k}.compute({ins})")
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
