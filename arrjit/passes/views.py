"""View index maps: how a view (broadcast, transpose, slice, reshape) reads its source.

Inside a fused loop a view is never a copy: given the index map at which the view is read
(one ``Affine`` per dimension), its entry in ``VIEW_MAPS`` returns the map at which the source
is read.

>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Var
>>> import numpy as np
>>> x = Var(0, Aval((2, 3), np.dtype("float64"))); t = Var(1, Aval((3, 2), np.dtype("float64")))
>>> i, j = Affine(0, (1, 0)), Affine(0, (0, 1))
>>> VIEW_MAPS[Op.TRANSPOSE](Node(Op.TRANSPOSE, (x,), t, (("perm", (1, 0)),)), (i, j), i)
(Affine(offset=0, coefs=(0, 1), shifted=False, wraps=(), positions=()), Affine(offset=0, coefs=(1, 0), shifted=False, wraps=(), positions=()))
"""
from __future__ import annotations

from typing import Callable

from ..core.ir import ELEMENTWISE, Node, Op, Var
from ..core.library import is_array_item
from .kernel import Affine, Wrap
from .windows import window_start

IndexMap = tuple[Affine, ...]


def _broadcast_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    return broadcast_map(node.inputs[0].shape, node.out.shape, imap, zero)


def broadcast_map(src: tuple[int, ...], out: tuple[int, ...], imap: IndexMap,
                  zero: Affine) -> IndexMap:
    """How a value of shape ``src`` is read where its broadcast to ``out`` is read at
    ``imap``. Leading size-1 dimensions beyond ``out``'s (NumPy assigns a ``(1, n)`` value to
    an ``(n,)`` region) read index 0."""
    lead = len(out) - len(src)
    return tuple(zero if j < 0 or (n == 1 and out[j] != 1) else imap[j]
                 for j, n in ((lead + k, n) for k, n in enumerate(src)))


def _transpose_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    src_map: list[Affine] = [zero] * node.inputs[0].ndim
    for j, pj in enumerate(node.param["perm"]):
        src_map[pj] = imap[j]
    return tuple(src_map)


def _slice_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    p = node.param
    return tuple(_shifted(a.scaled(step, start))
                 for a, start, step in zip(imap, p["starts"], p["steps"]))


def _shifted(a: Affine) -> Affine:
    return Affine(a.offset, a.coefs, True, a.wraps, a.positions)


def _roll_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    """Along the rolled axis, index ``i`` reads ``i - shift``, plus the axis length where
    ``i < shift``."""
    axis, shift = node.param["axis"], node.param["shift"]
    a = imap[axis]
    rolled = Affine(a.offset - shift, a.coefs, True,
                    a.wraps + (Wrap(a, shift, node.out.shape[axis]),), a.positions)
    return imap[:axis] + (rolled,) + imap[axis + 1:]


# Per indexed axis of a gather at run-time positions: the 0-d integer read there and, for a
# window, its first offset (``gather_positions``).
Positions = dict[int, tuple[Var, int | None]]


def gather_positions(node: Node, producer: dict[Var, Node]) -> Positions | None:
    """Per indexed axis of a gather at run-time positions among slices, the 0-d integer it
    reads there and, for a window (``windows.window_start``), the window's first offset
    (None for one position: ``x[i]``, ``x[:, j]``, ``x[i, 1:-1]``). None when ``node`` is
    not such a gather: other indices follow NumPy's layout rules and stay library calls. A
    window is the only indexed axis (NumPy keeps its axis in place then). Such a gather is a
    view whose index map holds the positions (``gather_map``), fused like the other views
    rather than called."""
    return index_positions(node, producer) if node.op is Op.GATHER else None


def index_positions(node: Node, producer: dict[Var, Node]) -> Positions | None:
    """``gather_positions`` for the index of a gather or a scatter (``x.at[i, :].set(v)``,
    ``dynamic_update_slice``): its operands after ``x`` are the index arrays. Windows along
    several axes are taken where every item is one, arranged as an outer product
    (``numpy.ix_``: each a reshaped window along its own axis), so the result is the
    window's shape in order."""
    template = node.param["index"]
    if len(template) > node.inputs[0].ndim:
        return None
    found: Positions = {}
    lone, outer = 0, 0          # windows as 1-d vectors, windows as outer-product factors
    for axis, item in enumerate(template):
        if not is_array_item(item):
            if not (isinstance(item, tuple) and item and item[0] == "slice"):
                return None    # static integers, None and Ellipsis: NumPy's layout rules
            continue
        index, extent = node.inputs[1 + item[1]], node.inputs[0].shape[axis]
        if index.ndim == 0 and index.dtype.kind in "iu":
            found[axis] = (index, None)
        elif index.ndim == 1 and (window := window_start(index, extent, producer)):
            found[axis], lone = window, lone + 1
        elif (factor := _outer_factor(index, axis, len(template), producer)) is not None and (
                window := window_start(factor, extent, producer)):
            found[axis], outer = window, outer + 1
        else:
            return None
    if not found or (lone and len(found) > 1) or (outer and outer != len(template)):
        return None
    return found


def _outer_factor(index: Var, axis: int, ndim: int, producer: dict[Var, Node]) -> Var | None:
    """The 1-d vector that ``index`` reshapes to lie along ``axis`` of ``ndim`` (one factor of
    an outer-product index), else None."""
    node = producer.get(index)
    if (node is None or node.op is not Op.RESHAPE or index.ndim != ndim
            or any(n != 1 for k, n in enumerate(index.shape) if k != axis)):
        return None
    vector = node.inputs[0]
    return vector if vector.ndim == 1 else None


def gather_map(node: Node, imap: IndexMap, zero: Affine,
               positions: dict[int, tuple[str, int | None]]) -> IndexMap:
    """How a gather at positions (``gather_positions``) read at ``imap`` reads its source:
    an indexed axis at the ``Position`` named in ``positions`` (plus, for a window starting
    ``first`` after it, the result's index along that axis), a sliced axis as a slice, the
    axes after the index whole. (0-d index operands add no dimensions, so the result's
    dimensions are the windows, sliced and trailing axes in order.)"""
    source = node.inputs[0]
    src_map: list[Affine] = []
    j = 0
    for axis, item in enumerate(node.param["index"]):
        if is_array_item(item):
            name, first = positions[axis]
            if first is None:
                src_map.append(Affine(0, zero.coefs, positions=((name, 1),)))
                continue
            a = imap[j]
            src_map.append(Affine(a.offset + first, a.coefs, True, a.wraps,
                                  a.positions + ((name, 1),)))
        else:
            start, _, step = slice(*item[1:]).indices(source.shape[axis])
            src_map.append(_shifted(imap[j].scaled(step, start)))
        j += 1
    return tuple(src_map) + imap[j:]


def reshape_map(node: Node, imap: IndexMap, zero: Affine) -> IndexMap:
    """A reshape that only adds or drops size-1 dimensions (others read by flat index)."""
    it = iter([a for a, d in zip(imap, node.out.shape) if d != 1])
    return tuple(zero if d == 1 else next(it) for d in node.inputs[0].shape)


# How a view reads its source: the source's index map, given the view's own map.
VIEW_MAPS: dict[Op, Callable[[Node, IndexMap, Affine], IndexMap]] = {
    Op.BROADCAST: _broadcast_map,
    Op.TRANSPOSE: _transpose_map,
    Op.SLICE: _slice_map,
    Op.ROLL: _roll_map,
    Op.RESHAPE: reshape_map,
}


def same_ignoring_ones(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether two shapes differ only by size-1 dimensions (a reshape between them is an
    index map)."""
    return [d for d in a if d != 1] == [d for d in b if d != 1]


def read_through(node: Node, tag: str) -> str:
    """How a node's input is read, given how the node's output is read."""
    if node.op in ELEMENTWISE:
        return tag
    if node.op is Op.RESHAPE and same_ignoring_ones(node.inputs[0].shape, node.out.shape):
        return tag
    if node.op is Op.BROADCAST and tag in ("same", "row"):
        src, out = node.inputs[0].shape, node.out.shape
        if len(src) == 0:
            return "row"
        if len(src) == len(out):
            j = next((k for k, (a, b) in enumerate(zip(src, out)) if a != b), len(src))
            if all(d == 1 for d in src[j:]):
                return "row"
    return "other"


def below_unit_reshapes(var: Var, producer: dict[Var, Node]) -> Var:
    """The value ``var`` is a reshape of through reshapes that only add or drop ones."""
    node = producer.get(var)
    while (node is not None and node.op is Op.RESHAPE
           and same_ignoring_ones(node.inputs[0].shape, var.shape)):
        var = node.inputs[0]
        node = producer.get(var)
    return var


def transposed_source(var: Var, producer: dict[Var, Node]) -> tuple[Var, tuple[int, ...]] | None:
    """``(base, perm)`` when ``var`` is one or more transposes of ``base``
    (``var == numpy.transpose(base, perm)``), else None."""
    perm: tuple[int, ...] | None = None
    node = producer.get(var)
    while node is not None and node.op is Op.TRANSPOSE:
        step = tuple(node.param["perm"])
        perm = step if perm is None else tuple(step[j] for j in perm)
        var = node.inputs[0]
        node = producer.get(var)
    return None if perm is None else (var, perm)
