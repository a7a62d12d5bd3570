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

from ..core.ir import (CONTROL_FLOW, ELEMENTWISE, LIBRARY_CALLS, REDUCTIONS, VIEWS, Graph, Node,
                       Op, Var)
from ..core.rules import COSTLY, REDUCTION_RULES
from .sizes import chain_cuts
from .kernel import (Affine, Compute, Const, Kernel, LibraryCall, Load, Partition, Reduce, Step,
                     Stmt, Store, c_strides, combine, identity_map, merge_loops)
from .views import (VIEW_MAPS, below_unit_reshapes, read_through, reshape_map,
                    same_ignoring_ones, transposed_source)

CALLS = LIBRARY_CALLS | CONTROL_FLOW  # steps run outside fused loop nests


class _Fuser:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.producer = {v: n for n in graph.nodes for v in n.outs}
        self.stored: set[Var] = set(graph.inputs)
        self.call_views: dict[Var, tuple] = {}   # a call's output -> ``LibraryCall.views``
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
            elif n.op in CALLS:
                self.stored.update(n.outs)
                views = tuple(self._transposed_operand(n, v) for v in n.inputs)
                if any(views):
                    self.call_views[n.out] = views
                self.stored.update(self.operands(n))
            elif n.op is Op.RESHAPE and not same_ignoring_ones(n.inputs[0].shape, n.out.shape):
                self._store_unflattenable(n.inputs[0])
            elif n.op is Op.BROADCAST and n.out.aval.size > n.inputs[0].aval.size:
                # below reshapes that only add or drop ones, so the stored value can join a
                # row kernel as a row-level value
                src = below_unit_reshapes(n.inputs[0], self.producer)
                if src.ndim > 0 and self._has_costly(src):
                    self.stored.add(src)
        self.cuts = chain_cuts(self.graph, self.stored)
        self.stored |= self.cuts

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
        elementwise nodes and reshapes, but not through other views of n-d values: store them."""
        stack, seen = [var], set()
        while stack:
            v = stack.pop()
            if v in seen or v in self.stored or v.ndim <= 1:
                continue
            seen.add(v)
            node = self.producer.get(v)
            if node is None:
                continue
            if node.op in (Op.BROADCAST, Op.TRANSPOSE, Op.SLICE, Op.ROLL):
                if not (node.op is Op.BROADCAST and node.inputs[0].ndim == 0):
                    self.stored.add(v)
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
            elif n.op in CALLS:
                for out in n.outs:
                    level[out] = max((level[i] for i in self.operands(n)), default=-1) + 1
            else:
                deps = self._stored_dependencies(v)
                joined = self._join_row(v, n, deps, level)
                level[v] = (joined if joined is not None
                            else self._separate_level(v, n, deps, level))
        return level

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
            shares_loop = (tag == "same" and dep.shape == v.shape and dep not in self.cuts
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
        return (level[v], v.shape)

    def _drop_row_local(self, level: dict[Var, int]) -> None:
        """Row-level values read only inside their own row kernel need no buffer."""
        readers: dict[Var, set] = {}
        for v in self.graph.outputs:
            readers.setdefault(v, set()).add("output")
        for n in self.graph.nodes:
            if n.op in CALLS:
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
        keys = {n.out: self._group_key(n.out, level) for n in self.graph.nodes
                if n.out in self.stored and n.op is not Op.CONST and n.op not in CALLS}
        self._drop_row_local(level)
        groups: dict[tuple, list[Var]] = {}
        library: list[tuple[int, Node]] = []
        for n in self.graph.nodes:
            v = n.out
            if n.op in CALLS and v in self.stored:
                library.append((level[v], n))
            elif v in keys:
                groups.setdefault(keys[v], []).append(v)
        steps: list[tuple[int, int, Step]] = []
        for lv, node in library:
            steps.append((lv, 0, LibraryCall(node, self.call_views.get(node.out, ()))))
        for key, members in groups.items():
            domain = key[2] if key[1] == "row" else None
            steps.append((key[0], 1, _KernelBuilder(self, members, domain).build()))
        steps.sort(key=lambda item: (item[0], item[1]))
        return Partition(tuple(s for _, _, s in steps), frozenset(self.stored))


def _row_domain(node: Node) -> tuple[tuple[int, ...], int] | None:
    """(source shape, number of kept leading dimensions) of a reduction over trailing axes."""
    src, axes = node.inputs[0], tuple(node.param["axes"])
    if axes and axes == tuple(range(src.ndim - len(axes), src.ndim)):
        return src.shape, src.ndim - len(axes)
    return None


class _KernelBuilder:
    """Builds one Kernel: walks each member's expression with composed index maps.

    For a reduction kernel the members are built pass by pass (``fuser.stage``); a
    reduction member read inside the kernel is its accumulator, not a load."""

    def __init__(self, fuser: _Fuser, members: list[Var],
                 row_domain: tuple[tuple[int, ...], int] | None = None):
        self.fuser = fuser
        self.members = members
        first = fuser.producer[members[0]]
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
            self.domain = members[0].shape
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

    def _fresh(self) -> str:
        return f"v{len(self.stmts)}"

    def _stage(self, v: Var) -> int:
        return self.fuser.stage.get(v, 0) if self.reducing else 0

    def build(self) -> Kernel:
        stores: list[Store] = []
        reductions: list[Reduce] = []
        writes = [v for v in self.members if v in self.fuser.stored]
        slot = {v: k for k, v in enumerate(writes)}
        order = sorted(range(len(self.members)), key=lambda k: self._stage(self.members[k]))
        early = self._early_stores(writes) if self.reducing else {}
        for k in order:
            v = self.members[k]
            self._enter(self._stage(v))
            node = self.fuser.producer[v]
            for value, target in early.items():   # a value kept in a later output's buffer
                if target in slot and self._stage(target) == self.current and value not in (
                        key[0] for key in self.memo):
                    access = self._flat_access(target, self.identity, flat=False)
                    self.memo[(value, self.identity, False)] = self._emit(
                        Load(self._fresh(), slot[target], access, own_output=True))
            if node.op in REDUCTIONS:
                reduce = self._reduction(v, len(reductions))
                reductions.append(reduce)
                for value, target in early.items():
                    name = self.memo.get((value, self.identity, False))
                    if name is not None and self._stage(target) > reduce.stage:
                        stores.append(Store(slot[target], name, self._flat_access(
                            target, self.identity, flat=False), reduce.stage))
                if v in slot:
                    stores.append(Store(slot[v], self._result(v), self._flat_access(
                        v, self.outer_identity, flat=False), reduce.stage + 1))
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

    def _early_stores(self, writes: list[Var]) -> dict[Var, Var]:
        """Costly values needed by a reduction and again, at the same index, by a later
        pass's output of the same shape and dtype (softmax's ``exp(x - max)``): the earlier
        pass stores each into that output's buffer and the later pass loads it back instead
        of recomputing it (each row is finished by one thread, so nothing else reads it)."""
        def costly_at_identity(root: Var) -> set[Var]:
            found, stack, seen = set(), [root], set()
            while stack:
                v = stack.pop()
                node = self.fuser.producer.get(v)
                if v in seen or node is None or node.op not in ELEMENTWISE:
                    continue
                seen.add(v)
                if v is not root and v not in self.fuser.stored and COSTLY.get(node.op, False):
                    found.add(v)
                stack.extend(i for i in node.inputs if i.shape == self.domain)
            return found
        reduced: dict[Var, int] = {}
        for v in self.members:
            node = self.fuser.producer[v]
            if node.op in REDUCTIONS and node.inputs[0].shape == self.domain:
                for value in costly_at_identity(node.inputs[0]) | {node.inputs[0]}:
                    reduced.setdefault(value, self._stage(v))
        early: dict[Var, Var] = {}
        for target in writes:
            if target.shape != self.domain or self.fuser.producer[target].op in REDUCTIONS:
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
        node = self.fuser.producer[var]
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
        node = self.fuser.producer.get(var)
        # a member of this kernel is computed here at whatever index it is read (its buffer
        # may not be written yet)
        is_member_here = var in self.member_set and not flat
        if var in self.results:
            assert all(a == b or n == 1 for a, b, n in zip(imap, self.outer_identity, var.shape)
                       ), "a reduction read off its row"
            name = self.results[var]
        elif node is not None and node.op is Op.CONST and var.ndim == 0:
            name = self._emit(Const(self._fresh(), node.param["value"].array.item(), var.dtype,
                                    bool(node.param.get("runtime"))))
        elif var in self.fuser.stored and not (root or is_member_here):
            idx = self.reads.setdefault(var, len(self.reads))
            name = self._emit(Load(self._fresh(), idx, self._flat_access(var, imap, flat)))
        else:
            assert node is not None, "an input that is not stored"
            name = self._compute(node, imap, flat)
        self.memo[key] = name
        return name

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

    def _compute(self, node: Node, imap: tuple[Affine, ...], flat: bool) -> str:
        op = node.op
        if op in ELEMENTWISE:
            args = tuple(self.value(v, imap, flat) for v in node.inputs)
            return self._emit(Compute(self._fresh(), op, args, node.out.dtype,
                                      tuple(v.dtype for v in node.inputs), node.params))
        assert op in VIEWS, op
        src = node.inputs[0]
        zero = Affine(0, (0,) * self.nloops)
        if op is Op.RESHAPE:
            if flat:
                return self.value(src, imap, True)
            if same_ignoring_ones(src.shape, node.out.shape):
                return self.value(src, reshape_map(node, imap, zero), False)
            return self.value(src, (self._flat_access(node.out, imap, False),), True)
        assert not flat or src.ndim == 0, f"{op} reached in flat mode; fusion should store it"
        return self.value(src, VIEW_MAPS[op](node, imap, zero), False)


def partition(graph: Graph) -> Partition:
    """Split a simplified graph into ordered steps."""
    return _Fuser(graph).partition()
