"""Fusion: partition a simplified Graph into steps, each a loop nest (``Kernel``) or a library
call (``LibraryCall``).

A kernel computes one or more output values over one loop domain (their common shape). Values
it does not store are computed inside the loop from their inputs; views (broadcast, transpose,
slice, reshape) are composed into affine index maps, so they never copy. The kernel is data:
loads, computations, literals and stores over named SSA values. ``codegen`` renders it.

Which values are stored ("materialised"): graph outputs, operands and results of library
calls (a transposed matmul operand: the value it transposes, which BLAS reads as a view),
sources of a reshape that is not expressible as an index map, costly values that a
broadcast would otherwise recompute many times, and cuts in over-long chains (``sizes``).
"""
from __future__ import annotations

from typing import Mapping

from ..core.ir import (CONTROL_FLOW, ELEMENTWISE, LIBRARY_CALLS, REDUCTIONS, VIEWS, Graph, Node,
                       Op, Var)
from ..core.library import is_array_item
from ..core.rules import COSTLY
from .kernel import LibraryCall, Partition, Step
from .nest import NestBuilder
from .ranges import Bounds, within
from .regions import (MAX_REGION_STORES, Region, disjoint, find_regions, output_views,
                      placeable_reductions, reader_counts, reshapes_stored_as_regions,
                      unfilled_roots)
from .sizes import chain_cuts
from .views import (Positions, below_unit_reshapes, gather_positions, read_through,
                    same_ignoring_ones, transposed_source)

CALLS = LIBRARY_CALLS | CONTROL_FLOW  # steps run outside fused loop nests


class _Fuser:
    def __init__(self, graph: Graph, views_out: bool = True, positions: bool = False,
                 bounds: Mapping[Var, Bounds] | None = None):
        self.graph = graph
        self.bounds = bounds
        self.producer = {v: n for n in graph.nodes for v in n.outs}
        # gathers at run-time positions that fuse as views, by result, with their positions
        self.positioned: dict[Var, Positions] = {
            n.out: found for n in graph.nodes
            if positions and (found := gather_positions(n, self.producer)) is not None}
        self.stored: set[Var] = set(graph.inputs)
        self.call_views: dict[Var, tuple] = {}   # a call's output -> ``LibraryCall.views``
        self.readers = reader_counts(graph)
        self.regions: dict[Var, Region] = find_regions(graph, self.producer, self.readers,
                                                       CALLS, positions)
        # roots the regions fill entirely (no nest writes them), reshapes they store unshaped
        self.unfilled = unfilled_roots(graph, self.producer, self.regions)
        self.unshaped = reshapes_stored_as_regions(graph, self.regions)
        self.region_levels: dict[tuple[Var, int], list[Region]] = {}  # (root, level) -> stores
        # a reduction whose only reader is a region update that sets exactly its shape is
        # stored by its own kernel into the region (``placed``; the update has no nest)
        self.placeable = placeable_reductions(graph, self.producer, self.readers, self.regions)
        self.placed: dict[Var, Region] = {}
        self.views_out = views_out
        self.views: dict[Var, Var] = {}   # an output -> the stored value it is a reshape of
        for n in graph.nodes:
            if n.op is Op.CONST and n.out.ndim > 0:
                self.stored.add(n.out)

    # -- deciding what lives in memory -------------------------------------------------------
    def choose_stored(self) -> None:
        for v in self.graph.outputs:
            self.stored.add(v)
        for n in self.graph.nodes:
            if n.op in REDUCTIONS:
                self.stored.add(n.out)
            elif n.out in self.regions:
                self.stored.update((n.out, n.inputs[0]))
                # run-time positions are read from buffers, as a positioned view's are
                self.stored.update(index for _, index, _ in self.regions[n.out].positions)
            elif n.out in self.positioned:
                # a view of positions: they (a window's start) are read from buffers
                self.stored.update(v for v, _ in self.positioned[n.out].values())
            elif n.op in CALLS:
                self.stored.update(n.outs)
                views = tuple(self._transposed_operand(n, v) for v in n.inputs)
                if any(views):
                    self.call_views[n.out] = views
                self.stored.update(self.operands(n))
            elif (n.op is Op.RESHAPE and n.out not in self.unshaped
                  and not same_ignoring_ones(n.inputs[0].shape, n.out.shape)):
                self._store_unflattenable(n.inputs[0])
            elif n.op is Op.BROADCAST and n.out.aval.size > n.inputs[0].aval.size:
                # below reshapes that only add or drop ones, so the stored value can join a
                # row kernel as a row-level value
                src = below_unit_reshapes(n.inputs[0], self.producer)
                if src.ndim > 0 and self._has_costly(src):
                    self.stored.add(src)
        self.cuts = chain_cuts(self.graph, self.stored)
        self.stored |= self.cuts
        if self.views_out:
            candidates = output_views(self.graph, self.producer, self.readers, CALLS,
                                      self.regions)
            self.views = {out: src for out, src in candidates.items() if src in self.stored}

    def _transposed_operand(self, call: Node, var: Var) -> tuple[Var, tuple[int, ...]] | None:
        """``(base, perm)`` when a matmul operand is transposes of a value ``base``."""
        return transposed_source(var, self.producer) if call.op is Op.MATMUL else None

    def operands(self, call: Node) -> tuple[Var, ...]:
        """The stored values a call reads (a transposed matmul operand: its base)."""
        views = self.call_views.get(call.out)
        if views is None:
            return call.inputs
        return tuple(v if view is None else view[0] for v, view in zip(call.inputs, views))

    def _store_unflattenable(self, var: Var) -> None:
        """A general reshape reads its source by flat C-order index. That works through
        elementwise nodes and reshapes, but not through other views of n-d values: where
        ``var`` is computed through one, ``var`` itself is stored (each such view has its
        size, so storing one of them costs as much as storing ``var``, and there may be
        several: the pieces of a stack)."""
        stack, seen = [var], set()
        while stack:
            v = stack.pop()
            if v in seen or v in self.stored or v.ndim <= 1:
                continue
            seen.add(v)
            node = self.producer.get(v)
            if node is None:
                continue
            if node.op in (Op.BROADCAST, Op.TRANSPOSE, Op.SLICE, Op.ROLL, Op.GATHER):
                if not (node.op is Op.BROADCAST and node.inputs[0].ndim == 0):
                    self.stored.add(var)
                    return
                continue
            stack.extend(node.inputs)

    def _has_costly(self, var: Var) -> bool:
        """Whether computing ``var`` per element costs more than reading it. Work on 0-d
        values is loop-invariant (LLVM hoists it), so it does not count."""
        stack, seen = [var], set()
        while stack:
            v = stack.pop()
            if v in seen or v in self.stored or v.ndim == 0:
                continue
            seen.add(v)
            node = self.producer.get(v)
            if node is None:
                continue
            if COSTLY.get(node.op, False):
                return True
            stack.extend(node.inputs)
        return False

    # -- ordering stored values into steps ---------------------------------------------------
    def levels(self) -> dict[Var, int]:
        """Step level of each stored value. A value read only elementwise (same index) by a
        value of the same shape can share its loop nest; so can a value that reads, row by
        row, a reduction over trailing axes of its own shape (a later pass of one row
        kernel, see ``_join_row``); any other read needs a later step."""
        level: dict[Var, int] = {}
        self.row_domain: dict[Var, tuple[tuple[int, ...], int]] = {}
        self.stage: dict[Var, int] = {}   # row members: pass (reductions, elementwise) or gap
        self.ready: dict[Var, int] = {}   # row-level members: the first pass that may use them
        for v in self.graph.inputs:
            level[v] = -1
        for n in self.graph.nodes:
            v = n.out
            if v not in self.stored:
                continue
            if n.op is Op.CONST:
                level[v] = -1
            elif v in self.regions:
                region = self.regions[v]
                level[v] = (level[region.updates] if region.updates in self.placed
                            else self._region_level(region, level))
            elif self._called(n):
                for out in n.outs:
                    level[out] = max((level[i] for i in self.operands(n)), default=-1) + 1
            else:
                deps = self._stored_dependencies(v)
                joined = self._join_row(v, n, deps, level)
                level[v] = (joined if joined is not None
                            else self._separate_level(v, n, deps, level))
                into = self.placeable.get(v)
                if joined is None and into is not None and into.base in level:
                    level[v] = self._claim(into, max(level[v], self._after_base(into, level)))
                    self.placed[v] = into
        return level

    def _region_level(self, region: Region, level: dict[Var, int]) -> int:
        """After what ``v`` reads, after the value it updates (or with it, where that is an
        update of the same buffer), and at a level where it overlaps no other update of the
        buffer: updates at one level run in one nest or in any order."""
        v = region.updates
        deps = [v] if v in self.stored else [d for d, _ in self._stored_dependencies(v)]
        deps += [index for _, index, _ in region.positions]
        return self._claim(region, max([level[d] + 1 for d in deps] +
                                       [self._after_base(region, level)]))

    def _after_base(self, region: Region, level: dict[Var, int]) -> int:
        """The first level at which ``region`` may be stored into its base's buffer."""
        return level[region.base] + (0 if region.base in self.regions else 1)

    def _claim(self, region: Region, lv: int) -> int:
        """The first level from ``lv`` on where ``region`` overlaps no other store into its
        buffer (stores at one level run in one nest or in any order); taken."""
        while True:
            placed = self.region_levels.setdefault((region.root, lv), [])
            if len(placed) < MAX_REGION_STORES and all(disjoint(region, r) for r in placed):
                placed.append(region)
                return lv
            lv += 1

    def _separate_level(self, v: Var, n: Node, deps, level) -> int:
        if n.op in REDUCTIONS:
            lv = max((level[d] + 1 for d, _ in deps), default=0)
            domain = _row_domain(n)
            if domain is not None:                  # starts a row kernel
                self.row_domain[v], self.stage[v], self.ready[v] = domain, 0, 1
            return lv
        lv = 0
        for dep, tag in deps:
            dep_node = self.producer.get(dep)
            # a value a row kernel computes (in one of its passes) is only in memory after
            # that kernel: a plain loop nest at its level could run first
            shares_loop = (tag == "same" and dep.shape == v.shape and dep not in self.cuts
                           and dep not in self.row_domain
                           and dep_node is not None and dep_node.op in ELEMENTWISE | VIEWS)
            lv = max(lv, level[dep] + (0 if shares_loop else 1))
        return lv

    def _join_row(self, v: Var, n: Node, deps, level) -> int | None:
        """Place ``v`` in the row kernel of a reduction it reads row by row, when every other
        stored value it reads comes from an earlier step. Returns its level, or None."""
        candidates: dict[tuple, list[tuple[Var, str]]] = {}
        for dep, tag in deps:
            domain = self.row_domain.get(dep)
            if domain is not None and dep in self.ready and self._row_read(v, n, tag, domain):
                candidates.setdefault(domain, []).append((dep, tag))
        if not candidates:
            return None
        domain, pairs = max(candidates.items(),
                            key=lambda kv: max(level[d] for d, _ in kv[1]))
        lv = max(level[d] for d, _ in pairs)
        joined = [(d, t) for d, t in pairs if level[d] == lv]
        # every other read (including another read of a joined value) is from memory, so it
        # must come from an earlier step
        if any(level[d] + 1 > lv for d, t in deps if (d, t) not in joined):
            return None
        same_step = [d for d, _ in joined]
        ready = max(self.ready[d] for d in same_step)
        self.row_domain[v] = domain
        self.stage[v] = ready
        if n.op in REDUCTIONS:
            self.ready[v] = ready + 1
        elif v.shape != domain[0]:            # a row-level value: computed between passes
            self.ready[v] = ready
        return lv

    def _row_read(self, v: Var, n: Node, tag: str, domain) -> bool:
        """Whether ``v`` can read a row-level member of ``domain`` (a reduction or a value
        computed from reductions) in the same row kernel."""
        shape, kept = domain
        if n.op in REDUCTIONS:
            return tag == "row" and kept > 0 and _row_domain(n) == domain
        if v.shape == shape:
            return tag == "row" and kept > 0
        return tag == "same" and same_ignoring_ones(v.shape, shape[:kept])

    def _stored_dependencies(self, var: Var) -> list[tuple[Var, str]]:
        """Stored values that ``var``'s expression reads, each with how it is read: "same"
        (at the same index, through elementwise nodes), "row" (at the leading indices only,
        broadcast along trailing dimensions) or "other"."""
        found: list[tuple[Var, str]] = []
        node = self.producer[var]
        start = "same" if node.op in ELEMENTWISE | REDUCTIONS else "other"
        stack = [(inp, start) for inp in node.inputs]
        seen = set()
        while stack:
            v, tag = stack.pop()
            if (v, tag) in seen:
                continue
            seen.add((v, tag))
            if v in self.stored:
                found.append((v, tag))
                continue
            node = self.producer[v]
            stack.extend((i, read_through(node, tag)) for i in node.inputs)
        return found

    def _group_key(self, v: Var, level: dict[Var, int]) -> tuple:
        n = self.producer[v]
        if v in self.row_domain:
            return (level[v], "row", self.row_domain[v])
        if n.op in REDUCTIONS:
            return (level[v], "reduce", n.inputs[0].shape, n.param["axes"])
        if v in self.regions:
            return (level[v], self.regions[v].shape)
        return (level[v], v.shape)

    def _drop_row_local(self, level: dict[Var, int]) -> None:
        """Row-level values read only inside their own row kernel need no buffer."""
        readers: dict[Var, set] = {}
        for v in self.graph.outputs:
            readers.setdefault(v, set()).add("output")
        for n in self.graph.nodes:
            if self._called(n) and n.out not in self.regions:   # a region update is a nest
                for i in self.operands(n):
                    readers.setdefault(i, set()).add("call")
            elif n.out in self.stored and n.op is not Op.CONST:
                key = self._group_key(n.out, level)
                for dep, _ in self._stored_dependencies(n.out):
                    readers.setdefault(dep, set()).add(key)
        for v in list(self.row_domain):
            if v in self.ready and readers.get(v, set()) <= {self._group_key(v, level)}:
                self.stored.discard(v)

    def partition(self) -> Partition:
        self.choose_stored()
        level = self.levels()
        absorbed = {y for y, r in self.regions.items() if r.updates in self.placed}
        keys = {n.out: self._group_key(n.out, level) for n in self.graph.nodes
                if n.out in self.stored and n.op is not Op.CONST and self._in_nest(n)
                and n.out not in self.views and n.out not in absorbed
                and n.out not in self.unfilled}
        self._drop_row_local(level)
        groups: dict[tuple, list[Var]] = {}
        library: list[tuple[int, Node]] = []
        for n in self.graph.nodes:
            v = n.out
            if not self._in_nest(n) and v in self.stored:
                library.append((level[v], n))
            elif v in keys:
                groups.setdefault(keys[v], []).append(v)
        steps: list[tuple[int, int, Step]] = []
        for lv, node in library:
            steps.append((lv, 0, LibraryCall(node, self.call_views.get(node.out, ()),
                                             self._in_range(node))))
        for key, members in groups.items():
            domain = key[2] if key[1] == "row" else None
            builder = NestBuilder(self.producer, self.stored, self.stage, members, domain,
                                  self.regions, self.placed, self.positioned, self.unfilled,
                                  self.bounds)
            steps.append((key[0], 1, builder.build()))
        steps.sort(key=lambda item: (item[0], item[1]))
        aliases = ({v: r.root for v, r in self.regions.items()} |
                   {v: r.root for v, r in self.placed.items()} | self.views)
        return Partition(tuple(s for _, _, s in steps), frozenset(self.stored), aliases)

    def _in_range(self, n: Node) -> tuple[int, ...]:
        """The axes a gather or scatter ``n`` indexes at a 0-d position within the axis."""
        if n.op not in (Op.GATHER, Op.SCATTER) or not self.bounds:
            return ()
        found = []
        for axis, item in enumerate(n.param["index"]):
            index = n.inputs[1 + item[1]] if is_array_item(item) else None
            if (index is not None and index.ndim == 0
                    and within(self.bounds, index, n.inputs[0].shape[axis])):
                found.append(axis)
        return tuple(found)

    def _in_nest(self, n: Node) -> bool:
        """Whether ``n``'s value, where stored, is written by a loop nest rather than by a
        call (a region update is a store in a nest)."""
        return not self._called(n) or n.out in self.regions

    def _called(self, n: Node) -> bool:
        """Whether ``n`` is a library call or control flow (not a view of positions)."""
        return n.op in CALLS and n.out not in self.positioned


def _row_domain(node: Node) -> tuple[tuple[int, ...], int] | None:
    """(source shape, number of kept leading dimensions) of a reduction over trailing axes."""
    src, axes = node.inputs[0], tuple(node.param["axes"])
    if axes and axes == tuple(range(src.ndim - len(axes), src.ndim)):
        return src.shape, src.ndim - len(axes)
    return None


def partition(graph: Graph, views_out: bool = True, positions: bool = False,
              bounds: Mapping[Var, Bounds] | None = None) -> Partition:
    """Split a simplified graph into ordered steps. ``views_out``: outputs may be views of
    other buffers (``regions.output_views``; not for loop bodies, whose outputs are the next
    iteration's buffers). ``positions``: gathers at run-time positions among slices are
    views inside kernels (``views.gather_positions``), else library calls. ``bounds``: of
    integer values (``ranges.value_ranges``), for positions that need no check."""
    return _Fuser(graph, views_out, positions, bounds).partition()
