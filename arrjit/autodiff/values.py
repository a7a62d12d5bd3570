"""Array helpers for derivative rules that work on concrete arrays and on tracers alike.

A rule runs wherever the function being differentiated runs: eagerly on NumPy arrays, or
inside an enclosing trace (``jit``, ``vmap``, a loop body) on its tracers. The namespace
(``arrjit.numpy``) already dispatches that way; these helpers add the few primitives it only
offers on tracers (scatter, gather) and the shape bookkeeping rules share.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import numpy as anp
from ..core import primitives as p
from ..core.dtypes import Aval
from ..core.ir import Op
from ..core.library import LIBRARY_IMPLS, indexed_shape
from ..core.trace import Tracer

Value = Any  # a NumPy array or scalar, or a Tracer


def is_inexact(dtype: np.dtype) -> bool:
    """Whether values of ``dtype`` have derivatives (floating point and complex)."""
    return np.dtype(dtype).kind in "fc"


aval = p.aval_of   # shape and dtype of an array, scalar or tracer


def zeros(shape: Sequence[int], dtype: np.dtype) -> Value:
    return np.zeros(tuple(shape), dtype)


def as_dtype(x: Value, dtype: np.dtype) -> Value:
    """``x`` in ``dtype``; a complex value meant for a real one keeps its real part (the
    cotangent of a real value that flowed into complex arithmetic)."""
    have = aval(x).dtype
    if have == dtype:
        return x
    if have.kind == "c" and np.dtype(dtype).kind != "c":
        x = anp.real(x)
    return anp.astype(x, dtype)


def reshape(x: Value, shape: tuple[int, ...]) -> Value:
    """``x`` reshaped, with no node when the shape is already right."""
    shape = tuple(int(d) for d in shape)
    return x if tuple(aval(x).shape) == shape else anp.reshape(x, shape)


def expand_reduced(ct: Value, in_shape: tuple[int, ...], axes: Sequence[int]) -> Value:
    """A reduction's cotangent broadcast back over the reduced ``axes`` of ``in_shape``."""
    if aval(ct).ndim == 0:     # a full reduction: broadcast the scalar, as NumPy code would
        return anp.broadcast_to(ct, in_shape)
    kept = tuple(1 if k in axes else d for k, d in enumerate(in_shape))
    return anp.broadcast_to(reshape(ct, kept), in_shape)


def sum_to_shape(x: Value, shape: tuple[int, ...]) -> Value:
    """Sum ``x`` over the axes a broadcast to ``x``'s shape added or stretched."""
    have = aval(x).shape
    lead = len(have) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, d in enumerate(shape) if d == 1 and have[lead + k] != 1)
    if axes:
        x = anp.sum(x, axis=axes, keepdims=False)
    return reshape(x, shape)


def gather(x: Value, template: tuple, arrays: Sequence[Value]) -> Value:
    """``x[index]`` for an index template of ``core.library`` (``arrays`` fill its slots)."""
    shape = indexed_shape(aval(x).shape, template, list(arrays))
    return p.bind_library(Op.GATHER, (x, *arrays), Aval(tuple(shape), aval(x).dtype),
                          lambda: LIBRARY_IMPLS[Op.GATHER](np.asarray(x), *arrays,
                                                           index=template), index=template)


def scatter(x: Value, template: tuple, arrays: Sequence[Value], updates: Value,
            mode: str) -> Value:
    """``x.at[index].<mode>(updates)`` on a concrete array or a tracer."""
    updates = as_dtype(updates, aval(x).dtype)
    return p.bind_library(
        Op.SCATTER, (x, *arrays, updates), Aval(aval(x).shape, aval(x).dtype),
        lambda: LIBRARY_IMPLS[Op.SCATTER](np.asarray(x), *arrays, np.asarray(updates),
                                          index=template, mode=mode),
        index=template, mode=mode)


def row(x: Value, i: Value) -> Value:
    """``x[i]`` along the leading axis for a (possibly traced) integer ``i``."""
    if not isinstance(i, Tracer) and not isinstance(x, Tracer):
        return np.asarray(x)[int(i)]
    return gather(x, (("array", 0),), [anp.asarray(i)])


def set_row(x: Value, i: Value, value: Value) -> Value:
    """``x.at[i].set(value)`` along the leading axis."""
    return scatter(x, (("array", 0),), [anp.asarray(i)], value, "set")


def slice_template(starts, steps, shape) -> tuple:
    """The index template of a SLICE window (``core.interpret.slice_window``)."""
    items = []
    for start, step, n in zip(starts, steps, shape):
        stop = start + step * n
        items.append(("slice", start, stop if stop >= 0 else None, step))
    return tuple(items)


def add(a: Value | None, b: Value | None) -> Value | None:
    """The sum of two cotangents, where ``None`` stands for zero."""
    if a is None:
        return b
    if b is None:
        return a
    return anp.add(a, b)


def scale(ct: Value, factor: Value) -> Value:
    """``ct * factor`` where a zero cotangent contributes zero even against an infinite or
    NaN factor (the branch ``where``/``lax.cond`` did not take, a singular derivative)."""
    if isinstance(factor, (int, float)) and factor == 1:
        return ct
    if isinstance(factor, (int, float)) and factor == -1:
        return anp.negative(ct)
    if not isinstance(ct, Tracer) and np.all(np.asarray(ct) != 0):
        return anp.multiply(ct, factor)
    if not isinstance(factor, Tracer) and np.all(np.isfinite(factor)):
        return anp.multiply(ct, factor)
    return anp.where(anp.equal(ct, 0), anp.zeros_like(ct), anp.multiply(ct, factor))
