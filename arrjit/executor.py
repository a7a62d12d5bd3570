"""Running a compiled plan: the one run loop that every target shares.

A backend compiles a plan (``plan.Plan``) into *runs*, one per step or per group of
consecutive kernel steps, each a callable on the plan's buffer list (one entry per slot)
that reads its operands' slots and writes its results' slots. ``run_plan`` executes them in
order: before each run it allocates what ``plan.memory`` says (a fresh buffer from the
target, a donated argument, or a dead intermediate reshaped), after it drops the buffers
nothing reads any more, and at the end it returns the plan's outputs. The target supplies
its buffers through a ``Device``. ``run_loop`` runs a ``WHILE`` loop's condition and body
plans from the host, for the loops a backend does not run in one native function.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.memory import Alloc, StepMemory
>>> from arrjit.plan import Plan, PlanOutput
>>> def double(bufs):
...     np.multiply(bufs[0], 2, out=bufs[1])
>>> plan = Plan(1, [], [Aval((3,), np.dtype("float64"))] * 2, [], [], [PlanOutput.of_slot(1)])
>>> memory = StepMemory([Alloc(1, (3,), np.dtype("float64"))], [])
>>> run_plan(plan, [Scheduled(double, memory)], [], HOST, [np.arange(3.0)])
[array([0., 2., 4.])]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from .memory import StepMemory
from .plan import LibraryStep, OutputKind, Plan, Step, aliased_donors

Run = Callable[[list], None]
"""A compiled step: reads its operands from the buffer list, writes its results into it."""


@dataclass(frozen=True)
class Scheduled:
    """A run and the buffers it needs: ``memory.allocs`` before it, ``memory.release``
    after it. ``in_place_donor`` >= 0: the run updates that donated argument in place (a
    scatter); where the argument is aliased, it updates a copy instead."""

    run: Run
    memory: StepMemory
    in_place_donor: int = -1

    @staticmethod
    def of(run: Run, memory: StepMemory, first: Step) -> "Scheduled":
        """``run`` of the plan steps starting with ``first``, with their ``memory``."""
        return Scheduled(run, memory,
                         first.in_place_donor if isinstance(first, LibraryStep) else -1)


class Device(Protocol):
    """What the run loop needs from a target's buffers."""

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        """An uninitialised buffer."""

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        """``x`` viewed in another shape of the same size."""

    def copy(self, x: Any) -> Any:
        """A buffer of its own holding ``x``'s values."""

    def overlap(self, a: Any, b: Any) -> bool:
        """Whether two arguments share memory."""

    def output(self, x: Any) -> Any:
        """A buffer as the program returns it."""

    def constant(self, value: np.ndarray) -> Any:
        """A constant output, fresh on every return."""


class CompiledPlan(Protocol):
    """A plan compiled by a backend (a loop's condition and body are compiled plans too)."""

    plan: Plan
    sources: list[str]          # the generated source of every module
    loops: list[str]            # how each top-level loop runs, and why

    def compile(self, stats: Any) -> None:
        """Compile what was rendered (when the plan is built; nothing compiles while it runs)."""

    def run(self, args: Sequence[Any]) -> list[Any]:
        """Run on buffers of the target (one per plan input); returns the outputs."""


class HostDevice:
    """NumPy arrays in host memory (``fresh`` allocates them)."""

    def __init__(self, fresh: Callable[[tuple[int, ...], np.dtype], np.ndarray] = np.empty):
        self._fresh = fresh

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return self._fresh(shape, dtype)

    def reshape(self, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return x.reshape(shape)

    def copy(self, x: np.ndarray) -> np.ndarray:
        return x.copy()

    def overlap(self, a: Any, b: Any) -> bool:
        return isinstance(b, np.ndarray) and np.shares_memory(a, b)

    def output(self, x: np.ndarray) -> np.ndarray:
        return x

    def constant(self, value: np.ndarray) -> np.ndarray:
        return np.array(value)


HOST = HostDevice()


def run_plan(plan: Plan, schedule: Sequence[Scheduled], constants: Sequence[Any],
             device: Device, args: Sequence[Any]) -> list[Any]:
    """Run ``schedule`` (the plan's compiled runs) on ``args``, one buffer per plan input;
    ``constants`` are the plan's constants as buffers of the target."""
    bufs: list = list(args) + list(constants)
    bufs.extend([None] * (plan.n_slots - len(bufs)))
    aliased = aliased_donors(plan, args, device.overlap) if plan.donated_inputs else set()
    for scheduled in schedule:
        for a in scheduled.memory.allocs:
            if a.donor >= 0 and a.donor not in aliased:
                bufs[a.slot] = args[a.donor]
            elif a.reuse >= 0:
                bufs[a.slot] = device.reshape(bufs[a.reuse], a.shape)
            else:
                bufs[a.slot] = device.empty(a.shape, a.dtype)
        if scheduled.in_place_donor in aliased:
            # the argument is also read through another argument: update a copy (the
            # donation proof says nothing reads this slot after the scatter)
            bufs[scheduled.in_place_donor] = device.copy(bufs[scheduled.in_place_donor])
        scheduled.run(bufs)
        for sl in scheduled.memory.release:
            bufs[sl] = None
    return [device.output(bufs[o.slot]) if o.kind is OutputKind.SLOT else
            device.output(device.reshape(bufs[o.slot], o.shape)) if o.kind is OutputKind.VIEW
            else device.constant(o.value) for o in plan.outputs]    # type: ignore[arg-type]


def store_results(bufs: list, out_slots: Sequence[int], results: Sequence[Any]) -> None:
    """Put a step's results (one per slot of ``out_slots``) into their slots."""
    for slot, value in zip(out_slots, results):
        bufs[slot] = value


def run_loop(cond: CompiledPlan, body: CompiledPlan, operands: Sequence[Any], n_carry: int,
             n_cond_consts: int, trip_count: int | None,
             truth: Callable[[Any], bool] = bool) -> tuple:
    """A ``WHILE`` loop run from the host: ``operands`` are the carries, the condition's
    constants, then the body's; ``truth`` reads the condition's 0-d result. Where the trip
    count was known while tracing (``fori_loop`` with static bounds) the body runs that often
    and the condition is not evaluated."""
    carry = list(operands[:n_carry])
    cond_consts = list(operands[n_carry:n_carry + n_cond_consts])
    body_consts = list(operands[n_carry + n_cond_consts:])
    body_run = body.run
    if trip_count is not None:
        for _ in range(trip_count):
            carry = body_run(carry + body_consts)
        return tuple(carry)
    cond_run = cond.run
    while truth(cond_run(carry + cond_consts)[0]):
        carry = body_run(carry + body_consts)
    return tuple(carry)
