"""The updates NumPy makes in place (``put``, ``put_along_axis``, ``fill_diagonal``,
``place``): NumPy arrays are updated in place as NumPy does; a traced array cannot be, so
inside jit they return the updated copy with ``inplace=False`` (as in ``jax.numpy``).

>>> import numpy as np, arrjit
>>> arrjit.jit(lambda a: fill_diagonal(a, 7.0, inplace=False))(np.zeros((2, 2)))
array([[7., 0.],
       [0., 7.]])
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from . import base as anp
from . import reductions, shapes
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _numpy_in_place(numpy_update: Callable) -> Callable:
    """Gives the traced update it decorates NumPy's contract: on NumPy arrays,
    ``numpy_update`` writes into the target (or, with ``inplace=False``, into a copy that is
    returned); a traced target cannot be written, so it needs ``inplace=False`` and gets the
    decorated function's updated copy."""
    def decorate(traced_update: Callable) -> Callable:
        name = traced_update.__name__

        @functools.wraps(traced_update)
        def update(target, *args, inplace: bool = True, **kwargs):
            if not _traced(target, *args, *kwargs.values()):
                if inplace:
                    return numpy_update(target, *args, **kwargs)
                target = np.array(target, copy=True)
                numpy_update(target, *args, **kwargs)
                return target
            if inplace:
                raise TypeError(f"anp.{name} of a traced array cannot update it in place: "
                                f"pass inplace=False and use the returned array (as in "
                                f"jax.numpy)")
            return traced_update(target, *args, **kwargs)

        signature = inspect.signature(traced_update)
        inplace = inspect.Parameter("inplace", inspect.Parameter.KEYWORD_ONLY, default=True,
                                    annotation="bool")
        update.__signature__ = signature.replace(
            parameters=[*signature.parameters.values(), inplace])
        return update
    return decorate


@_numpy_in_place(np.put)
def put(a, ind, v, mode: str = "raise"):
    """``numpy.put``: ``a.flat[ind] = v``. NumPy arrays are updated in place; inside jit
    pass ``inplace=False`` for the updated copy (``mode`` 'clip' or 'wrap' there)."""
    a = anp.asarray(a)
    flat = anp.ravel(a)
    ind = anp.ravel(anp.asarray(ind))
    n = flat.shape[0]
    ind = anp.remainder(ind, n) if mode == "wrap" else anp.clip(anp.where(ind < 0, ind + n,
                                                                          ind), 0, n - 1)
    values = anp.ravel(anp.asarray(v, a.dtype))
    values = shapes.tile(values, -(-ind.shape[0] // max(values.shape[0], 1)))[:ind.shape[0]]
    return anp.reshape(flat.at[ind].set(values), a.shape)


@_numpy_in_place(np.put_along_axis)
def put_along_axis(arr, indices, values, axis):
    """``numpy.put_along_axis``: ``values`` written at ``indices`` along ``axis``."""
    arr, indices = anp.asarray(arr), anp.asarray(indices)
    axis = anp._normalize_axis(axis, arr.ndim, "axis")
    grids = list(np.ogrid[tuple(slice(0, n) for n in indices.shape)])
    grids[axis] = indices
    return arr.at[tuple(grids)].set(values)


@_numpy_in_place(np.fill_diagonal)
def fill_diagonal(a, val, wrap: bool = False):
    """``numpy.fill_diagonal``: ``val`` on the main diagonal (NumPy: in place; inside jit
    with ``inplace=False``, the updated copy)."""
    a = anp.asarray(a)
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise ValueError("All dimensions of input must be of equal length")
    probe = np.zeros(a.shape, np.int64).ravel()
    probe[:] = np.arange(probe.size)
    probe = probe.reshape(a.shape)
    np.fill_diagonal(probe, -1, wrap)
    positions = np.flatnonzero(probe.ravel() == -1)
    values = anp.ravel(anp.asarray(val, a.dtype))
    values = shapes.tile(values, -(-len(positions) // max(values.shape[0], 1)))[
        :len(positions)] if values.shape[0] != 1 else values
    return anp.reshape(anp.ravel(a).at[positions].set(values), a.shape)


@_numpy_in_place(np.place)
def place(arr, mask, vals):
    """``numpy.place``: the elements where ``mask`` take ``vals`` in turn (repeated)."""
    arr = anp.asarray(arr)
    flat = anp.ravel(arr)
    keep = anp.ravel(anp.asarray(mask, np.bool_))
    vals = anp.ravel(anp.asarray(vals, arr.dtype))
    rank = anp.subtract(reductions.cumsum(anp.astype(keep, np.int64)), 1)
    source = vals[anp.remainder(anp.maximum(rank, 0), vals.shape[0])]
    return anp.reshape(anp.where(keep, source, flat), arr.shape)
