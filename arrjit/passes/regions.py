"""Region updates: ``x.at[ints and slices].set(v)`` (or ``add``, ``multiply``, ``min``,
``max``) fused into a loop nest as a store; on targets whose kernels index at run-time
positions also ``x.at[i, :]`` with a traced ``i`` and ``dynamic_update_slice`` windows.

Such an update writes a rectangular region of ``x``. A loop nest over the region's shape can
compute ``v`` there and store it through the region's affine map straight into ``x``'s buffer:
no copy of ``x``, no buffer for ``v``. That is only valid in place, so ``x`` must be a value
this program computed into a buffer of its own (a loop nest's output, or another region
update's result) that nothing but this update reads and that is not returned. A chain of
updates of one buffer shares it; ``Region.root`` names the value whose buffer that is. Two
updates of one buffer may share a loop nest, or run in either order, only where their regions
are disjoint (``disjoint``).

>>> import numpy as np
>>> shape, access, ranges = place(np.zeros((4, 5)).shape, (("slice", 1, None, None), 2))
>>> shape, access.offset, access.coefs, ranges
((3,), 7, (5,), (range(1, 4), range(2, 3)))
"""
from __future__ import annotations

import math
import operator
from collections import Counter
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..core.ir import REDUCTIONS, Graph, Node, Op, Var
from ..core.library import build_index, is_array_item
from .kernel import Affine, c_strides
from .views import Positions, index_positions

# the combining op of each scatter mode (None: the update replaces the old value)
MODE_OPS: dict[str, Op | None] = {"set": None, "add": Op.ADD, "multiply": Op.MUL,
                                  "min": Op.MINIMUM, "max": Op.MAXIMUM}

# Updates of one buffer per loop nest (each is a store; past this they continue in the next).
MAX_REGION_STORES = 64

# Overlap tests walk the shorter of two strided ranges; past this length two ranges that
# share an interval are taken to overlap (the updates then run one after the other).
_WALK_LIMIT = 4096


@dataclass(frozen=True)
class Region:
    base: Var                    # x: the value updated
    root: Var                    # the value whose buffer holds x and the result
    updates: Var                 # v
    mode: str
    shape: tuple[int, ...]       # the region's shape: the loop domain of its nest
    access: Affine               # flat position in the buffer, over the region's loops
    axes: tuple[range, ...]      # the positions the region covers along each axis of x
    # run-time positions (``x.at[i, :]``, ``dynamic_update_slice``): per indexed axis, the
    # 0-d integer and a window's first offset (``views.index_positions``); ``access`` holds
    # the rest of the offset, ``axes`` the whole axis there (the region may be anywhere on it)
    positions: tuple[tuple[int, Var, int | None], ...] = ()


def place(shape: tuple[int, ...], template: tuple
          ) -> tuple[tuple[int, ...], Affine, tuple[range, ...]] | None:
    """The region ``x[index]`` covers in a C-ordered ``x`` of ``shape``: its shape, its flat
    positions as an affine map over its own indices, and its positions along each axis of
    ``x``. None where the index is not ints, slices, None and Ellipsis, or the region is
    empty."""
    if any(is_array_item(item) or isinstance(item, (bool, np.bool_)) for item in template):
        return None
    index = build_index(template, ())
    axes = _axis_positions(shape, index)
    if axes is None or any(len(r) == 0 for r in axes):
        return None
    # indexing an int8 view whose byte strides are the element strides of ``shape`` gives
    # the region's offset and strides in elements, as NumPy computes them
    probe = as_strided(np.zeros(1, np.int8), shape=shape, strides=c_strides(shape))
    region = probe[index if Ellipsis in index else index + (Ellipsis,)]  # a view, even 0-d
    offset = region.__array_interface__["data"][0] - probe.__array_interface__["data"][0]
    return region.shape, Affine(offset, tuple(region.strides), True), axes


def _axis_positions(shape: tuple[int, ...], index: tuple) -> tuple[range, ...] | None:
    items = [item for item in index if item is not None]
    if items.count(Ellipsis) > 1:
        return None
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (len(shape) - len(items) + 1)
    if len(items) > len(shape):
        return None
    items += [slice(None)] * (len(shape) - len(items))
    out = []
    for item, n in zip(items, shape):
        if isinstance(item, slice):
            out.append(range(*item.indices(n)))
            continue
        i = operator.index(item)
        i = i + n if i < 0 else i
        if not 0 <= i < n:
            return None
        out.append(range(i, i + 1))
    return tuple(out)


def disjoint(a: Region, b: Region) -> bool:
    """Whether two regions of one buffer share no element."""
    return any(not _meet(ra, rb) for ra, rb in zip(a.axes, b.axes))


def _meet(a: range, b: range) -> bool:
    (a_lo, a_hi), (b_lo, b_hi) = sorted((a[0], a[-1])), sorted((b[0], b[-1]))  # O(1)
    if a_hi < b_lo or b_hi < a_lo:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) > _WALK_LIMIT:
        return True
    return any(i in long_ for i in short)


def _has_own_buffer(x: Var, producer: dict[Var, Node], calls: frozenset[Op]) -> bool:
    """Whether ``x``, stored, is a C-ordered buffer a loop nest of this program writes (not an
    input's, a constant's or a library call's)."""
    src = producer.get(x)
    return src is not None and src.op is not Op.CONST and src.op not in calls


def output_views(graph: Graph, producer: dict[Var, Node], readers: Counter[Var],
                 calls: frozenset[Op], regions: dict[Var, Region]) -> dict[Var, Var]:
    """Outputs that are a reshape of a value with a buffer of its own that nothing else reads
    (``z.reshape(n * n, 3)`` of an updated grid), by the value they reshape: where that value
    is stored anyway, the output is a view of its buffer rather than a copy."""
    outputs = Counter(graph.outputs)
    views: dict[Var, Var] = {}
    for n in graph.nodes:
        if n.op is not Op.RESHAPE or outputs[n.out] != 1 or readers[n.out]:
            continue
        src = n.inputs[0]
        if (readers[src] == 1 and not outputs[src]
                and (src in regions or _has_own_buffer(src, producer, calls))):
            views[n.out] = src
    return views


def placeable_reductions(graph: Graph, producer: dict[Var, Node], readers: Counter[Var],
                         regions: dict[Var, Region]) -> dict[Var, Region]:
    """Reductions whose only reader is a region update setting exactly their shape
    (``out.at[row].set(x.sum(axis=0))``), by the region their kernel may store them into."""
    outputs = set(graph.outputs)
    found = {}
    for region in regions.values():
        v = region.updates
        node = producer.get(v)
        if (node is not None and node.op in REDUCTIONS and region.mode == "set"
                and not region.positions
                and v.shape == region.shape and readers[v] == 1 and v not in outputs):
            found[v] = region
    return found


def reader_counts(graph: Graph) -> Counter[Var]:
    """How many node inputs read each value (outputs not counted)."""
    return Counter(v for n in graph.nodes for v in n.inputs)


def find_regions(graph: Graph, producer: dict[Var, Node], readers: Counter[Var],
                 calls: frozenset[Op], positions: bool = False) -> dict[Var, Region]:
    """The scatters of ``graph`` that can run as region stores, by result. Where the update
    is a reshape (read by nothing else) of a value ``u`` and the region is one run of the
    buffer, the region is taken in ``u``'s shape and stores ``u``: a reshape that merges a
    broadcast axis (``repeat``) is not an index map, a run of a buffer in another shape is.
    ``positions``: the target's kernels index at run-time positions, so a scatter at 0-d
    positions among slices, or at windows (``views.index_positions``), is a region too
    (``Region.positions``)."""
    outputs = set(graph.outputs)
    regions: dict[Var, Region] = {}
    for n in graph.nodes:
        if n.op is not Op.SCATTER or n.param["mode"] not in MODE_OPS:
            continue
        x, updates = n.inputs[0], n.inputs[-1]
        template, found = tuple(n.param["index"]), None
        if len(n.inputs) != 2:
            found = index_positions(n, producer) if positions else None
            if found is None:
                continue
            template = _static_template(template, found, n.inputs)
        if readers[x] != 1 or x in outputs:
            continue
        if x in regions:
            root = regions[x].root
        elif _has_own_buffer(x, producer, calls):
            root = x
        else:
            continue
        placed = place(x.shape, template)
        if placed is None:
            continue
        shape, access, axes = placed
        held: tuple[tuple[int, Var, int | None], ...] = ()
        if found is not None:
            held = tuple((axis, index, first) for axis, (index, first) in sorted(found.items()))
            axes = tuple(range(n_axis) if axis in found else r
                         for axis, (r, n_axis) in enumerate(zip(axes, x.shape)))
        source = producer.get(updates)
        if (source is not None and source.op is Op.RESHAPE and readers[updates] == 1
                and updates not in outputs and updates.shape == shape
                and access.coefs == c_strides(shape) and not access.wraps):
            updates, shape = source.inputs[0], source.inputs[0].shape
            access = Affine(access.offset, c_strides(shape), access.shifted)
        regions[n.out] = Region(x, root, updates, n.param["mode"], shape, access, axes, held)
    return regions


def _static_template(template: tuple, found: Positions, operands: tuple[Var, ...]) -> tuple:
    """``template`` with each run-time position at 0 (a window: its static run from its first
    offset), so that ``place`` gives the region's shape and the rest of its offset."""
    out = []
    for axis, item in enumerate(template):
        if axis not in found:
            out.append(item)
            continue
        first = found[axis][1]
        length = math.prod(operands[1 + item[1]].shape)    # a window's vector or factor
        out.append(0 if first is None else ("slice", first, first + length, None))
    return tuple(out)


def reshapes_stored_as_regions(graph: Graph, regions: dict[Var, Region]) -> set[Var]:
    """The reshapes that regions store in their source's shape (``find_regions``)."""
    updates = {n.out: n.inputs[1] for n in graph.nodes if n.out in regions}
    return {updates[y] for y, r in regions.items() if r.updates is not updates[y]}


def unfilled_roots(graph: Graph, producer: dict[Var, Node],
                   regions: dict[Var, Region]) -> set[Var]:
    """Roots of region chains (a broadcast constant, a join's zero) whose ``set`` regions
    cover the buffer exactly, each element once: nothing reads the constant, so no loop nest
    writes it; the regions' stores fill the buffer."""
    chains: dict[Var, list[Region]] = {}
    for r in regions.values():
        chains.setdefault(r.root, []).append(r)
    found = set()
    for root, chain in chains.items():
        node = producer.get(root)
        if node is None or node.op is not Op.BROADCAST or node.inputs[0].ndim != 0:
            continue
        fill = producer.get(node.inputs[0])
        if (fill is None or fill.op is not Op.CONST
                or any(r.mode != "set" or r.positions for r in chain)):
            continue
        if sum(int(np.prod(r.shape)) for r in chain) != root.aval.size:
            continue
        if all(disjoint(a, b) for k, a in enumerate(chain) for b in chain[k + 1:]):
            found.add(root)
    return found
