"""The target-neutral plan: buffer slots, launch order, lifetimes and donation proofs.

A plan is built once per call signature from the lowered program (``passes.lower``). Every
value that lives in memory gets a slot: the inputs first, then the constants, then what the
steps write. Each step names its slots; ``memory`` says, per step, which buffers to allocate
before it (fresh, a donated input, or a dead intermediate of the same size and dtype) and
which to drop after it. A backend (``backends``) turns the plan into something it can run;
the plan imports no backend.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Sequence, Union

import numpy as np

from .core.dtypes import Aval
from .core.ir import Node, Op, Var
from .errors import DonationWarning
from .memory import StepMemory, in_place_scatters, plan_buffers, plan_donations
from .passes.kernel import Kernel, LibraryCall
from .passes.lower import Lowered


@dataclass(frozen=True)
class KernelStep:
    """A fused loop nest; ``slots`` are its written buffers, then its read buffers."""

    kernel: Kernel
    slots: tuple[int, ...]


@dataclass(frozen=True)
class LibraryStep:
    """A library call (``core.library``); its results become the buffers in ``out_slots``.
    ``in_place_donor`` >= 0 marks a scatter that may update that donated input in place;
    ``in_perms`` reads an operand transposed (``numpy.transpose(buffer, perm)``; None: as it
    is)."""

    node: Node
    in_slots: tuple[int, ...]
    out_slots: tuple[int, ...]             # one per result (``node.outs``)
    in_place_donor: int = -1
    in_perms: tuple[tuple[int, ...] | None, ...] = ()
    in_place_temporary: bool = False   # a scatter into a computed value nothing else reads
    in_range: tuple[int, ...] = ()     # axes at 0-d positions known in range (``LibraryCall``)
    rows_from: int = -1                # the slot of ``LibraryCall.rows_from`` (-1: none)

    @property
    def in_place(self) -> bool:
        """Whether this (scatter) step updates its first operand's buffer in place."""
        return self.in_place_donor >= 0 or self.in_place_temporary

    @property
    def read_slots(self) -> tuple[int, ...]:
        """Every slot a native rendering reads: the operands, then ``rows_from``'s."""
        return self.in_slots + ((self.rows_from,) if self.rows_from >= 0 else ())


@dataclass(frozen=True)
class LoopStep:
    """A ``WHILE`` loop whose condition and body are plans of their own."""

    node: Node
    in_slots: tuple[int, ...]
    out_slots: tuple[int, ...]
    cond: "Plan"
    body: "Plan"

    @property
    def n_carry(self) -> int:
        return int(self.node.param["n_carry"])

    @property
    def n_cond_consts(self) -> int:
        return int(self.node.param["n_cond_consts"])

    @property
    def trip_count(self) -> int | None:
        """The iteration count when tracing knew it (fori_loop with static bounds)."""
        trips = self.node.param.get("trip_count")
        return None if trips is None else int(trips)


Step = Union[KernelStep, LibraryStep, LoopStep]


class OutputKind(Enum):
    SLOT = "slot"          # a slot's buffer
    VIEW = "view"          # a slot's buffer reshaped
    CONSTANT = "constant"  # a constant array, copied on every return


@dataclass(frozen=True)
class PlanOutput:
    """One result of a plan: a slot's buffer, viewed in another shape or not, or a constant.

    >>> PlanOutput.view(3, (2, 2)).kind, PlanOutput.of_slot(1).slot
    (<OutputKind.VIEW: 'view'>, 1)
    """

    kind: OutputKind
    slot: int = -1                          # SLOT, VIEW
    shape: tuple[int, ...] = ()             # VIEW: the shape the buffer is viewed as
    value: np.ndarray | None = None         # CONSTANT

    @staticmethod
    def of_slot(slot: int) -> "PlanOutput":
        return PlanOutput(OutputKind.SLOT, slot)

    @staticmethod
    def view(slot: int, shape: tuple[int, ...]) -> "PlanOutput":
        return PlanOutput(OutputKind.VIEW, slot, shape)

    @staticmethod
    def constant(value: np.ndarray) -> "PlanOutput":
        return PlanOutput(OutputKind.CONSTANT, value=value)


@dataclass
class Plan:
    n_inputs: int
    constants: list[np.ndarray]
    slot_avals: list[Aval]                  # the shape and dtype of every slot
    steps: list[Step]
    memory: list[StepMemory]                # per step: allocations before, releases after
    outputs: list[PlanOutput]
    donated_inputs: dict[int, int] = field(default_factory=dict)  # input index -> output slot

    @property
    def n_slots(self) -> int:
        return len(self.slot_avals)

    @property
    def kernels(self) -> list[Kernel]:
        """The fused loop nests of this plan (not those inside loops)."""
        return [s.kernel for s in self.steps if isinstance(s, KernelStep)]


def build_plan(lowered: Lowered, *, donate: Sequence[int] = (),
               arg_names: Sequence[str] = ()) -> Plan:
    """Slots, steps, donations and buffer lifetimes for a lowered program."""
    graph, partition = lowered.graph, lowered.partition
    slot: dict[Var, int] = {v: k for k, v in enumerate(graph.inputs)}
    slot_avals: list[Aval] = [v.aval for v in graph.inputs]
    constants: list[np.ndarray] = []
    producer = {n.out: n for n in graph.nodes}
    for v in sorted(partition.buffers, key=lambda v: v.id):
        node = producer.get(v)
        if node is not None and node.op is Op.CONST and v not in slot:
            slot[v] = len(slot_avals)
            slot_avals.append(v.aval)
            constants.append(node.param["value"].array)
    fused = list(partition.steps)
    donations = plan_donations(graph, fused, donate, arg_names, partition.aliases)
    if donations.refused:
        warnings.warn(DonationWarning("Some donated buffers were not usable: " +
                                      ", ".join(donations.refused)), stacklevel=5)
    for fused_step in fused:
        written = fused_step.writes if isinstance(fused_step, Kernel) else fused_step.node.outs
        for v in written:
            if v not in slot and v not in partition.aliases:
                slot[v] = len(slot_avals)
                slot_avals.append(v.aval)
    for v, holder in partition.aliases.items():   # in order: a holder precedes its aliases
        slot[v] = slot[holder]

    in_place = in_place_scatters(graph, fused, donations)
    steps: list[Step] = []
    for k, fused_step in enumerate(fused):
        if isinstance(fused_step, Kernel):
            slots = tuple(slot[v] for v in fused_step.writes + fused_step.reads)
            steps.append(KernelStep(fused_step, slots))
            continue
        node = fused_step.node
        ins = tuple(slot[v] for v in fused_step.operands)
        if node.op is Op.WHILE:
            loop = lowered.loops[k]
            steps.append(LoopStep(node, ins, tuple(slot[v] for v in node.outs),
                                  build_plan(loop.cond), build_plan(loop.body)))
        else:
            steps.append(LibraryStep(node, ins, tuple(slot[v] for v in node.outs),
                                     donations.scatters.get(k, -1),
                                     fused_step.perms, k in in_place,
                                     fused_step.in_range,
                                     -1 if fused_step.rows_from is None
                                     else slot[fused_step.rows_from]))

    outputs: list[PlanOutput] = []
    for v in graph.outputs:
        node = producer.get(v)
        if node is not None and node.op is Op.CONST:
            outputs.append(PlanOutput.constant(node.param["value"].array))
        else:
            outputs.append(PlanOutput.of_slot(slot[v]) if v.shape == slot_avals[slot[v]].shape
                           else PlanOutput.view(slot[v], v.shape))
    keep = {o.slot for o in outputs if o.kind is not OutputKind.CONSTANT}
    pinned = frozenset(slot[fused[k].node.inputs[0]] for k in in_place)  # type: ignore[union-attr]
    memory = plan_buffers([[s] for s in fused], slot, keep, donations.outputs, pinned)
    donated_inputs = {i: slot[o] for o, i in donations.outputs.items()}
    for k, i in donations.scatters.items():
        scatter = fused[k]
        assert isinstance(scatter, LibraryCall)
        donated_inputs[i] = slot[scatter.node.out]
    return Plan(len(graph.inputs), constants, slot_avals, steps, memory, outputs,
                donated_inputs)


def _host_overlap(a: Any, b: Any) -> bool:
    return isinstance(b, np.ndarray) and np.shares_memory(a, b)


def aliased_donors(plan: Plan, args: Sequence[Any],
                   overlap: Callable[[Any, Any], bool] = _host_overlap) -> set[int]:
    """Donated arrays that are also passed as another argument are still read through that
    argument: their outputs go to fresh buffers instead (with a warning). ``overlap`` tells
    whether two arguments share memory (NumPy's test by default; a backend passes its own)."""
    aliased = set()
    for i in plan.donated_inputs:
        if any(j != i and overlap(args[i], a) for j, a in enumerate(args)):
            aliased.add(i)
            warnings.warn(DonationWarning(
                f"Some donated buffers were not usable: {_describe(args[i])} (argument "
                f"{i} is also passed as another argument)"), stacklevel=5)
    return aliased


def _describe(a: Any) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"
