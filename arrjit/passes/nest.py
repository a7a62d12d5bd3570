"""Building one loop nest: a ``Kernel`` from the values ``passes.fuse`` grouped into it.

Each member's expression is walked from its store back to stored values, composing the index
maps of views (``passes.views``) so that a view never copies; values read at the same index
are computed once (``memo``). Reduction kernels are built pass by pass.
"""
from __future__ import annotations

import sys
from typing import Mapping

import numpy as np

from ..core.interpret import evaluate_node
from ..core.ir import ELEMENTWISE, REDUCTIONS, VIEWS, Node, Op, Var
from ..core.rules import COSTLY, REDUCTION_RULES
from .kernel import (Affine, Compute, Const, Kernel, Load, Position, Reduce, Stmt, Store,
                     c_strides, combine, identity_map, merge_loops)
from .ranges import Bounds, within
from .regions import MODE_OPS, Region
from .views import (VIEW_MAPS, Positions, broadcast_map, gather_map, reshape_map,
                    same_ignoring_ones)


class NestBuilder:
    """Builds one Kernel: walks each member's expression with composed index maps.

    For a reduction kernel the members are built pass by pass (``stage``); a
    reduction member read inside the kernel is its accumulator, not a load."""

    def __init__(self, producer: dict[Var, Node], stored: set[Var], stage: dict[Var, int],
                 members: list[Var], row_domain: tuple[tuple[int, ...], int] | None = None,
                 regions: Mapping[Var, Region] | None = None,
                 placed: Mapping[Var, Region] | None = None,
                 positioned: Mapping[Var, Positions] | None = None,
                 unfilled: frozenset[Var] | set[Var] = frozenset(),
                 bounds: Mapping[Var, Bounds] | None = None):
        self.producer, self.stored, self.stage_of = producer, stored, stage
        self.bounds = bounds or {}    # of integer values (``ranges.value_ranges``)
        self.unfilled = unfilled      # region roots no nest writes (``regions.unfilled_roots``)
        self.regions = regions or {}
        self.placed = placed or {}    # members stored into a region of another buffer
        self.positioned = positioned or {}   # gathers read at positions (``gather_positions``)
        self.members = members
        first = producer[members[0]]
        self.reducing = row_domain is not None or first.op in REDUCTIONS
        self.n_outer: int | None
        if row_domain is not None:
            self.domain, self.n_outer = row_domain
            self.loop_dims = list(range(len(self.domain)))
        elif self.reducing:
            src, axes = first.inputs[0], first.param["axes"]
            kept = [d for d in range(src.ndim) if d not in axes]
            self.loop_dims = kept + list(axes)   # loop j runs over input dimension loop_dims[j]
            self.domain = tuple(src.shape[d] for d in self.loop_dims)
            self.n_outer = len(kept)
        else:
            region = self.regions.get(members[0])
            self.domain = members[0].shape if region is None else region.shape
            self.n_outer = None
        self.nloops = len(self.domain)
        self.identity = identity_map(self.domain)
        self.outer_identity = self.identity[:self.n_outer or 0]
        self.member_set = set(members)
        self.stmts: list[Stmt] = []
        self.stmt_stage: list[int] = []
        self.inner: set[str] = set()       # names that depend on the reduced loops
        self.memo: dict[tuple, str] = {}
        self.reads: dict[Var, int] = {}
        self.current = 0
        self.results: dict[Var, str] = {}  # reduction member -> its value after its pass
        self.literals: dict[str, object] = {}   # names of constants known here -> their values
        self.positions: dict[tuple[str, int, int], str] = {}   # (value, extent, axis) -> name

    def _fresh(self) -> str:
        return f"v{len(self.stmts)}"

    def _stage(self, v: Var) -> int:
        return self.stage_of.get(v, 0) if self.reducing else 0

    def build(self) -> Kernel:
        # ``value`` recurses once per node along a chain, and fusion bounds a chain's length
        # (``sizes``), not Python's default depth of 1000
        depth = sys.getrecursionlimit()
        sys.setrecursionlimit(max(depth, 1000 + 4 * len(self.producer)))
        try:
            return self._build()
        finally:
            sys.setrecursionlimit(depth)

    def _build(self) -> Kernel:
        stores: list[Store] = []
        reductions: list[Reduce] = []
        writes: list[Var] = []
        slot: dict[Var, int] = {}     # a member -> its buffer (one per updated region root)
        for v in self.members:
            if v in self.stored:
                region = self.regions.get(v) or self.placed.get(v)
                owner = v if region is None else region.root
                if owner not in slot:
                    slot[owner] = len(writes)
                    # the buffer's shape; an unfilled root is first written (allocated) here
                    writes.append(owner if v in self.placed or owner in self.unfilled else v)
                slot[v] = slot[owner]
        order = sorted(range(len(self.members)), key=lambda k: self._stage(self.members[k]))
        early = self._early_stores(writes) if self.reducing else {}
        kept_at: dict[Var, int] = {}   # an early value -> the pass that stored it
        for k in order:
            v = self.members[k]
            self._enter(self._stage(v))
            node = self.producer[v]
            for value, target in early.items():   # a value kept in a later output's buffer
                if (target in slot and kept_at.get(value, self.current) < self.current
                        <= self._stage(target)
                        and value not in (key[0] for key in self.memo)):
                    access = self._flat_access(target, self.identity, flat=False)
                    self.memo[(value, self.identity, False)] = self._emit(
                        Load(self._fresh(), slot[target], access, own_output=True))
            if node.op in REDUCTIONS:
                reduce = self._reduction(v, len(reductions))
                reductions.append(reduce)
                for value, target in early.items():
                    name = self.memo.get((value, self.identity, False))
                    if (name is not None and value not in kept_at
                            and self._stage(target) > reduce.stage):
                        stores.append(Store(slot[target], name, self._flat_access(
                            target, self.identity, flat=False), reduce.stage))
                        kept_at[value] = reduce.stage
                if v in slot:
                    stores.append(Store(slot[v], self._result(v), self._store_access(
                        v, self.outer_identity), reduce.stage + 1))
            elif v in self.regions:
                stores.append(self._region_store(self.regions[v], slot[v]))
            elif v in slot:
                name = self.value(v, self.identity if v.shape == self.domain or not
                                  self.reducing else self._row_map(v), flat=False, root=True)
                access = (self._flat_access(v, self.identity, flat=False)
                          if v.shape == self.domain or not self.reducing else
                          self._flat_access(v, self._row_map(v), flat=False))
                stores.append(Store(slot[v], name, access, self._stage(v)))
        loads = [s for s in self.stmts if isinstance(s, Load)]
        accesses = [s.access for s in loads] + [s.access for s in stores]
        sizes, merged, n_outer = merge_loops(self.domain, accesses, self.n_outer)
        remap = dict(zip(accesses, merged))
        stmts = tuple(Load(s.name, s.buffer, remap[s.access], s.own_output)
                      if isinstance(s, Load) else s for s in self.stmts)
        merged_stores = tuple(Store(s.buffer, s.value, remap[s.access], s.stage)
                              for s in stores)
        reads = tuple(sorted(self.reads, key=lambda v: self.reads[v]))
        passes = 1 + max([r.stage for r in reductions] +
                         [s.stage for s in merged_stores if s.value in self.inner], default=0)
        return Kernel(sizes, reads, tuple(writes), stmts, merged_stores, n_outer,
                      tuple(reductions),
                      tuple(self.stmt_stage), passes)

    def _region_store(self, region: Region, buffer: int) -> Store:
        """``v`` (broadcast over the region, as NumPy assigns it) stored at the region's
        positions in the updated buffer, combined with the value there for ``add`` etc."""
        v, zero = region.updates, Affine(0, (0,) * self.nloops)
        name = self.value(v, broadcast_map(v.shape, self.domain, self.identity, zero),
                          flat=False)
        access = self._region_access(region)
        combine_op = MODE_OPS[region.mode]
        if combine_op is not None:
            old = self._emit(Load(self._fresh(), buffer, access, own_output=True))
            name = self._emit(Compute(self._fresh(), combine_op, (old, name), v.dtype,
                                      (v.dtype, v.dtype), ()))
        return Store(buffer, name, access)

    def _region_access(self, region: Region) -> Affine:
        """Where ``region`` lies in its buffer: its access plus its run-time positions, each
        a ``Position`` of its axis (checked and counted from the end as NumPy does)."""
        if not region.positions:
            return region.access
        shape = region.base.shape
        strides = c_strides(shape)
        terms = tuple((self._position(index, shape[axis], axis), strides[axis])
                      for axis, index, _ in region.positions)
        a = region.access
        return Affine(a.offset, a.coefs, True, a.wraps, a.positions + terms)

    def _early_stores(self, writes: list[Var]) -> dict[Var, Var]:
        """Costly values needed by a reduction and again, at the same index, by a later
        pass's output of the same shape and dtype (softmax's ``exp(x - max)``): the earlier
        pass stores each into that output's buffer and every later pass up to the output's
        loads it back instead of recomputing it (each row is finished by one thread, so
        nothing else reads it; layernorm's ``tanh`` was computed by each of three passes)."""
        def costly_at_identity(root: Var) -> set[Var]:
            found, stack, seen = set(), [root], set()
            while stack:
                v = stack.pop()
                node = self.producer.get(v)
                if v in seen or node is None or node.op not in ELEMENTWISE:
                    continue
                seen.add(v)
                if v is not root and v not in self.stored and COSTLY.get(node.op, False):
                    found.add(v)
                stack.extend(i for i in node.inputs if i.shape == self.domain)
            return found
        reduced: dict[Var, int] = {}
        for v in self.members:
            node = self.producer[v]
            if node.op in REDUCTIONS and node.inputs[0].shape == self.domain:
                for value in costly_at_identity(node.inputs[0]) | {node.inputs[0]}:
                    reduced.setdefault(value, self._stage(v))
        early: dict[Var, Var] = {}
        for target in writes:
            if target.shape != self.domain or self.producer[target].op in REDUCTIONS:
                continue
            for value in sorted(costly_at_identity(target), key=lambda v: v.id):
                if (value.dtype == target.dtype and value not in early and
                        reduced.get(value, self._stage(target)) < self._stage(target)):
                    early[value] = target
                    break
        return early

    def _enter(self, stage: int) -> None:
        """Start building pass ``stage``: values of earlier passes' inner loops are gone."""
        if stage != self.current:
            self.current = stage
            self.memo = {k: v for k, v in self.memo.items() if v not in self.inner}

    def _row_map(self, var: Var) -> tuple[Affine, ...]:
        """The index map of a row-level value: its shape is the kept shape up to unit
        dimensions on either side, so each of its dimensions is the next kept loop of its
        size, skipping kept loops of size 1 (their index is 0), or a unit dimension of its
        own (index 0)."""
        kept = self.domain[:self.n_outer or 0]
        zero = Affine(0, (0,) * self.nloops)
        out, k = [], 0
        for n in var.shape:
            while k < len(kept) and kept[k] != n and kept[k] == 1:
                k += 1
            if k < len(kept) and kept[k] == n:
                out.append(self.outer_identity[k])
                k += 1
            else:
                assert n == 1, f"a row-level value of shape {var.shape} in rows of {kept}"
                out.append(zero)
        return tuple(out)

    def _reduction(self, var: Var, k: int) -> Reduce:
        node = self.producer[var]
        src = node.inputs[0]
        position = {d: j for j, d in enumerate(self.loop_dims)}
        src_map = tuple(self.identity[position[d]] for d in range(src.ndim))
        value = self.value(src, src_map, flat=False)
        acc = REDUCTION_RULES[node.op].accumulator(src.dtype)
        reduce = Reduce(f"acc{k}", node.op, value, src.dtype, acc, self._stage(var))
        self.results[var] = reduce.name
        if acc != var.dtype:   # the value NumPy returns has the output dtype
            cast = Compute(self._fresh(), Op.CAST, (reduce.name,), var.dtype, (acc,), ())
            self.results[var] = self._emit(cast, stage=reduce.stage + 1)
        return reduce

    def _result(self, var: Var) -> str:
        return self.results[var]

    def _store_access(self, var: Var, imap: tuple[Affine, ...]) -> Affine:
        """Where ``var`` read at ``imap`` is stored: its own buffer, or the region it is
        placed in."""
        region = self.placed.get(var)
        if region is None:
            return self._flat_access(var, imap, flat=False)
        placed = combine(list(zip(region.access.coefs, imap)), self.nloops)
        return Affine(region.access.offset + placed.offset, placed.coefs, True, placed.wraps,
                      placed.positions)

    def _flat_access(self, var: Var, imap: tuple[Affine, ...], flat: bool) -> Affine:
        if flat or var.ndim == 0:
            return imap[0] if imap else Affine(0, (0,) * self.nloops)
        terms = list(zip(c_strides(var.shape), imap))
        return combine(terms, self.nloops)

    def value(self, var: Var, imap: tuple[Affine, ...], flat: bool, root: bool = False) -> str:
        if flat and var.ndim <= 1:
            flat = False  # a 1-D (or 0-d) value: the flat index is the index
        key = (var, imap, flat)
        if key in self.memo:
            return self.memo[key]
        node = self.producer.get(var)
        # a member of this kernel is computed here at whatever index it is read (its buffer
        # may not be written yet)
        is_member_here = var in self.member_set and not flat
        if var in self.results:
            assert all(a == b or n == 1 for a, b, n in zip(imap, self.outer_identity, var.shape)
                       ), "a reduction read off its row"
            name = self.results[var]
        elif node is not None and node.op is Op.CONST and (
                var.ndim == 0 or _fixed(access := self._flat_access(var, imap, flat))):
            array = node.param["value"].array
            item = array.item() if var.ndim == 0 else array.reshape(-1)[access.offset].item()
            name = self._literal(item, var.dtype, bool(node.param.get("runtime")))
        elif var in self.stored and not (root or is_member_here):
            idx = self.reads.setdefault(var, len(self.reads))
            name = self._emit(Load(self._fresh(), idx, self._flat_access(var, imap, flat)))
        else:
            assert node is not None, "an input that is not stored"
            name = self._compute(node, imap, flat)
        self.memo[key] = name
        return name

    def _positions(self, node: Node) -> dict[int, tuple[str, int | None]]:
        """Per indexed axis of a positioned gather, its ``Position`` (one per index value,
        extent and axis in the kernel) and a window's first offset (``gather_positions``)."""
        return {axis: (self._position(index, node.inputs[0].shape[axis], axis), first)
                for axis, (index, first) in self.positioned[node.out].items()}

    def _position(self, index: Var, extent: int, axis: int) -> str:
        """The ``Position`` of the 0-d integer ``index`` on an axis of ``extent``: one per
        index value, extent and axis in the kernel."""
        value = self.value(index, (), False)
        key = (value, extent, axis)
        if key not in self.positions:
            self.positions[key] = self._emit(Position(self._fresh(), value, extent, axis,
                                                      within(self.bounds, index, extent)))
        return self.positions[key]

    def _emit(self, stmt: Stmt, stage: int | None = None) -> str:
        self.stmts.append(stmt)
        self.stmt_stage.append(self.current if stage is None else stage)
        outer = self.n_outer or 0
        if isinstance(stmt, Load):
            if any(c != 0 for c in stmt.access.coefs[outer:]) and self.reducing:
                self.inner.add(stmt.name)
        elif isinstance(stmt, Compute) and any(a in self.inner for a in stmt.args):
            self.inner.add(stmt.name)
        return stmt.name

    def _literal(self, value, dtype, runtime: bool = False) -> str:
        name = self._emit(Const(self._fresh(), value, dtype, runtime))
        if not runtime:
            self.literals[name] = value
        return name

    def _compute(self, node: Node, imap: tuple[Affine, ...], flat: bool) -> str:
        op = node.op
        if op is Op.SELECT:
            pred = self.value(node.inputs[0], imap, flat)
            if pred in self.literals:   # only the branch taken is computed
                return self.value(node.inputs[1 if self.literals[pred] else 2], imap, flat)
        if op in ELEMENTWISE:
            names = []
            for v in node.inputs:   # a loop, not a generator: deep chains recurse in Python only
                names.append(self.value(v, imap, flat))
            args = tuple(names)
            if all(a in self.literals for a in args):
                value = evaluate_node(node, [np.asarray(self.literals[a], v.dtype)
                                             for a, v in zip(args, node.inputs)])
                return self._literal(value.reshape(-1)[0].item(), node.out.dtype)
            return self._emit(Compute(self._fresh(), op, args, node.out.dtype,
                                      tuple(v.dtype for v in node.inputs), node.params))
        src = node.inputs[0]
        zero = Affine(0, (0,) * self.nloops)
        if node.out in self.positioned:
            assert not flat, "a positioned gather reached in flat mode; fusion should store it"
            return self.value(src, gather_map(node, imap, zero, self._positions(node)), False)
        assert op in VIEWS, op
        if op is Op.RESHAPE:
            if flat:
                return self.value(src, imap, True)
            if same_ignoring_ones(src.shape, node.out.shape):
                return self.value(src, reshape_map(node, imap, zero), False)
            return self.value(src, (self._flat_access(node.out, imap, False),), True)
        assert not flat or src.ndim == 0, f"{op} reached in flat mode; fusion should store it"
        return self.value(src, VIEW_MAPS[op](node, imap, zero), False)


def _fixed(access: Affine) -> bool:
    """Whether ``access`` is one element at every loop index. (Through a slice its offset
    may depend on sizes; a constant read there is still the element this graph reads, and the
    literal in the source keys the kernel.)"""
    return not access.wraps and not any(access.coefs) and not access.positions
