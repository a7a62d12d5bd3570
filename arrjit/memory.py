"""Memory planning: which donated inputs may hold outputs, and which buffers intermediates
share.

Donation is proven per kernel: a donated input may be overwritten by an output of the kernel
that writes it only if every read of the input in that kernel is at the index being written,
and no later step reads the input. A scatter (``x.at[...]``) of a donated input that nothing
reads afterwards updates it in place.

Buffers: an intermediate's buffer is allocated just before the run that first writes it,
released after the step that last reads it, and handed to a later intermediate of the same
size and dtype, so peak memory stays near inputs + outputs + the largest live intermediates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Sequence

import numpy as np

from .passes.kernel import Affine, Kernel, LibraryCall, Load
from .core.ir import Graph, Op, Var


@dataclass
class Donations:
    outputs: dict[Var, int] = field(default_factory=dict)      # kernel output -> input index
    scatters: dict[int, int] = field(default_factory=dict)     # step index -> input index
    refused: list[str] = field(default_factory=list)


def _reads(step) -> tuple[Var, ...]:
    return step.reads if isinstance(step, Kernel) else step.operands


def _read_mismatch(load: Affine, store: Affine, kernel: Kernel) -> str:
    if kernel.n_outer is not None:
        return "reduced"
    if load.coefs == store.coefs:
        return "read at a shifted index"
    if [abs(c) for c in load.coefs] == [abs(c) for c in store.coefs]:
        return "read in reverse order"
    if sorted(map(abs, load.coefs)) == sorted(map(abs, store.coefs)):
        return "read transposed"
    return "read at a different index (broadcast or strided)"


def _same_index(a: Affine, b: Affine) -> bool:
    return (a.offset == b.offset and a.coefs == b.coefs and a.wraps == b.wraps
            and a.positions == b.positions)


def _unsafe(var: Var, store: Affine, kernel: Kernel, later: Sequence) -> str | None:
    """Why writing ``store`` of ``kernel`` into ``var``'s buffer could change a result."""
    if var in kernel.reads:
        idx = kernel.reads.index(var)
        for stmt in kernel.stmts:
            if isinstance(stmt, Load) and not stmt.own_output and stmt.buffer == idx and (
                    not _same_index(stmt.access, store) or kernel.n_outer is not None):
                return _read_mismatch(stmt.access, store, kernel)
    if any(var in _reads(step) for step in later):
        return "another output still needs its old values"
    return None


def plan_donations(graph: Graph, steps: Sequence, donate: Sequence[int],
                   arg_names: Sequence[str], in_place: Collection[Var] = ()) -> Donations:
    """Assign donated inputs to outputs they can safely hold. The k-th donated leaf prefers
    the k-th output (so ``state = step(state)`` keeps each leaf in its own buffer); values
    ``in_place`` (region updates) already live in a buffer of their own."""
    result = Donations()
    outputs = list(graph.outputs)
    for position, i in enumerate(donate):
        var = graph.inputs[i]
        name = arg_names[i] if i < len(arg_names) else str(i)
        if var in outputs:
            result.refused.append(f"{var.aval} (argument {name!r}: it is returned unchanged)")
            continue
        reason = "no output has its shape and dtype"
        candidates = []
        for k, step in enumerate(steps):
            if isinstance(step, LibraryCall):
                node = step.node
                if (node.op is Op.SCATTER and node.inputs[0] == var and node.out in outputs
                        and var not in node.inputs[1:] and k not in result.scatters):
                    candidates.append((outputs.index(node.out) != position, k, node.out, None))
                continue
            for b, out_var in enumerate(step.writes):
                stores = [s for s in step.stores if s.buffer == b]
                if (out_var in outputs and out_var not in result.outputs
                        and out_var not in in_place and len(stores) == 1
                        and out_var.shape == var.shape and out_var.dtype == var.dtype):
                    candidates.append((outputs.index(out_var) != position, k, out_var,
                                       stores[0]))
        placed = False
        for _, k, out_var, store in sorted(candidates, key=lambda c: (c[0], c[1])):
            if store is None:  # an in-place scatter
                if any(var in _reads(s) for s in steps[k + 1:]):
                    reason = "another output still needs its old values"
                    continue
                result.scatters[k] = i
            else:
                why = _unsafe(var, store.access, steps[k], steps[k + 1:])
                if why is not None:
                    reason = why
                    continue
                result.outputs[out_var] = i
            placed = True
            break
        if not placed:
            result.refused.append(f"{var.aval} (argument {name!r}: {reason})")
    return result


def in_place_scatters(graph: Graph, steps: Sequence, donations: Donations) -> set[int]:
    """Steps of scatters (``x.at[...]``) that may update ``x`` in place without a donation:
    ``x`` is a value this program computed into a buffer of its own (a kernel's output, or
    such a scatter's), it is not an output, and no later step reads it."""
    fresh = {v for step in steps if isinstance(step, Kernel) for v in step.writes}
    outputs = set(graph.outputs)
    last_read: dict[Var, int] = {}
    for k, step in enumerate(steps):
        for v in _reads(step):
            last_read[v] = k
    found: set[int] = set()
    for k, step in enumerate(steps):
        if not (isinstance(step, LibraryCall) and step.node.op is Op.SCATTER):
            continue
        x = step.node.inputs[0]
        if (k not in donations.scatters and x in fresh and x not in outputs
                and x not in step.node.inputs[1:] and last_read.get(x, -1) <= k):
            found.add(k)
            fresh.add(step.node.out)
    return found


@dataclass(frozen=True)
class Alloc:
    slot: int
    shape: tuple[int, ...]
    dtype: np.dtype
    donor: int = -1       # input index whose array is used, or -1
    reuse: int = -1       # slot whose dead buffer is reused (reshaped), or -1


@dataclass
class StepMemory:
    allocs: list[Alloc] = field(default_factory=list)   # before the run
    release: list[int] = field(default_factory=list)    # slots dropped after it


def plan_buffers(runs_steps: Sequence[Sequence], slot: dict[Var, int],
                 keep: set[int], donated: dict[Var, int],
                 pinned: frozenset[int] = frozenset()) -> list[StepMemory]:
    """Allocation and release per run. ``runs_steps`` lists the fused steps each
    run executes (in order); ``keep`` are slots that must survive (outputs); ``pinned``
    slots' buffers live on in another slot (updated in place), so no later value gets
    them. Lifetimes are
    per step, so kernels inside one run share buffers too; references are
    dropped after the run in which a buffer dies."""
    flat = [(s, step) for s, steps in enumerate(runs_steps) for step in steps]
    last_use: dict[int, int] = {}
    first_def: dict[int, int] = {}
    written: dict[int, Var] = {}
    for t, (_, step) in enumerate(flat):
        for v in _reads(step):
            last_use[slot[v]] = t
        outs = step.writes if isinstance(step, Kernel) else step.node.outs
        for v in outs:
            first_def.setdefault(slot[v], t)
            last_use.setdefault(slot[v], t)
            if isinstance(step, Kernel):
                written[slot[v]] = v
    memory = [StepMemory() for _ in runs_steps]
    free: dict[tuple[int, str], list[int]] = {}
    reused: set[int] = set()
    dying: dict[int, list[int]] = {}
    for sl, t in last_use.items():
        dying.setdefault(t, []).append(sl)
    born: dict[int, list[int]] = {}
    for sl, t in first_def.items():
        if sl in written:
            born.setdefault(t, []).append(sl)
    for t, (s, step) in enumerate(flat):
        for sl in sorted(born.get(t, ())):
            v = written[sl]
            if v in donated:
                memory[s].allocs.append(Alloc(sl, v.shape, v.dtype, donor=donated[v]))
                continue
            key = (int(np.prod(v.shape, dtype=np.int64)), v.dtype.str)
            pool = free.get(key)
            reuse = pool.pop() if pool else -1
            if reuse >= 0:
                reused.add(reuse)
            memory[s].allocs.append(Alloc(sl, v.shape, v.dtype, reuse=reuse))
        for sl in dying.get(t, ()):
            if sl in keep or sl not in first_def:
                continue
            dead = written.get(sl)
            if dead is not None and dead not in donated and sl not in pinned:
                free.setdefault((int(np.prod(dead.shape, dtype=np.int64)), dead.dtype.str),
                                []).append(sl)
    for t, (s, _) in enumerate(flat):
        for sl in dying.get(t, ()):
            if sl not in keep and sl in first_def and sl not in reused:
                memory[s].release.append(sl)
    return memory
