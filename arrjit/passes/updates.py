"""Updates at run-time positions as selects, so that they fuse with what computes and reads
the updated value.

``(x * 2).at[i].set(v) + 1`` as a region store (``passes.regions``) computes ``x * 2`` into a
buffer, stores row ``i`` into it, and reads the buffer back for the sum: two passes over the
array. Written as ``select(row == i, v, x * 2) + 1`` it is one loop nest: nothing stored but
the result. That is the better form where the updated value is itself computed elementwise
(it is then computed inside the nest anyway) and the update is not inside a loop body (where
a region store costs the region, not the array, per iteration).

The position is NumPy's: it is read through a gather from a constant ``arange`` along its
axis, a gather at a run-time position that kernels check (``kernel.Position``: NumPy's
``IndexError`` naming the axis) and count from the end, and compared with the ``arange``
read at the loop's index.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> from arrjit.core.ir import Graph, Node, Var, make_params
>>> f64, i64 = np.dtype("float64"), np.dtype("int64")
>>> x, y, z = (Var(k, Aval((3, 4), f64)) for k in range(3))
>>> i, v = Var(3, Aval((), i64)), Var(4, Aval((), f64))
>>> g = Graph((x, i, v), (Node(Op.EXP, (x,), y), Node(Op.SCATTER, (y, i, v), z,
...           make_params(index=(("array", 0),), mode="add"))), (z,))
>>> sorted({n.op.value for n in updates_as_selects(g).nodes})
['add', 'broadcast', 'const', 'equal', 'exp', 'gather', 'reshape', 'select']
"""
from __future__ import annotations

import numpy as np

from ..core.dtypes import Aval
from ..core.ir import ELEMENTWISE, Graph, Node, Op, Var
from ..core.library import is_array_item
from .regions import MODE_OPS
from .rewrites import Emitter, rewrite_nodes

_FULL = ("slice", None, None, None)


def updates_as_selects(graph: Graph) -> Graph:
    """``graph`` with each update at 0-d run-time positions among whole axes
    (``y.at[i].set(v)``, ``y.at[:, j].add(v)``, ``y.at[i, j].max(v)``) of a value computed
    elementwise written as a select (see the module's docstring)."""
    producer = {n.out: n for n in graph.nodes}
    return rewrite_nodes(graph, lambda n: _selectable(n, producer), _as_select)


def _selectable(node: Node, producer: dict[Var, Node]) -> bool:
    if node.op is not Op.SCATTER or node.param["mode"] not in MODE_OPS or len(node.inputs) < 3:
        return False
    x, updates, template = node.inputs[0], node.inputs[-1], node.param["index"]
    source = producer.get(x)
    if (source is None or source.op not in ELEMENTWISE or updates.dtype != x.dtype
            or len(template) > x.ndim or x.aval.size == 0):
        return False
    for item in template:
        if is_array_item(item):
            index = node.inputs[1 + item[1]]
            if index.ndim != 0 or index.dtype.kind not in "iu":
                return False
        elif tuple(item) != _FULL:
            return False
    return True


def _as_select(node: Node, new_var) -> list[Node]:
    """The nodes computing ``node``'s update as ``select(at the positions, new, old)``."""
    x, updates, out = node.inputs[0], node.inputs[-1], node.out
    shape, ndim = x.shape, x.ndim
    emit = Emitter(new_var)
    flag = Aval(shape, np.dtype(bool))
    at: Var | None = None
    positioned = []
    for axis, item in enumerate(node.param["index"]):
        if not is_array_item(item):
            continue
        positioned.append(axis)
        along = [1] * ndim
        along[axis] = shape[axis]
        steps = np.arange(shape[axis], dtype=np.int64).reshape(along)
        arange = emit.constant(steps)
        # the position, checked and counted from the end as NumPy does, by a gather
        picked_shape = tuple(1 for k in range(ndim) if k != axis)
        picked = emit.add(Op.GATHER, (arange, node.inputs[1 + item[1]]),
                          Aval(picked_shape, steps.dtype),
                          index=(_FULL,) * axis + (("array", 0),))
        position = emit.add(Op.RESHAPE, (picked,), Aval((), steps.dtype), shape=())
        here = emit.add(Op.EQ, (emit.spread(arange, shape), emit.spread(position, shape)), flag)
        at = here if at is None else emit.add(Op.LOGICAL_AND, (at, here), flag)
    assert at is not None
    # the update as NumPy assigns it: broadcast over the region, then along the positions
    region = tuple(n for k, n in enumerate(shape) if k not in positioned)
    if updates.ndim > len(region):     # leading ones NumPy drops to assign
        kept = updates.shape[updates.ndim - len(region):]
        updates = emit.add(Op.RESHAPE, (updates,), Aval(kept, updates.dtype), shape=kept)
    if updates.shape != region:
        updates = emit.add(Op.BROADCAST, (updates,), Aval(region, updates.dtype), shape=region)
    lifted = tuple(1 if k in positioned else n for k, n in enumerate(shape))
    if lifted != region:
        updates = emit.add(Op.RESHAPE, (updates,), Aval(lifted, updates.dtype), shape=lifted)
    new = emit.spread(updates, shape)
    combine = MODE_OPS[node.param["mode"]]
    if combine is not None:
        new = emit.add(combine, (x, new), x.aval)
    emit.add(Op.SELECT, (at, new, x), out.aval, target=out)
    return emit.nodes
