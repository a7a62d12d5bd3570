"""The fused program as data: loop nests (``Kernel``) over SSA statements with affine index
maps, and the library-call steps between them. ``passes.fuse`` builds these; each backend
renders them (``backends/<target>/codegen``). Nothing here knows about a target.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Union

import numpy as np

from ..core.ir import Node, Op, Var


@dataclass(frozen=True)
class Wrap:
    """``add`` where ``value < below``, else 0: the wrap-around of a roll (``value`` is the
    rolled index, an ``Affine`` over the loop indices)."""

    value: "Affine"
    below: int
    add: int


@dataclass(frozen=True)
class Affine:
    """``offset + sum(coefs[j] * i_j)`` over the loop indices ``i_j``, plus each of ``wraps``.

    ``shifted`` marks an access through a slice: its offset is a run-time value even where
    it happens to be 0, since slices of other sizes can shift it (a reversed reversal cancels
    its offset at some sizes only), and generated code must not depend on sizes.
    ``positions``: ``(name, stride)`` terms, ``stride`` times the run-time index ``name``
    (a ``Position`` of the kernel: ``x[i]`` with a traced ``i``)."""

    offset: int
    coefs: tuple[int, ...]
    shifted: bool = False
    wraps: tuple[Wrap, ...] = ()
    positions: tuple[tuple[str, int], ...] = ()

    def loops(self) -> set[int]:
        """The loops whose index this access depends on."""
        used = {j for j, c in enumerate(self.coefs) if c != 0}
        for w in self.wraps:
            used |= w.value.loops()
        return used

    def scaled(self, factor: int, offset: int = 0) -> "Affine":
        """``offset + factor * self``."""
        return Affine(offset + factor * self.offset, tuple(factor * c for c in self.coefs),
                      self.shifted, tuple(Wrap(w.value, w.below, factor * w.add)
                                          for w in self.wraps if factor != 0),
                      tuple((name, factor * stride) for name, stride in self.positions
                            if factor != 0))

    def with_loops(self, coefs_of: Callable[[tuple[int, ...]], tuple[int, ...]]) -> "Affine":
        """The same access with every coefficient vector (its own and its wraps') mapped by
        ``coefs_of`` (loops dropped or merged)."""
        return Affine(self.offset, coefs_of(self.coefs), self.shifted,
                      tuple(Wrap(w.value.with_loops(coefs_of), w.below, w.add)
                            for w in self.wraps), self.positions)


def identity_map(shape: tuple[int, ...]) -> tuple[Affine, ...]:
    n = len(shape)
    return tuple(Affine(0, tuple(int(j == k) for j in range(n))) for k in range(n))


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def combine(terms: list[tuple[int, Affine]], nloops: int) -> Affine:
    offset = sum(w * a.offset for w, a in terms)
    coefs = tuple(sum(w * a.coefs[j] for w, a in terms) for j in range(nloops))
    wraps = tuple(wrap for w, a in terms for wrap in a.scaled(w).wraps)
    positions = tuple(term for w, a in terms for term in a.scaled(w).positions)
    return Affine(offset, coefs, any(a.shifted for _, a in terms), wraps, positions)


@dataclass(frozen=True)
class Load:
    name: str
    buffer: int             # index into Kernel.reads (Kernel.writes when ``own_output``)
    access: Affine          # flat element index into that buffer
    own_output: bool = False  # reads back what an earlier pass stored in an output


@dataclass(frozen=True)
class Const:
    name: str
    value: bool | int | float | complex   # a Python scalar
    dtype: np.dtype
    runtime: bool = False   # a value from shapes: a run-time parameter, not a literal


@dataclass(frozen=True)
class Compute:
    name: str
    op: Op
    args: tuple[str, ...]
    dtype: np.dtype         # result dtype
    arg_dtypes: tuple[np.dtype, ...]
    params: tuple


@dataclass(frozen=True)
class Store:
    buffer: int             # index into Kernel.writes
    value: str
    access: Affine
    stage: int = 0          # row kernels: the pass (inner store) or the gap before it (outer)


@dataclass(frozen=True)
class Reduce:
    """An accumulator over the inner (reduced) loops: initialised before them, updated with
    ``value`` in the innermost loop, readable as ``name`` after them."""

    name: str
    op: Op
    value: str
    dtype: np.dtype         # the input's dtype (the result dtype for all but arg-reductions)
    acc_dtype: np.dtype     # accumulator dtype (float64 when summing float32)
    stage: int = 0          # the pass over the reduced loops that accumulates it


@dataclass(frozen=True)
class Position:
    """A run-time index into one axis, as NumPy takes one integer: ``value`` (a 0-d integer
    of the kernel) checked against the axis's ``extent`` (an ``IndexError`` naming ``axis``
    when it is outside ``[-extent, extent)``), a negative one counted from the end.
    ``in_range``: the value's bounds (``passes.ranges``) lie in ``[0, extent)``, so there is
    nothing to check or count."""

    name: str
    value: str
    extent: int
    axis: int
    in_range: bool = False


Stmt = Union[Load, Const, Compute, Position]


def checked(stmt: Stmt) -> bool:
    """Whether ``stmt`` is a ``Position`` checked at run time (one not known in range)."""
    return isinstance(stmt, Position) and not stmt.in_range


@dataclass(frozen=True)
class Kernel:
    """A loop nest over ``sizes`` (dimensions already merged where the accesses allow).

    In a reduction kernel ("row kernel") the first ``n_outer`` loops run over the output and
    the rest over the reduced dimensions, in one or more passes per output position: pass
    ``s`` accumulates the reductions of stage ``s`` and stores the elementwise values of stage
    ``s``; values of the outer loops (a reduction's result and what is computed from it: the
    epilogue) exist from the gap after their pass on. ``stages[k]`` places ``stmts[k]``: in
    pass ``stage`` when it depends on the reduced loops, else in the gap before pass
    ``stage`` (``passes`` is the gap after the last pass). Softmax is one kernel of three
    passes: max, sum of exp, then the stores of exp / sum."""

    sizes: tuple[int, ...]
    reads: tuple[Var, ...]
    writes: tuple[Var, ...]
    stmts: tuple[Stmt, ...]
    stores: tuple[Store, ...]
    n_outer: int | None = None       # None: no reduction (stores in the innermost loop)
    reductions: tuple[Reduce, ...] = ()
    stages: tuple[int, ...] = ()     # per stmt: the pass it was built for; empty: all 0
    passes: int = 1

    @property
    def elements(self) -> int:
        return int(np.prod(self.sizes, dtype=np.int64))

    def __repr__(self) -> str:
        """One line: the loops, what the kernel reads and writes, how it reduces (the full
        statements are in ``lower(...).as_text()``)."""
        if self.n_outer is None:
            form = f"elementwise over {self.sizes}"
        else:
            form = (f"rows {self.sizes[:self.n_outer]} reducing {self.sizes[self.n_outer:]} "
                    f"in {self.passes} pass{'es' if self.passes > 1 else ''} "
                    f"({', '.join(r.op.value for r in self.reductions)})")
        reads = ", ".join(str(v.aval) for v in self.reads) or "nothing"
        writes = ", ".join(str(v.aval) for v in self.writes)
        return (f"<Kernel {form}: reads {reads}; writes {writes}; "
                f"{len(self.stmts)} statements>")

    def fill_values(self) -> tuple[bool | int | float | complex, ...] | None:
        """The constant each write is filled with, when that is all the kernel does (it reads
        nothing and stores one literal constant into every element of each write, in order);
        else None. ``zeros((2000, 3))`` is such a kernel:

        >>> from arrjit.core.dtypes import Aval
        >>> out = Var(0, Aval((2000, 3), np.dtype('f8')))
        >>> k = Kernel((6000,), (), (out,), (Const('v0', 0.0, np.dtype('f8')),),
        ...            (Store(0, 'v0', Affine(0, (1,))),))
        >>> k.fill_values()
        (0.0,)
        """
        if self.reads or self.n_outer is not None or len(self.stores) != len(self.writes):
            return None
        constants = {s.name: s.value for s in self.stmts
                     if isinstance(s, Const) and not s.runtime}
        whole = Affine(0, c_strides(self.sizes))
        values = []
        for k, (store, v) in enumerate(zip(self.stores, self.writes)):
            if store.buffer != k or store.value not in constants or store.access != whole \
                    or v.aval.size != self.elements:
                return None
            values.append(constants[store.value])
        return tuple(values)

    def assignments(self) -> tuple[tuple[int, Source, Affine], ...] | None:
        """Per store: its write, what it stores (a literal constant, or ``(read, access)``:
        elements of a read of the write's dtype) and the access it stores it through, when
        that is all the kernel does: it computes and reduces nothing, and every access is an
        affine map (no run-time position); else None. The border of a padded array, or the
        two ends a join copies from another array, is such a kernel:

        >>> from arrjit.core.dtypes import Aval
        >>> x, out = (Var(k, Aval((4, 4), np.dtype('f8'))) for k in range(2))
        >>> k = Kernel((4,), (x,), (out,), (Const('v0', 0.0, np.dtype('f8')),
        ...                                  Load('v1', 0, Affine(1, (4,)))),
        ...            (Store(0, 'v0', Affine(0, (4,))), Store(0, 'v1', Affine(3, (4,)))))
        >>> [(b, v if not isinstance(v, tuple) else ('read', v[0], v[1].offset), a.offset)
        ...  for b, v, a in k.assignments()]
        [(0, 0.0, 0), (0, ('read', 0, 1), 3)]
        """
        if self.n_outer is not None or self.reductions:
            return None
        sources: dict[str, Source] = {}
        for s in self.stmts:
            if isinstance(s, Const) and not s.runtime:
                sources[s.name] = s.value
            elif isinstance(s, Load) and not s.own_output and _affine(s.access):
                sources[s.name] = (s.buffer, s.access)
            else:
                return None
        found = []
        for store in self.stores:
            source = sources.get(store.value)
            if source is None or not _affine(store.access):
                return None
            if isinstance(source, tuple) and (
                    self.reads[source[0]].dtype != self.writes[store.buffer].dtype
                    or any(c == 0 and n > 1 for c, n in zip(store.access.coefs, self.sizes))):
                return None   # a cast, or elements stored over each other: compiled
            found.append((store.buffer, source, store.access))
        return tuple(found)


# what an assignment stores: a literal constant, or (read, access) of a kernel's read
Source = Union[bool, int, float, complex, tuple[int, Affine]]


def _affine(access: Affine) -> bool:
    """Whether ``access`` is an affine map alone (no wrap, no run-time position)."""
    return not (access.wraps or access.positions)


@dataclass(frozen=True)
class LibraryCall:
    """A step run outside fused loop nests: a library call or a control-flow node.

    ``views`` (empty, or one entry per node input): an input that is a transpose of a stored
    value is read as ``numpy.transpose(base, perm)`` of that value's buffer, given here as
    ``(base, perm)``, rather than copied into a buffer of its own (BLAS takes transposed
    operands as they are). ``in_range``: the axes of a gather or scatter whose 0-d position
    lies in range by its bounds (``passes.ranges``): a native rendering checks no other.
    ``rows_from``: a 0-d input of the graph below which no row of this matrix-vector
    product is read (``passes.demand``): a rendering may leave those rows zero."""

    node: Node
    views: tuple[tuple[Var, tuple[int, ...]] | None, ...] = ()
    in_range: tuple[int, ...] = ()
    rows_from: Var | None = None

    @property
    def operands(self) -> tuple[Var, ...]:
        """The stored values this step reads, one per node input."""
        if not self.views:
            return self.node.inputs
        return tuple(v if view is None else view[0]
                     for v, view in zip(self.node.inputs, self.views))

    @property
    def perms(self) -> tuple[tuple[int, ...] | None, ...]:
        """Per operand, the axes order to read it in (None: as stored)."""
        return tuple(None if view is None or view[1] == tuple(range(len(view[1])))
                     else view[1] for view in self.views) or (None,) * len(self.node.inputs)


Step = Union[Kernel, LibraryCall]


@dataclass(frozen=True)
class Partition:
    """The ordered steps. ``aliases`` maps a value that no step allocates to the value whose
    buffer holds it (``passes.regions``): a region update's result, and a reduction stored
    into a region, to the value updated in place; an output that is a reshape to the value it
    views. A value precedes the values that alias it."""

    steps: tuple[Step, ...]
    buffers: frozenset[Var]  # every var that lives in memory (inputs, constants, stored values)
    aliases: Mapping[Var, Var] = field(default_factory=dict)


def merge_loops(sizes: tuple[int, ...], accesses: list[Affine], n_outer: int | None = None
                ) -> tuple[tuple[int, ...], list[Affine], int | None]:
    """Drop size-1 loops and merge adjacent loops that every access walks as one contiguous
    block (unit inner stride and outer stride equal to the inner extent) or ignores (both
    strides zero), so contiguous work becomes one flat loop. Merging only on these patterns
    keeps the loop structure, and so the generated source, the same for other sizes. A loop
    that a roll's wrap-around tests keeps its own index."""
    keep = [d for d, n in enumerate(sizes) if n != 1]
    pinned = set().union(*(w.value.loops() for a in accesses for w in a.wraps))
    origin: list[int | None] = list(keep)    # the original loop of each unmerged loop
    outer = None if n_outer is None else sum(1 for d in keep if d < n_outer)
    cur_sizes = [sizes[d] for d in keep]
    cur = [[a.coefs[d] for d in keep] for a in accesses]
    j = len(cur_sizes) - 2
    while j >= 0:
        crosses = outer is not None and j + 1 == outer  # never merge output with reduced loops
        crosses = crosses or origin[j] in pinned or origin[j + 1] in pinned
        if not crosses and all((c[j] == 0 and c[j + 1] == 0) or
                               (c[j + 1] == 1 and c[j] == cur_sizes[j + 1]) for c in cur):
            cur_sizes[j] *= cur_sizes[j + 1]
            del cur_sizes[j + 1]
            origin[j] = None
            del origin[j + 1]
            for c in cur:
                c[j] = c[j + 1]
                del c[j + 1]
            if outer is not None and j < outer:
                outer -= 1
        j -= 1
    def remap(coefs: tuple[int, ...]) -> tuple[int, ...]:   # wraps use unmerged loops only
        return tuple(0 if o is None else coefs[o] for o in origin)

    merged = [Affine(a.offset, tuple(c), a.shifted,
                     tuple(Wrap(w.value.with_loops(remap), w.below, w.add) for w in a.wraps),
                     a.positions)
              for a, c in zip(accesses, cur)]
    return tuple(cur_sizes), merged, outer
