"""Advanced indexing of traced arrays: integer-array gathers (``x[idx]``, ``take``) and
functional updates (``x.at[idx].set / add / multiply / min / max / get``).

An index is split into a static template (ints, slices, None, Ellipsis and placeholders) and
its integer-array operands; NumPy applies the rebuilt index at run time, so the semantics
(broadcasting of index arrays, where the indexed dimensions go, IndexError on out-of-range
values) are NumPy's own.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from . import base as anp
from ..core import primitives as p
from ..core.dtypes import result_type
from ..core.library import indexed_shape
from ..core.ir import Op
from ..core.trace import Tracer, current_trace


def is_advanced(items) -> bool:
    return any(isinstance(it, (Tracer, list, np.ndarray, range)) for it in items)


def _index_array(it):
    """A sequence used as an index, as an array: a ``range`` or list of ints (static) as
    NumPy's, a list holding traced values stacked into one traced array."""
    if isinstance(it, range):
        return np.arange(it.start, it.stop, it.step)
    if isinstance(it, list) and anp._contains_tracer(it):
        return anp.asarray(it)
    return np.asarray(it)


def split_index(x: Tracer, index) -> tuple[tuple, list]:
    """(template, array operands) for ``index``; rejects traced boolean masks."""
    items = index if isinstance(index, tuple) else (index,)
    template: list = []
    arrays: list = []
    for it in items:
        if isinstance(it, (list, np.ndarray, range)) or isinstance(it, Tracer):
            if not isinstance(it, Tracer):
                it = _index_array(it)
            if it.dtype == np.bool_:
                if isinstance(it, Tracer):
                    raise IndexError(
                        f"boolean mask indexing of a traced array {x.aval} is not supported: "
                        f"the shape of x[mask] depends on the mask's values. Use "
                        f"anp.where(mask, x, fill) to keep the shape, or index outside jit.")
                for part in np.nonzero(it):
                    template.append(("array", len(arrays)))
                    arrays.append(part)
                continue
            if it.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            template.append(("array", len(arrays)))
            arrays.append(it)
        elif isinstance(it, slice):
            template.append(("slice", it.start, it.stop, it.step))
        elif it is None or it is Ellipsis or isinstance(it, (int, np.integer)):
            template.append(it if it is None or it is Ellipsis else int(it))
        else:
            raise IndexError(f"unsupported index {it!r} of type {type(it).__name__}")
    return tuple(template), arrays


def gather(x: Tracer, index):
    template, arrays = split_index(x, index)
    shape = indexed_shape(x.shape, template, arrays)
    return p.bind_library(Op.GATHER, (x, *arrays), p.Aval(shape, x.dtype), None,
                          index=template)


def scatter(x: Tracer, index, updates, mode: str):
    template, arrays = split_index(x, index)
    shape = indexed_shape(x.shape, template, arrays)
    upd = anp.asarray(updates) if not p.is_python_scalar(updates) else updates
    upd_aval = p.aval_of(upd)
    try:
        np.broadcast_shapes(upd_aval.shape, shape)
    except ValueError:
        raise ValueError(f"x.at[...].{mode}: updates of shape {upd_aval.shape} cannot be "
                         f"broadcast to the indexed shape {shape}") from None
    if mode != "set" and not p.is_python_scalar(upd):
        wide, _ = result_type(x.aval, upd_aval)
        if wide != x.dtype:
            # NumPy's ``x[i] += u`` and JAX's scatter both combine in the promoted dtype and
            # round once into x's dtype; casting ``u`` first would round twice.
            return scatter(x.astype(wide), index, upd, mode).astype(x.dtype)
    if p.is_python_scalar(upd) or upd_aval.dtype != x.dtype:
        upd = anp.asarray(upd, dtype=x.dtype)  # a set (or a weak scalar) takes x's dtype
    return p.bind_library(Op.SCATTER, (x, *arrays, upd), x.aval, None, index=template,
                          mode=mode)


class IndexUpdateRef:
    """``x.at[index]``: functional updates that return a new array."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self):
        return self.array[self.index]

    def set(self, values):
        return scatter(self.array, self.index, values, "set")

    def add(self, values):
        return scatter(self.array, self.index, values, "add")

    def multiply(self, values):
        return scatter(self.array, self.index, values, "multiply")

    mul = multiply

    def min(self, values):  # noqa: A003
        return scatter(self.array, self.index, values, "min")

    def max(self, values):  # noqa: A003
        return scatter(self.array, self.index, values, "max")


class IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)


def getitem(x: Tracer, index):
    """Basic indexing of a traced array: ints, slices, None and Ellipsis."""
    items = index if isinstance(index, tuple) else (index,)
    if is_advanced(items):
        return gather(x, index)
    for it in items:
        if not (it is None or it is Ellipsis or isinstance(it, (slice, int, np.integer))):
            raise IndexError(f"unsupported index {it!r} of type {type(it).__name__}")
    consumed = builtins.sum(1 for it in items if it is not None and it is not Ellipsis)
    if builtins.sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{consumed} were indexed")
    expanded: list = []
    for it in items:
        if it is Ellipsis:
            expanded.extend([slice(None)] * (x.ndim - consumed))
        else:
            expanded.append(it)
    if Ellipsis not in items:
        expanded.extend([slice(None)] * (x.ndim - consumed))
    starts, steps, sliced_shape, final_shape = [], [], [], []
    dim = 0
    for it in expanded:
        if it is None:
            final_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(it, slice):
            start, stop, step = it.indices(n)
            length = len(range(start, stop, step))
            starts.append(start if length else 0)
            steps.append(step)
            sliced_shape.append(length)
            final_shape.append(length)
        else:
            i = operator.index(it)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            starts.append(i % n)
            steps.append(1)
            sliced_shape.append(1)
        dim += 1
    out = p.bind_slice(x, tuple(starts), tuple(steps), tuple(sliced_shape))
    return p.bind_reshape(out, tuple(final_shape))


def _cannot_write(x: Tracer, reason: str) -> TypeError:
    return TypeError(
        f"x[idx] = v cannot update the traced array {x.aval}: {reason}. Use the functional "
        f"form x = x.at[idx].set(v), which returns the updated array.")


def setitem(x: Tracer, index, value) -> None:
    """``x[index] = value``: ``x`` becomes the updated array, as NumPy writes in place, for
    an array this function computed that nothing else shows: not an argument (NumPy would
    change the caller's array), not a view of another array (NumPy would write through to
    it), and with no view of it still in use (NumPy would show the change through it). A
    traced boolean mask of ``x``'s shape takes a value that broadcasts to ``x``
    (``x[x < 0] = 0``)."""
    ctx = x.ctx
    if current_trace() is not ctx:
        raise _cannot_write(x, "it belongs to another trace (an enclosing function's)")
    arguments = {v.id for v in ctx.inputs} | {v.id for v, _ in ctx.lifted}
    root_id, root = ctx.view_roots.get(x.ir_var.id, (x.ir_var.id, None))
    if root_id in arguments:
        raise _cannot_write(x, "it is an argument of the traced function (or a view of one), "
                               "and a compiled function cannot change the caller's array")
    if root is not None and root() is not None:
        raise _cannot_write(x, "it is a view of another array in use, and NumPy would write "
                               "through to that array")
    if any(view() is not None and view() is not x
           for view in ctx.live_views.get(x.ir_var.id, ())):
        raise _cannot_write(x, "a view of it (a slice, reshape or transpose) is still in use, "
                               "and NumPy would show the change through it")
    mask = index if isinstance(index, Tracer) and index.dtype == np.bool_ else None
    if mask is not None:
        value = anp.asarray(value) if not p.is_python_scalar(value) else value
        try:
            np.broadcast_shapes(p.aval_of(value).shape, x.shape)
        except ValueError:
            raise _cannot_write(x, f"a traced boolean mask selects a number of elements only "
                                   f"known at run time, so the value must broadcast to "
                                   f"{x.shape} (got {p.aval_of(value).shape})") from None
        if mask.shape != x.shape:
            raise IndexError(f"boolean index of shape {mask.shape} does not match the array's "
                             f"shape {x.shape}")
        updated = anp.where(mask, anp.astype(anp.asarray(value), x.dtype), x)
    else:
        updated = scatter(x, index, value, "set")
    x.ir_var = updated.ir_var
    x.sources = x.sources | updated.sources

