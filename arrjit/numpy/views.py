"""The namespace's shape manipulation: reshapes, transposes, axis moves and broadcasting,
each a view (an index map) of a traced array, NumPy's function on a concrete one.

>>> reshape(_np.arange(6.0), (2, 3)).shape
(2, 3)
>>> broadcast_shapes((3, 1), (4,))
(3, 4)
"""
from __future__ import annotations

import builtins
import operator
from typing import Sequence as _Sequence

import numpy as _np

from ..core import primitives as _p
from ..core.trace import Tracer as _Tracer, describe as _describe, static_hint as _static_hint

__all__ = ["reshape", "ravel", "flatten", "transpose", "permute_dims", "swapaxes", "moveaxis",
           "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
           "shape", "ndim", "size"]


def _shape_tuple(shape) -> tuple[int, ...]:
    for d in (shape,) + (tuple(shape) if isinstance(shape, (tuple, list)) else ()):
        if isinstance(d, _Tracer):
            raise _p.errors.ConcretizationTypeError(_traced_shape_message(d))
    if isinstance(shape, (int, _np.integer)):
        return (operator.index(shape),)
    return tuple(operator.index(d) for d in shape)


def _traced_shape_message(value: _Tracer) -> str:
    hint = _static_hint(value)
    fix = (f"mark that argument static: {hint}" if hint else
           "mark its argument static with jit(f, static_argnames=(...))")
    return (f"an array shape must be known while tracing, but it is {_describe(value)}: "
            f"{fix}, or take the size from an array's .shape, which is static inside jit")


def _normalize_axis(axis: int, ndim: int, argname: str = "axis") -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < builtins.max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise _np.exceptions.AxisError(f"{argname} {axis} is out of bounds for array of "
                                       f"dimension {ndim}")
    return axis % builtins.max(ndim, 1)


def _size(shape: _Sequence[int]) -> int:
    return int(_np.prod(shape, dtype=_np.int64))


def reshape(a, shape=None, order: str = "C", *, newshape=None, copy=None):
    """``numpy.reshape`` (NumPy 2.1's and the array API's parameters; C order; one dimension
    may be -1). A traced reshape is a view (an index map), so ``copy`` changes nothing there.

    >>> reshape(_np.arange(6), (2, -1)).shape
    (2, 3)
    """
    if shape is None:
        shape = newshape
    newshape = shape
    if not isinstance(a, _Tracer) and copy is not None:
        return _np.reshape(a, _shape_tuple(newshape), copy=copy)
    if order != "C":
        raise NotImplementedError(f"reshape order={order!r}: arrjit supports order='C' only")
    if not isinstance(a, _Tracer):
        return _np.reshape(a, _shape_tuple(newshape))
    target = list(_shape_tuple(newshape))
    unknown = [i for i, d in enumerate(target) if d == -1]
    known = _size([d for d in target if d != -1])
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown and known and a.size % known == 0:
        target[unknown[0]] = a.size // known
    if unknown and target[unknown[0]] == -1 or _size(target) != a.size or builtins.any(
            d < 0 for d in target):
        raise ValueError(f"cannot reshape array of size {a.size} into shape "
                         f"{tuple(_shape_tuple(newshape))}")
    return _p.bind_reshape(a, tuple(target))


def ravel(a, order: str = "C"):
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """``numpy.transpose``; ``axes`` defaults to reversing the dimensions."""
    if not isinstance(a, _Tracer):
        return _np.transpose(a, axes)
    nd = a.ndim
    perm = tuple(reversed(range(nd))) if axes is None else tuple(
        _normalize_axis(ax, nd, "axis") for ax in axes)
    if sorted(perm) != list(range(nd)):
        raise ValueError("axes don't match array")
    return _p.bind_transpose(a, perm)


permute_dims = transpose


def swapaxes(a, axis1: int, axis2: int):
    if not isinstance(a, _Tracer):
        return _np.swapaxes(a, axis1, axis2)
    perm = list(range(a.ndim))
    i, j = _normalize_axis(axis1, a.ndim, "axis1"), _normalize_axis(axis2, a.ndim, "axis2")
    perm[i], perm[j] = perm[j], perm[i]
    return _p.bind_transpose(a, tuple(perm))


def moveaxis(a, source, destination):
    if not isinstance(a, _Tracer):
        return _np.moveaxis(a, source, destination)
    src = [_normalize_axis(s, a.ndim, "source") for s in _np.atleast_1d(source)]
    dst = [_normalize_axis(d, a.ndim, "destination") for d in _np.atleast_1d(destination)]
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _p.bind_transpose(a, tuple(order))


def expand_dims(a, axis):
    """``numpy.expand_dims`` (``axis`` an int or a tuple)."""
    if not isinstance(a, _Tracer):
        return _np.expand_dims(a, axis)
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    out_nd = a.ndim + len(axes)
    positions = sorted(_normalize_axis(ax, out_nd) for ax in axes)
    if len(set(positions)) != len(positions):
        raise ValueError("repeated axis")
    dims = iter(a.shape)
    shape = tuple(1 if i in positions else next(dims) for i in range(out_nd))
    return _p.bind_reshape(a, shape)


def squeeze(a, axis=None):
    """``numpy.squeeze``: remove size-1 dimensions (all, or those in ``axis``)."""
    if not isinstance(a, _Tracer):
        return _np.squeeze(a, axis)
    if axis is None:
        axes = {i for i, d in enumerate(a.shape) if d == 1}
    else:
        axes = {_normalize_axis(ax, a.ndim) for ax in
                ((axis,) if isinstance(axis, (int, _np.integer)) else axis)}
        if builtins.any(a.shape[i] != 1 for i in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             "to one")
    return _p.bind_reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


def broadcast_to(array, shape):
    """``numpy.broadcast_to``: a read-only broadcast view (a free index map inside jit)."""
    return _p.bind_broadcast(array, _shape_tuple(shape))


def broadcast_arrays(*args):
    shape = _p.broadcast_shapes_like_numpy([_p.aval_of(a).shape for a in args])
    return [broadcast_to(a, shape) for a in args]


def broadcast_shapes(*shapes):
    return _p.broadcast_shapes_like_numpy([_shape_tuple(s) for s in shapes])


def shape(a) -> tuple[int, ...]:
    return tuple(a.shape) if isinstance(a, _Tracer) else _np.shape(a)


def ndim(a) -> int:
    return a.ndim if isinstance(a, _Tracer) else _np.ndim(a)


def size(a) -> int:
    return a.size if isinstance(a, _Tracer) else _np.size(a)


flatten = ravel
