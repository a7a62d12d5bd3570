"""Running a plan on a CUDA device.

All kernel steps of a plan are rendered into one generated module, imported through the
disk cache and compiled when the plan is built (on the simulator nothing compiles: it runs
the Python functions). Running is the shared run loop (``executor.run_plan``) on device
arrays: it allocates outputs and intermediates (reusing donated inputs and dead
intermediates as the plan says), launches each kernel, runs library steps and loops between
them, and returns device arrays: nothing goes back to the host
unless a library call or a loop's condition needs it.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from numba import cuda

from ...executor import Scheduled, run_loop, run_plan, store_results
from ...plan import KernelStep, LoopStep, Plan
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from .arrays import result
from .codegen import module_source, render_kernel
from .device import device_pointer, has_warp_shuffles, simulated, to_device, to_host
from .kernels import KernelRun
from .launch import LaunchRule
from .library import LibraryRun
from .target import cache_key_fields


class LoopRun:
    """A ``WHILE`` loop: its condition and body plans run from the host; the condition's
    value is read back once per iteration, except where the trip count was known while
    tracing (``fori_loop`` with static bounds): then the body runs that often, and nothing
    waits for the device."""

    def __init__(self, step: LoopStep, cond: "CudaExecutable", body: "CudaExecutable"):
        self.in_slots = list(step.in_slots)
        self.out_slots = list(step.out_slots)
        self.n_carry, self.n_cond = step.n_carry, step.n_cond_consts
        self.cond, self.body = cond, body
        self.trip_count = step.trip_count
        self.sources = cond.sources + body.sources
        self.report = ("from the host, one launch sequence per iteration" +
                       (", the trip count known (no read-back)" if step.trip_count is not None
                        else ", the condition read back each iteration"))

    def compile(self, stats: CompileStats) -> None:
        self.cond.compile(stats)
        self.body.compile(stats)

    def __call__(self, bufs: list) -> None:
        store_results(bufs, self.out_slots, run_loop(
            self.cond, self.body, [bufs[s] for s in self.in_slots], self.n_carry,
            self.n_cond, self.trip_count, _device_truth))


class CudaDevice:
    """numba-cuda device arrays (``executor.Device``)."""

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        return cuda.device_array(shape, dtype)

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x if tuple(x.shape) == tuple(shape) else x.reshape(shape)

    def copy(self, x: Any) -> Any:
        out = cuda.device_array(x.shape, x.dtype)
        out.copy_to_device(x)
        return out

    def overlap(self, a: Any, b: Any) -> bool:
        (lo, hi), (b_lo, b_hi) = device_pointer(a), device_pointer(b)
        return lo < b_hi and b_lo < hi

    def output(self, x: Any) -> Any:
        return result(x)

    def constant(self, value: np.ndarray) -> Any:
        return result(cuda.to_device(np.array(value)))


DEVICE = CudaDevice()


class CudaExecutable:
    """A plan's kernels rendered for the current CUDA device; ``compile`` compiles them for
    it (on the simulator nothing compiles: it runs the Python functions)."""

    fast_run: Callable | None = None

    def __init__(self, plan: Plan, rule: LaunchRule):
        self.plan = plan
        self.runs: list = []
        self.schedule: list[Scheduled] = []
        self.launches: list[KernelRun] = []
        for step, mem in zip(plan.steps, plan.memory):
            run: KernelRun | LoopRun | LibraryRun
            if isinstance(step, KernelStep):
                run = KernelRun(step.kernel, render_kernel(step.kernel, rule.threads,
                                                           has_warp_shuffles()),
                                list(step.slots), rule)
                self.launches.append(run)
            elif isinstance(step, LoopStep):
                run = LoopRun(step, CudaExecutable(step.cond, rule),
                              CudaExecutable(step.body, rule))
            else:
                run = LibraryRun(step)
            self.runs.append(run)
            self.schedule.append(Scheduled.of(run, mem, step))
        self.sources: list[str] = []
        if self.launches:
            self.sources.append(module_source([launch.rendered for launch in self.launches],
                                              simulated()))
        for run in self.runs:
            if isinstance(run, LoopRun):
                self.sources.extend(run.sources)
        self.loops = [run.report for run in self.runs if isinstance(run, LoopRun)]
        self.constants: list = []
        self.compiled = False

    def compile(self, stats: CompileStats) -> None:
        if self.compiled:
            return
        if self.launches:
            loaded = compiler.load_module(self.sources[0], cache_key_fields())
            for launch in self.launches:
                compiles = stats.compiles
                launch.compile(loaded, stats, simulated())
                stats.kernel_built(compiles)
        for run in self.runs:
            if isinstance(run, LoopRun):
                run.compile(stats)
        self.constants = [cuda.to_device(c) for c in self.plan.constants]
        self.compiled = True

    def run(self, args: Sequence[Any]) -> list[Any]:
        return run_plan(self.plan, self.schedule, self.constants, DEVICE,
                        [to_device(a) for a in args])


def _device_truth(x: Any) -> bool:
    return bool(to_host(x))
