"""NumPy's universal functions as objects, as ``jax.numpy.ufunc``: ``anp.add(x, y)`` and
its methods ``outer``, ``reduce``, ``accumulate`` and ``at``.

A method uses the matching primitive where there is one (``add.reduce`` is ``sum``,
``multiply.accumulate`` is ``cumprod``) and otherwise folds along the axis in order, as NumPy
does, with ``lax.scan`` (so it stays one native loop inside jit).

>>> import numpy as np, arrjit, arrjit.numpy as anp
>>> anp.add.outer(np.arange(3), np.arange(2))
array([[0, 1],
       [1, 2],
       [2, 3]])
>>> arrjit.jit(lambda x: anp.maximum.accumulate(x))(np.array([1.0, 3.0, 2.0, 5.0]))
array([1., 3., 3., 5.])
>>> arrjit.jit(lambda x: anp.subtract.reduce(x))(np.array([10.0, 1.0, 2.0]))
array(7.)
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import base as anp
from . import elementwise, indexing, reductions, shapes
from ..core.trace import Tracer

__all__: list[str] = []

# ufunc name -> the reduction that is its ``reduce``, and the cumulative one its ``accumulate``
_REDUCTIONS: dict[str, Callable] = {
    "add": reductions.sum, "multiply": reductions.prod, "maximum": reductions.max,
    "minimum": reductions.min, "logical_and": reductions.all, "logical_or": reductions.any,
}
_ACCUMULATIONS: dict[str, Callable] = {"add": reductions.cumsum, "multiply": reductions.cumprod}
# ufunc name -> the ``x.at[...]`` update that is its ``at``
_SCATTERS = {"add": "add", "multiply": "multiply", "minimum": "min", "maximum": "max"}


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


class ufunc:
    """A universal function of ``arrjit.numpy``: callable like the NumPy ufunc of the same
    name, with its ``outer``, ``reduce``, ``accumulate`` and ``at`` methods."""

    def __init__(self, fn: Callable, numpy_ufunc: np.ufunc):
        self._fn = fn
        self._np = numpy_ufunc
        self.__name__ = self.__qualname__ = numpy_ufunc.__name__
        self.__doc__ = fn.__doc__
        self.nin, self.nout, self.nargs = numpy_ufunc.nin, numpy_ufunc.nout, numpy_ufunc.nargs
        self.identity = numpy_ufunc.identity

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<arrjit.numpy.ufunc '{self.__name__}'>"

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary functions; "
                             f"{self.__name__} takes {self.nin} input(s)")

    def outer(self, a: Any, b: Any) -> Any:
        """``op(a[i..., None...], b[..., j...])``: every pair, shape ``a.shape + b.shape``."""
        self._binary("outer")
        if not _traced(a, b):
            return self._np.outer(a, b)
        a, b = anp.asarray(a), anp.asarray(b)
        return self(anp.reshape(a, a.shape + (1,) * b.ndim), b)

    def reduce(self, a: Any, axis: int | tuple[int, ...] | None = 0, dtype: Any = None,
               out: Any = None, keepdims: bool = False, initial: Any = None,
               where: Any = None) -> Any:
        """The elements along ``axis`` combined in order: ``op(...op(op(a0, a1), a2)...)``."""
        self._binary("reduce")
        if out is not None:
            raise TypeError(f"anp.{self.__name__}.reduce: out= is not supported; arrays are "
                            f"immutable")
        if not _traced(a, initial, where):
            extra = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
            return self._np.reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, **extra)
        a = anp.asarray(a)
        if dtype is not None:
            a = anp.astype(a, dtype)
        named = _REDUCTIONS.get(self.__name__)
        if named is not None:
            kwargs = {"dtype": dtype} if dtype is not None and named in (
                reductions.sum, reductions.prod) else {}
            result = named(a, axis=axis, keepdims=keepdims, initial=initial, where=where,
                           **kwargs)
            expected = self._np.reduce(np.ones(1, a.dtype)).dtype
            return anp.astype(result, expected) if result.dtype != expected else result
        if where is not None:
            raise NotImplementedError(f"anp.{self.__name__}.reduce: where= needs a ufunc with "
                                      f"a reduction (add, multiply, maximum, minimum, "
                                      f"logical_and, logical_or)")
        if axis is None or isinstance(axis, tuple):
            if axis is None:
                a, axis = anp.ravel(a), 0
            elif len(axis) == 1:
                axis = axis[0]
            else:
                raise ValueError(f"reduce over several axes needs a reorderable ufunc, and "
                                 f"{self.__name__} is not one")
        moved = anp.moveaxis(a, axis, 0)
        if initial is None:
            if moved.shape[0] == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 f"which has no identity")
            carry, rest = moved[0], moved[1:]
        else:
            carry = anp.broadcast_to(anp.asarray(initial), moved.shape[1:])
            rest = moved
        carry = anp.astype(carry, self(carry, carry).dtype)
        result = self._fold(carry, rest)
        if keepdims:
            result = anp.expand_dims(result, axis)
        return result

    def _fold(self, carry: Any, rows: Any) -> Any:
        from .. import lax

        def step(acc, row):
            new = anp.astype(self(acc, row), acc.dtype)
            return new, None

        return lax.scan(step, carry, rows)[0] if rows.shape[0] else carry

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        """The running results of ``reduce`` along ``axis`` (same shape as ``a``)."""
        self._binary("accumulate")
        if out is not None:
            raise TypeError(f"anp.{self.__name__}.accumulate: out= is not supported; arrays "
                            f"are immutable")
        if not _traced(a):
            return self._np.accumulate(a, axis=axis, dtype=dtype)
        a = anp.asarray(a)
        result_dtype = np.dtype(dtype) if dtype is not None else self._np.accumulate(
            np.ones(1, a.dtype)).dtype
        named = _ACCUMULATIONS.get(self.__name__)
        if named is not None:
            return named(a, axis=axis, dtype=result_dtype)
        from .. import lax

        moved = anp.moveaxis(anp.astype(a, result_dtype), axis, 0)
        if moved.shape[0] == 0:
            return a

        def step(acc, row):
            new = anp.astype(self(acc, row), result_dtype)
            return new, new

        _, rest = lax.scan(step, moved[0], moved[1:])
        whole = shapes.concatenate([moved[:1], rest], axis=0)
        return anp.moveaxis(whole, 0, axis)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``op`` applied at ``a[indices]`` (with ``b``), repeated indices applied each time.
        NumPy arrays are updated in place, as NumPy does; a traced array cannot be, so
        inside jit pass ``inplace=False`` and use the returned array (as in JAX)."""
        if not _traced(a, indices, b):
            if inplace:
                return self._np.at(a, indices) if b is None else self._np.at(a, indices, b)
            a = np.array(a, copy=True)
            self._np.at(a, indices) if b is None else self._np.at(a, indices, b)
            return a
        if inplace:
            raise NotImplementedError(f"anp.{self.__name__}.at on a traced array cannot update "
                                      f"it in place: pass inplace=False and use the result")
        mode = _SCATTERS.get(self.__name__)
        if mode is None or b is None:
            raise NotImplementedError(f"anp.{self.__name__}.at inside jit supports add, "
                                      f"multiply, minimum and maximum; use x.at[idx].set("
                                      f"anp.{self.__name__}(x[idx], ...)) for others")
        return indexing.scatter(anp.asarray(a), indices, b, mode)


def _wrap_ufuncs(namespace: dict[str, Any]) -> dict[str, ufunc]:
    """Every function of ``namespace`` named after a NumPy ufunc, as a ``ufunc``."""
    wrapped = {}
    for name, fn in namespace.items():
        numpy_ufunc = getattr(np, name, None)
        if isinstance(numpy_ufunc, np.ufunc) and callable(fn) and not name.startswith("_"):
            wrapped[name] = ufunc(fn, numpy_ufunc)
    return wrapped


_WRAPPED = _wrap_ufuncs({**vars(anp), **vars(elementwise)})
globals().update(_WRAPPED)
__all__ += sorted(_WRAPPED)
