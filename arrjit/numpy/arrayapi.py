"""The array API standard's own spellings and helpers in ``arrjit.numpy``, built on the
namespace's NumPy-style functions: ``concat``, ``unstack``, ``matrix_transpose``, ``vecdot``,
``cumulative_sum``/``cumulative_prod``, ``reciprocal``, ``diff``, ``isin``, ``from_dlpack``;
the dtype helpers (``result_type``, ``can_cast``, ``isdtype``, ``finfo``, ``iinfo``), which
take traced arrays as NumPy takes arrays; and ``__array_namespace_info__`` (``nonzero`` and
``unique_*`` are in ``selection``).

>>> import arrjit, arrjit.numpy as anp, numpy as np
>>> arrjit.jit(lambda x: anp.vecdot(x, x))(np.arange(6.0).reshape(2, 3)).tolist()
[5.0, 50.0]
>>> anp.isdtype(anp.result_type(np.float32, 1.0), "real floating")
True
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import base as anp
from . import reductions, shapes
from ..core import primitives as p
from ..core.dtypes import SUPPORTED
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _dtype_of(x: Any) -> Any:
    """What NumPy's dtype helpers take for ``x``: a traced array stands for its dtype (a weak
    traced scalar for a Python number of its kind)."""
    if isinstance(x, Tracer):
        aval = x.aval
        if aval.weak:
            return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[aval.dtype.kind]
        return aval.dtype
    return x


def concat(arrays, /, *, axis=0):
    """The standard's ``concatenate`` (``axis=None`` flattens first)."""
    return shapes.concatenate(list(arrays), axis=axis)


def unstack(x, /, *, axis=0):
    """A tuple of the slices of ``x`` along ``axis``."""
    if not _traced(x):
        return np.unstack(x, axis=axis)
    axis = anp._normalize_axis(axis, x.ndim)
    lead = (slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x.shape[axis]))


def matrix_transpose(x, /):
    """``x`` with its last two axes swapped."""
    if not _traced(x):
        return np.matrix_transpose(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {x.aval}")
    return anp.swapaxes(x, -1, -2)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along ``axis`` (broadcast over the others), in the
    operands' result dtype as ``numpy.vecdot`` computes it (a complex ``x1`` is conjugated,
    as the standard says)."""
    if not _traced(x1, x2):
        return np.vecdot(x1, x2, axis=axis)
    a1, a2 = p.aval_of(x1), p.aval_of(x2)
    if a1.shape[axis] != a2.shape[axis]:
        raise ValueError(f"vecdot: the axis {axis} of {a1} and {a2} differ in length")
    dtype = np.result_type(_dtype_of(x1), _dtype_of(x2))
    product = anp.multiply(anp.conjugate(x1), x2)
    if dtype == np.bool_:
        return reductions.any(product, axis=axis)
    return reductions.sum(product, axis=axis, dtype=dtype)


def _cumulative(name: str, fn, x, axis, dtype, include_initial: bool, identity: int):
    if not _traced(x):
        return getattr(np, name)(x, axis=axis, dtype=dtype, include_initial=include_initial)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{name}: axis may be None only for a 1-d array, got {x.aval}")
        axis = 0
    axis = anp._normalize_axis(axis, x.ndim)
    out = fn(x, axis=axis, dtype=dtype)
    if not include_initial:
        return out
    shape = list(out.shape)
    shape[axis] = 1
    return shapes.concatenate([anp.full(tuple(shape), identity, out.dtype), out], axis=axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """``numpy.cumulative_sum``: ``cumsum`` that may start with the initial 0."""
    return _cumulative("cumulative_sum", reductions.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """``numpy.cumulative_prod``: ``cumprod`` that may start with the initial 1."""
    return _cumulative("cumulative_prod", reductions.cumprod, x, axis, dtype, include_initial,
                       1)


def _complex_reciprocal(z):
    """NumPy's complex reciprocal (Smith's division of 1 by ``z``, in its own form: a zero
    gives NaN parts, where ``1 / z`` gives an infinity)."""
    re, im = anp.real(z), anp.imag(z)
    by_real = anp.abs(im) <= anp.abs(re)
    ratio = anp.where(by_real, im / re, re / im)
    denominator = anp.where(by_real, re + im * ratio, re * ratio + im)
    return p.bind_complex(anp.where(by_real, 1 / denominator, ratio / denominator),
                          anp.where(by_real, -ratio / denominator, -1 / denominator))


def reciprocal(x, /):
    """``1 / x`` in ``x``'s dtype (for integers NumPy's truncating ``1 // x``: 1 and -1 give
    themselves, every other value 0, and 0 what NumPy gives for it; booleans give int8)."""
    if not _traced(x):
        return np.reciprocal(x)
    if x.dtype.kind == "f":
        return anp.divide(anp.asarray(1, dtype=x.dtype), x)
    if x.dtype.kind == "c":
        return _complex_reciprocal(x)
    if x.dtype.kind == "b":
        return anp.where(x, anp.asarray(1, dtype=np.int8), anp.asarray(0, dtype=np.int8))
    with np.errstate(all="ignore"):   # what NumPy gives for 0 here (INT_MIN for 32/64 bits)
        at_zero = np.reciprocal(np.zeros((), x.dtype))
    kept = anp.where(anp.abs(x) == 1, x, anp.zeros_like(x))
    return kept if at_zero == 0 else anp.where(x == 0, anp.asarray(at_zero), kept)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """``numpy.diff``: ``n``-th differences along ``axis`` (booleans: ``!=``)."""
    if not _traced(a, prepend, append):
        kwargs = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
        return np.diff(a, n=n, axis=axis, **kwargs)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = anp.asarray(a)
    axis = anp._normalize_axis(axis, a.ndim)
    parts = []
    for edge, value in (("prepend", prepend), ("append", append)):
        if value is None:
            continue
        value = anp.asarray(value)
        if value.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            value = anp.broadcast_to(value, tuple(shape))
        parts.append((edge, value))
    for edge, value in parts:
        a = shapes.concatenate([value, a] if edge == "prepend" else [a, value], axis=axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        upper, lower = a[lead + (slice(1, None),)], a[lead + (slice(None, -1),)]
        a = anp.not_equal(upper, lower) if a.dtype == np.bool_ else anp.subtract(upper, lower)
    return a


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """``numpy.isin``: whether each element equals one of ``test_elements`` (by ``==``, so NaN
    is in nothing)."""
    if not _traced(element, test_elements):
        return np.isin(element, test_elements, assume_unique=assume_unique, invert=invert,
                       kind=kind)
    element = anp.asarray(element)
    tests = anp.ravel(anp.asarray(test_elements))
    found = reductions.any(anp.equal(anp.expand_dims(element, -1), tests), axis=-1)
    return anp.logical_not(found) if invert else found


def from_dlpack(x, /, *, device=None, copy=None):
    """``numpy.from_dlpack``: a host array sharing the memory of any DLPack exporter (a
    CPU tensor of PyTorch, JAX, CuPy's host arrays, NumPy); inside jit a traced array is
    already one. CUDA memory comes to the host through ``arrjit.device_get``."""
    if isinstance(x, Tracer):
        return x
    return np.from_dlpack(x, device=device, copy=copy)


def result_type(*arrays_and_dtypes):
    """``numpy.result_type``; traced arrays count as arrays of their dtype."""
    return np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


def can_cast(from_, to, /, casting="safe"):
    """``numpy.can_cast``; a traced array counts as its dtype."""
    return np.can_cast(_dtype_of(from_), to, casting=casting)


def isdtype(dtype, kind):
    """``numpy.isdtype``."""
    return np.isdtype(np.dtype(_dtype_of(dtype)), kind)


def _info_dtype(x: Any) -> Any:
    """The standard's ``finfo``/``iinfo`` take a dtype or an array (traced or not)."""
    return x.dtype if isinstance(x, (np.ndarray, np.generic)) else _dtype_of(x)


def finfo(type, /):
    """``numpy.finfo``; an array (traced or not) counts as its dtype.

    >>> finfo(np.ones(2, np.float32)).bits
    32
    """
    return np.finfo(_info_dtype(type))


def iinfo(type, /):
    """``numpy.iinfo``; an array (traced or not) counts as its dtype."""
    return np.iinfo(_info_dtype(type))


class ArrayNamespaceInfo:
    """What ``__array_namespace_info__()`` reports (the array API's inspection API)."""

    def capabilities(self) -> dict:
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": None}

    def default_device(self) -> str:
        from .. import config

        return config.default_device

    def devices(self) -> list[str]:
        from ..backends import available

        return list(available())

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": np.dtype(np.float64),
                "complex floating": np.dtype(np.complex128), "integral": np.dtype(np.int64),
                "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None) -> dict:
        kinds = (kind,) if isinstance(kind, str) or kind is None else tuple(kind)
        return {d.name: d for d in SUPPORTED
                if kind is None or any(np.isdtype(d, k) for k in kinds)}


def __array_namespace_info__() -> ArrayNamespaceInfo:
    return ArrayNamespaceInfo()
