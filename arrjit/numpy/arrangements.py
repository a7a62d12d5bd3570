"""Rearrangements of ``arrjit.numpy`` built from views, joins and sorts: ``append``,
``insert``, ``delete``, ``resize``, ``rot90``, ``rollaxis``, ``column_stack``, ``dstack``,
``array_split`` and the ``*split`` family, ``block``, ``diagflat``, ``kron``, ``lexsort``,
``partition``/``argpartition`` (a full sort: a valid partition), ``sort_complex``,
``choose``, ``select`` and ``piecewise``. Positions and counts are static.

>>> import numpy as np, arrjit
>>> arrjit.jit(lambda x: insert(x, 1, -1.0))(np.arange(3.0))
array([ 0., -1.,  1.,  2.])
>>> arrjit.jit(lambda x: select([x < 1, x > 1], [x, x * 10], default=-1.0))(np.arange(3.0))
array([ 0., -1., 20.])
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from . import base as anp
from . import shapes
from ..core import primitives as p
from ..core.dtypes import result_type
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _sequence_traced(xs: Sequence[Any]) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def append(arr, values, axis=None):
    """``numpy.append``: ``values`` joined after ``arr`` (both flattened when ``axis`` is
    None)."""
    if not _traced(arr, values):
        return np.append(arr, values, axis=axis)
    arr, values = anp.asarray(arr), anp.asarray(values)
    if axis is None:
        return shapes.concatenate([anp.ravel(arr), anp.ravel(values)])
    return shapes.concatenate([arr, values], axis=axis)


def _positions(obj, n: int, what: str) -> np.ndarray:
    if isinstance(obj, Tracer):
        raise TypeError(f"anp.{what}: the positions must be static (they decide the result's "
                        f"shape); pass them as a Python int, slice or NumPy array")
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    return np.asarray(obj)


def delete(arr, obj, axis=None):
    """``numpy.delete``: ``arr`` without the entries at the static positions ``obj``."""
    if not _traced(arr):
        return np.delete(arr, obj, axis=axis)
    arr = anp.asarray(arr)
    if axis is None:
        arr, axis = anp.ravel(arr), 0
    axis = anp._normalize_axis(axis, arr.ndim, "axis")
    n = arr.shape[axis]
    drop = _positions(obj, n, "delete")
    if drop.dtype == np.bool_:
        keep = np.flatnonzero(~drop)
    else:
        keep = np.setdiff1d(np.arange(n), np.where(drop < 0, drop + n, drop))
    return shapes.take(arr, keep, axis=axis)


def insert(arr, obj, values, axis=None):
    """``numpy.insert``: ``values`` placed before the static positions ``obj`` (one block
    for a single position, one value each for a sequence), by NumPy's broadcasting rules."""
    if not _traced(arr, values):
        return np.insert(arr, obj, values, axis=axis)
    arr = anp.asarray(arr)
    if axis is None:
        arr, axis = anp.ravel(arr), 0
    axis = anp._normalize_axis(axis, arr.ndim, "axis")
    n = arr.shape[axis]
    positions = _positions(obj, n + 1, "insert")
    values = anp.asarray(values, dtype=arr.dtype)
    values = anp.reshape(values, (1,) * (arr.ndim - values.ndim) + tuple(values.shape))
    if positions.ndim == 0:
        values = anp.moveaxis(values, 0, axis)
        positions = np.full(values.shape[axis], int(positions))
    positions = np.where(positions < 0, positions + n, positions)
    count = len(positions)
    block = anp.broadcast_to(values, tuple(count if d == axis else size
                                           for d, size in enumerate(arr.shape)))
    # where each row of the result comes from: an old row, or the k-th inserted one
    final = positions.copy()
    final[np.argsort(positions, kind="stable")] += np.arange(count)
    source = np.empty(n + count, np.int64)
    source[final] = n + np.arange(count)
    source[np.setdiff1d(np.arange(n + count), final)] = np.arange(n)
    joined = shapes.concatenate([arr, block], axis=axis)
    return shapes.take(joined, source, axis=axis)


def resize(a, new_shape):
    """``numpy.resize``: the flattened data repeated to fill ``new_shape``."""
    if not _traced(a):
        return np.resize(a, new_shape)
    a = anp.ravel(anp.asarray(a))
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    total = int(np.prod(shape, dtype=np.int64))
    if a.shape[0] == 0 or total == 0:
        return anp.zeros(shape, a.dtype)
    repeats = -(-total // a.shape[0])
    return anp.reshape(shapes.tile(a, repeats)[:total], shape)


def rot90(m, k: int = 1, axes=(0, 1)):
    """``numpy.rot90``: rotated by 90 degrees ``k`` times in the plane ``axes`` (a view)."""
    if not _traced(m):
        return np.rot90(m, k, axes)
    m = anp.asarray(m)
    a0, a1 = (anp._normalize_axis(ax, m.ndim, "axes") for ax in axes)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return shapes.flip(shapes.flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return anp.transpose(shapes.flip(m, a1), perm)
    return shapes.flip(anp.transpose(m, perm), a1)


def rollaxis(a, axis: int, start: int = 0):
    """``numpy.rollaxis``: ``axis`` moved before ``start``."""
    if not _traced(a):
        return np.rollaxis(a, axis, start)
    a = anp.asarray(a)
    axis = anp._normalize_axis(axis, a.ndim, "axis")
    start = start + a.ndim if start < 0 else start
    if not 0 <= start <= a.ndim:
        raise np.exceptions.AxisError(f"start={start} is out of bounds for {a.ndim} dims")
    if axis < start:
        start -= 1
    return anp.moveaxis(a, axis, start) if axis != start else a


def column_stack(tup):
    """``numpy.column_stack``: 1-d arrays as columns, 2-d as they are, side by side."""
    tup = list(tup)
    if not _sequence_traced(tup):
        return np.column_stack(tup)
    columns = [anp.reshape(anp.asarray(a), (-1, 1)) if anp.ndim(a) < 2 else anp.asarray(a)
               for a in tup]
    return shapes.concatenate(columns, axis=1)


def dstack(tup):
    """``numpy.dstack``: joined along the third axis."""
    tup = list(tup)
    if not _sequence_traced(tup):
        return np.dstack(tup)
    return shapes.concatenate(list(shapes.atleast_3d(*tup)) if len(tup) > 1
                              else [shapes.atleast_3d(tup[0])], axis=2)


def array_split(ary, indices_or_sections, axis: int = 0):
    """``numpy.array_split``: like ``split``, sections need not divide the axis evenly."""
    if not _traced(ary):
        return np.array_split(ary, indices_or_sections, axis)
    ary = anp.asarray(ary)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.cumsum(sizes)[:-1].tolist()
    else:
        bounds = list(indices_or_sections)
    return shapes.split(ary, bounds, axis=axis)


def hsplit(ary, indices_or_sections):
    """``numpy.hsplit``: ``split`` along the second axis (the first for 1-d)."""
    if not _traced(ary):
        return np.hsplit(ary, indices_or_sections)
    return shapes.split(ary, indices_or_sections, axis=1 if anp.ndim(ary) > 1 else 0)


def _split_along(np_fn, axis: int, which: str):
    """``np_fn``: ``split`` along ``axis`` of an array of at least ``axis + 1`` dimensions."""
    def split_along(ary, indices_or_sections):
        if not _traced(ary):
            return np_fn(ary, indices_or_sections)
        if anp.ndim(ary) <= axis:
            raise ValueError(f"{np_fn.__name__} only works on arrays of {axis + 1} or more "
                             f"dimensions")
        return shapes.split(ary, indices_or_sections, axis=axis)
    split_along.__name__ = split_along.__qualname__ = np_fn.__name__
    split_along.__doc__ = (f"``numpy.{np_fn.__name__}``: ``split`` along the {which} axis (at "
                           f"least {axis + 1}-d).")
    return split_along


vsplit = _split_along(np.vsplit, 0, "first")
dsplit = _split_along(np.dsplit, 2, "third")


def _depth(arrays) -> int:
    return 1 + _depth(arrays[0]) if isinstance(arrays, list) and arrays else 0


def block(arrays):
    """``numpy.block``: an array assembled from nested lists of blocks (the innermost list
    joins along the last axis)."""
    leaves: list = []

    def collect(item):
        if isinstance(item, list):
            for x in item:
                collect(x)
        else:
            leaves.append(item)
    collect(arrays)
    if not _sequence_traced(leaves):
        return np.block(arrays)
    depth = _depth(arrays)
    ndim = max(depth, max(anp.ndim(x) for x in leaves))

    def assemble(item, level: int):
        if not isinstance(item, list):
            x = anp.asarray(item)
            return anp.reshape(x, (1,) * (ndim - x.ndim) + tuple(x.shape))
        parts = [assemble(x, level + 1) for x in item]
        return shapes.concatenate(parts, axis=ndim - depth + level)
    return assemble(arrays, 0)


def diagflat(v, k: int = 0):
    """``numpy.diagflat``: the flattened input on the ``k``-th diagonal of a square matrix."""
    if not _traced(v):
        return np.diagflat(v, k)
    return shapes.diag(anp.ravel(anp.asarray(v)), k)


def kron(a, b):
    """``numpy.kron``: the Kronecker product (blocks ``a[i, j] * b``)."""
    if not _traced(a, b):
        return np.kron(a, b)
    a, b = anp.asarray(a), anp.asarray(b)
    nd = max(a.ndim, b.ndim)
    a = anp.reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    b = anp.reshape(b, (1,) * (nd - b.ndim) + tuple(b.shape))
    expanded_a = anp.reshape(a, tuple(d for n in a.shape for d in (n, 1)))
    expanded_b = anp.reshape(b, tuple(d for n in b.shape for d in (1, n)))
    return anp.reshape(anp.multiply(expanded_a, expanded_b),
                       tuple(x * y for x, y in zip(a.shape, b.shape)))


def lexsort(keys, axis: int = -1):
    """``numpy.lexsort``: the stable order by the last key, then the one before, ..."""
    keys = list(keys) if not isinstance(keys, Tracer) else [keys[k] for k in
                                                            range(keys.shape[0])]
    if not _sequence_traced(keys):
        return np.lexsort(keys, axis)
    order = shapes.argsort(keys[0], axis=axis, stable=True)
    for key in keys[1:]:
        rank = shapes.take_along_axis(anp.asarray(key), order, axis)
        order = shapes.take_along_axis(order, shapes.argsort(rank, axis=axis, stable=True),
                                       axis)
    return order


def partition(a, kth, axis: int = -1, kind: str = "introselect", order=None):
    """``numpy.partition``: the ``kth`` element in its sorted place, smaller ones before it,
    larger after. Inside jit the whole axis is sorted (a valid partition)."""
    if not _traced(a):
        return np.partition(a, kth, axis, kind, order)
    return shapes.sort(a, axis=axis)


def argpartition(a, kth, axis: int = -1, kind: str = "introselect", order=None):
    """``numpy.argpartition``: the indices that ``partition`` ``a`` (a stable full argsort
    inside jit)."""
    if not _traced(a):
        return np.argpartition(a, kth, axis, kind, order)
    return shapes.argsort(a, axis=axis, stable=True)


def sort_complex(a):
    """``numpy.sort_complex``: sorted by real part, then imaginary part, as complex."""
    if not _traced(a):
        return np.sort_complex(a)
    a = anp.asarray(a)
    if a.dtype.kind == "c":
        dtype = a.dtype
    else:        # NumPy's rule: complex64 for 8- and 16-bit integers, else complex128
        dtype = np.complex64 if a.dtype.char in "bhBH" else np.complex128
    return anp.astype(shapes.sort(a, axis=-1), dtype)


def choose(a, choices, out=None, mode: str = "raise"):
    """``numpy.choose``: ``choices[a[i]][i]``. Inside jit ``mode`` is ``'clip'`` or
    ``'wrap'`` (``'raise'`` checks the values; it clips, as ``jax.numpy.choose`` does not
    allow either)."""
    if out is not None:
        raise TypeError("anp.choose: out= is not supported; arrays are immutable")
    choices = list(choices) if not isinstance(choices, Tracer) else [
        choices[k] for k in range(choices.shape[0])]
    if not _traced(a) and not _sequence_traced(choices):
        return np.choose(a, choices, mode=mode)
    if mode == "raise":
        raise ValueError("anp.choose inside jit cannot raise for out-of-range indices (it "
                         "would need the values): pass mode='clip' or mode='wrap'")
    a = anp.asarray(a)
    n = len(choices)
    index = anp.clip(a, 0, n - 1) if mode == "clip" else anp.remainder(a, n)
    stacked = shapes.stack(anp.broadcast_arrays(index, *choices)[1:])
    picked = shapes.take_along_axis(stacked, anp.broadcast_to(index, stacked.shape[1:])[None],
                                    axis=0)
    return picked[0]


def select(condlist, choicelist, default=0):
    """``numpy.select``: from the choice of the first true condition, else ``default``."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not _sequence_traced(condlist + choicelist + [default]):
        return np.select(condlist, choicelist, default)
    for c in condlist:
        if p.aval_of(c).dtype != np.bool_:
            raise TypeError(f"invalid entry in condlist: should be boolean ndarray, got "
                            f"{p.aval_of(c).dtype}")
    # NumPy: the choices' common dtype, then the default joins as a Python value (weak)
    dtype, _ = result_type(*[p.aval_of(anp.asarray(c)) for c in choicelist], p.aval_of(default))
    result = anp.astype(anp.asarray(default), dtype)     # converted as an array: wraps
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        result = anp.where(cond, anp.asarray(choice, dtype), result)
    return result


def piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise``: each function (or constant) where its condition holds (later
    conditions win; an extra function covers the rest). Every function is evaluated on the
    whole array."""
    condlist = [condlist] if isinstance(condlist, Tracer) or (
        isinstance(condlist, np.ndarray) and condlist.dtype == np.bool_ and
        condlist.ndim == anp.ndim(x)) else list(condlist)
    if not _traced(x) and not _sequence_traced(condlist):
        return np.piecewise(x, condlist, funclist, *args, **kw)
    x = anp.asarray(x)
    n = len(condlist)
    if len(funclist) == n + 1:
        otherwise = anp.logical_not(condlist[0]) if n == 1 else anp.logical_not(
            _any_of(condlist))
        condlist = condlist + [otherwise]
    elif len(funclist) != n:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are "
                         f"needed; got {len(funclist)}")
    result = anp.zeros(x.shape, x.dtype)
    for cond, fn in zip(condlist, funclist):
        value = fn(x, *args, **kw) if callable(fn) else fn
        result = anp.where(cond, anp.astype(anp.asarray(value), x.dtype), result)
    return result


def _any_of(conditions):
    total = conditions[0]
    for c in conditions[1:]:
        total = anp.logical_or(total, c)
    return total
