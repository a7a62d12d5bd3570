"""Updates at run-time positions as selects, so that they fuse with what computes and reads
the updated value; other updates moved below the elementwise step that reads their result.

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

An update that is no select (a window of ``dynamic_update_slice``, or one of a value not
computed elementwise) and whose result only an elementwise step reads moves below that step:
``g(x.at[w].set(u), s)`` is ``g(x, s).at[w].set(g(u, s))`` for scalars ``s``
(``updates_sunk``). The step then fuses with what computes ``x``, and the update stores the
region into its result in place (``passes.regions``): one pass over the array and a region
instead of three passes.
"""
from __future__ import annotations

import numpy as np

from ..core.dtypes import Aval
from ..core.ir import ELEMENTWISE, Graph, Node, Op, Var
from ..core.library import indexed_shape, is_array_item, is_position_item
from .regions import MODE_OPS
from .rewrites import Emitter, rewrite_nodes
from .simplify import eliminate_dead_code

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


def updates_sunk(graph: Graph) -> Graph:
    """``graph`` with each ``set`` update whose result only one elementwise step reads moved
    below that step, repeatedly (see the module's docstring)."""
    while True:
        producer = {n.out: n for n in graph.nodes}
        readers: dict[Var, list[Node]] = {}
        for node in graph.nodes:
            for v in set(node.inputs):
                readers.setdefault(v, []).append(node)
        outputs = set(graph.outputs)
        below: dict[Var, Node] = {}     # a step's output -> the update moving below it
        for node in graph.nodes:
            found = [producer[v] for v in node.inputs
                     if v in producer and _sinks_below(producer[v], node, producer, readers,
                                                       outputs)]
            if found:
                below[node.out] = found[0]
        if not below:
            return graph
        graph = eliminate_dead_code(rewrite_nodes(
            graph, lambda n: n.out in below,
            lambda n, new_var: _sunk(n, below[n.out], producer, new_var)))


def _sinks_below(update: Node, step: Node, producer: dict[Var, Node],
                 readers: dict[Var, list[Node]], outputs: set[Var]) -> bool:
    """Whether ``update`` moves below ``step``: a ``set`` through ints, slices and index
    arrays whose result ``step``, elementwise over its shape, alone reads, with no other
    operand but scalars (a whole array read again in the region would be read after the
    step: a donated input's buffer could then not take the step's result)."""
    if (update.op is not Op.SCATTER or update.param["mode"] != "set"
            or update.out in outputs or readers.get(update.out) != [step]
            or step.op not in ELEMENTWISE or step.extra or step.out.shape != update.out.shape):
        return False
    if any(v is not update.out and _scalar(v, producer) is None for v in step.inputs):
        return False
    return all(is_position_item(item) for item in update.param["index"])


def _scalar(v: Var, producer: dict[Var, Node]) -> Var | None:
    """The 0-d value ``v`` is, or is a broadcast of; else None."""
    if v.ndim == 0:
        return v
    node = producer.get(v)
    if node is not None and node.op is Op.BROADCAST and node.inputs[0].ndim == 0:
        return node.inputs[0]
    return None


def _sunk(step: Node, update: Node, producer: dict[Var, Node], new_var) -> list[Node]:
    """``step`` reading the updated value's base, then the update of its result with
    ``step`` applied to the update (and the same scalars)."""
    x, arrays, updates = update.inputs[0], update.inputs[1:-1], update.inputs[-1]
    template = update.param["index"]
    region = indexed_shape(x.shape, template, [a.aval for a in arrays])
    emit = Emitter(new_var)
    if updates.dtype != x.dtype:
        updates = emit.add(Op.CAST, (updates,), Aval(updates.shape, x.dtype), dtype=x.dtype)
    if updates.ndim > len(region):     # leading ones NumPy drops to assign
        kept = updates.shape[updates.ndim - len(region):]
        updates = emit.add(Op.RESHAPE, (updates,), Aval(kept, updates.dtype), shape=kept)
    updates = emit.spread(updates, region)

    def in_region(v: Var) -> Var:
        if v is update.out:
            return updates
        scalar = _scalar(v, producer)
        assert scalar is not None     # _sinks_below
        return emit.spread(scalar, region)

    whole = emit.add(step.op, tuple(x if v is update.out else v for v in step.inputs),
                     step.out.aval, **step.param)
    part = emit.add(step.op, tuple(in_region(v) for v in step.inputs),
                    Aval(region, step.out.dtype), **step.param)
    emit.add(Op.SCATTER, (whole, *arrays, part), step.out.aval, target=step.out,
             **update.param)
    return emit.nodes
