"""Running a plan on a CUDA device.

All kernel steps of a plan are rendered into one generated module, imported through the
disk cache and compiled when the plan is built (on the simulator nothing compiles: it runs
the Python functions). Running allocates outputs and intermediates as device arrays (reusing
donated inputs and dead intermediates as the plan says), launches each kernel, runs library
calls and loops between them, and returns device arrays: nothing goes back to the host
unless a library call or a loop's condition needs it.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from numba import cuda

from ...plan import KernelStep, LoopStep, OutputKind, Plan, aliased_donors
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from .arrays import result
from .codegen import module_source, render_kernel
from .device import device_pointer, has_warp_shuffles, simulated, to_device, to_host
from .kernels import KernelLaunch
from .launch import LaunchRule
from .library import LibraryCall
from .target import cache_key_fields


class LoopCall:
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

    def compute(self, *operands: Any) -> tuple:
        n, m = self.n_carry, self.n_cond
        carry = list(operands[:n])
        cond_consts, body_consts = list(operands[n:n + m]), list(operands[n + m:])
        if self.trip_count is not None:
            for _ in range(self.trip_count):
                carry = self.body.run(carry + body_consts)
            return tuple(carry)
        while bool(to_host(self.cond.run(carry + cond_consts)[0])):
            carry = self.body.run(carry + body_consts)
        return tuple(carry)

    def __call__(self, bufs: list) -> None:
        for slot, value in zip(self.out_slots, self.compute(*(bufs[s] for s in self.in_slots))):
            bufs[slot] = value


class CudaExecutable:
    """A plan's kernels compiled for the current CUDA device."""

    fast_run: Callable | None = None

    def __init__(self, plan: Plan, stats: CompileStats, rule: LaunchRule):
        self.plan = plan
        self.steps: list = []
        launches: list[KernelLaunch] = []
        for step in plan.steps:
            if isinstance(step, KernelStep):
                launch = KernelLaunch(step.kernel, render_kernel(step.kernel, rule.threads, has_warp_shuffles()),
                                      list(step.slots), rule)
                launches.append(launch)
                self.steps.append(launch)
            elif isinstance(step, LoopStep):
                self.steps.append(LoopCall(step, CudaExecutable(step.cond, stats, rule),
                                           CudaExecutable(step.body, stats, rule)))
            else:
                self.steps.append(LibraryCall(step))
        self.sources: list[str] = []
        if launches:
            source = module_source([launch.rendered for launch in launches], simulated())
            self.sources.append(source)
            loaded = compiler.load_module(source, cache_key_fields())
            for launch in launches:
                compiles = stats.compiles
                launch.compile(loaded, stats, simulated())
                stats.kernel_built(compiles)
        for step in self.steps:
            if isinstance(step, LoopCall):
                self.sources.extend(step.sources)
        self.loops = [step.report for step in self.steps if isinstance(step, LoopCall)]
        self.constants = [cuda.to_device(c) for c in plan.constants]

    def run(self, args: Sequence[Any]) -> list[Any]:
        plan = self.plan
        args = [to_device(a) for a in args]
        bufs: list = list(args) + list(self.constants)
        bufs.extend([None] * (plan.n_slots - len(bufs)))
        aliased = aliased_donors(plan, args, _device_overlap) if plan.donated_inputs else set()
        for step, mem in zip(self.steps, plan.memory):
            for a in mem.allocs:
                if a.donor >= 0 and a.donor not in aliased:
                    bufs[a.slot] = args[a.donor]
                elif a.reuse >= 0:
                    bufs[a.slot] = _reshaped(bufs[a.reuse], a.shape)
                else:
                    bufs[a.slot] = cuda.device_array(a.shape, a.dtype)
            if isinstance(step, LibraryCall) and step.in_place_donor in aliased:
                step(bufs, in_place=False)
            else:
                step(bufs)
            for sl in mem.release:
                bufs[sl] = None
        return [result(bufs[o.slot] if o.kind is OutputKind.SLOT else
                       bufs[o.slot].reshape(o.shape) if o.kind is OutputKind.VIEW else
                       cuda.to_device(np.array(o.value)))
                for o in plan.outputs]


def _reshaped(x: Any, shape: tuple[int, ...]) -> Any:
    return x if tuple(x.shape) == tuple(shape) else x.reshape(shape)


def _device_overlap(a: Any, b: Any) -> bool:
    (lo, hi), (b_lo, b_hi) = device_pointer(a), device_pointer(b)
    return lo < b_hi and b_lo < hi
