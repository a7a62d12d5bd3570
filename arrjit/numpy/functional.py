"""Functions that apply other functions, as NumPy and ``jax.numpy`` have them:
``apply_along_axis`` and ``vectorize`` (``vmap`` over the mapped axes: one traced call, not
one per element), ``apply_over_axes`` and ``fromfunction``.

>>> import numpy as np, arrjit
>>> arrjit.jit(lambda m: apply_along_axis(lambda r: r.max() - r.min(), 1, m))(
...     np.array([[1.0, 5.0], [2.0, 3.0]]))
array([4., 1.])
>>> vectorize(lambda a, b: a if a > 0 else b)  # doctest: +ELLIPSIS
<arrjit.numpy.vectorize ...>
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable

import numpy as np

from . import base as anp
from . import index_tricks
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _vmap():
    from ..batching import vmap     # the transformation sits above the namespace
    return vmap


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs):
    """``numpy.apply_along_axis``: ``func1d`` on every 1-d slice along ``axis``; its result's
    axes replace that axis. Inside jit the slices are mapped with ``vmap``."""
    if not _traced(arr, *args):
        return np.apply_along_axis(func1d, axis, arr, *args, **kwargs)
    arr = anp.asarray(arr)
    axis = anp._normalize_axis(axis, arr.ndim, "axis")
    moved = anp.moveaxis(arr, axis, -1)
    lead = moved.shape[:-1]
    flat = anp.reshape(moved, (-1, moved.shape[-1]))
    out = _vmap()(lambda row: anp.asarray(func1d(row, *args, **kwargs)))(flat)
    out = anp.reshape(out, tuple(lead) + tuple(out.shape[1:]))
    extra = out.ndim - len(lead)
    return anp.moveaxis(out, tuple(range(len(lead), out.ndim)),
                        tuple(range(axis, axis + extra))) if extra else out


def apply_over_axes(func: Callable, a, axes):
    """``numpy.apply_over_axes``: ``func(a, axis)`` for each axis in turn, keeping the
    dimensions."""
    if not _traced(a):
        return np.apply_over_axes(func, a, axes)
    result = anp.asarray(a)
    for axis in (axes,) if isinstance(axes, (int, np.integer)) else axes:
        axis = anp._normalize_axis(axis, result.ndim, "axis")
        out = func(result, axis)
        if out.ndim == result.ndim:
            result = out
        elif out.ndim == result.ndim - 1:
            result = anp.expand_dims(out, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return result


def fromfunction(function: Callable, shape, *, dtype=float, **kwargs):
    """``numpy.fromfunction``: ``function`` called once on the index grids of ``shape``."""
    grids = index_tricks.indices(tuple(int(d) for d in shape), dtype=dtype)
    return function(*(grids[k] for k in range(len(shape))), **kwargs)


_CORE = re.compile(r"\(([^()]*)\)")


class vectorize:
    """``numpy.vectorize``: ``pyfunc`` on scalars (or on core blocks, with a gufunc
    ``signature`` such as ``"(n),(n)->()"``) mapped over the broadcast leading axes with
    ``vmap``, so traced and concrete arrays go through one traced call (``pyfunc`` must
    be traceable: Python branches on values need ``anp.where``). ``excluded`` names
    arguments passed through unmapped."""

    def __init__(self, pyfunc: Callable, otypes=None, doc=None, excluded=None,
                 cache: bool = False, signature: str | None = None):
        self.pyfunc = pyfunc
        self.otypes = otypes
        self.excluded = set(excluded or ())
        self.signature = signature
        functools.update_wrapper(self, pyfunc)
        if doc is not None:
            self.__doc__ = doc

    def __repr__(self) -> str:
        return f"<arrjit.numpy.vectorize {getattr(self.pyfunc, '__name__', 'function')}>"

    def _core_ranks(self, n_args: int) -> tuple[list[int], int]:
        if self.signature is None:
            return [0] * n_args, 0
        inputs, _, outputs = self.signature.replace(" ", "").partition("->")
        ins = [len([d for d in m.split(",") if d]) for m in _CORE.findall(inputs)]
        outs = [len([d for d in m.split(",") if d]) for m in _CORE.findall(outputs)]
        if len(ins) != n_args:
            raise TypeError(f"vectorize: the signature {self.signature!r} has {len(ins)} "
                            f"inputs, the call {n_args}")
        return ins, outs[0] if len(outs) == 1 else 0

    def __call__(self, *args, **kwargs):
        mapped = [k for k in range(len(args)) if k not in self.excluded]
        ranks, _ = self._core_ranks(len(mapped))
        arrays = [anp.asarray(args[k]) for k in mapped]
        batch = np.broadcast_shapes(*(tuple(a.shape[:a.ndim - r]) for a, r in
                                      zip(arrays, ranks))) if arrays else ()
        arrays = [anp.broadcast_to(a, tuple(batch) + tuple(a.shape[a.ndim - r:]))
                  for a, r in zip(arrays, ranks)]

        def call(*values):
            full = list(args)
            for k, v in zip(mapped, values):
                full[k] = v
            out = self.pyfunc(*full, **kwargs)
            if self.otypes:
                out = tuple(anp.asarray(o, t) for o, t in zip(out, self.otypes)) if isinstance(
                    out, tuple) else anp.asarray(out, self.otypes[0])
            return out

        fn = call
        for _ in batch:
            fn = _vmap()(fn)
        return fn(*arrays)


def frompyfunc(func: Callable, nin: int, nout: int, *, identity=None) -> "vectorize":
    """``numpy.frompyfunc`` for traceable functions: ``func`` mapped over its broadcast
    arguments (a ``vectorize``), as ``jax.numpy.frompyfunc`` maps it (NumPy's object arrays
    are not compiled)."""
    return vectorize(func)

