"""The rest of NumPy's namespace that programs reach for: dtype and type predicates
(``issubdtype``, ``promote_types``, ``isscalar``, ``iterable``), printing and files (NumPy's
own, on concrete arrays), construction from buffers and iterables (constants inside jit),
window functions, ``array_equiv``, ``matvec``/``vecmat``, ``einsum_path`` on shapes, and the
functions whose result shape depends on the values (``trim_zeros``, ``histogram2d``,
``histogramdd``), which run outside jit only and say so.

>>> import numpy as np, arrjit
>>> arrjit.jit(lambda a, v: matvec(a, v))(np.eye(2), np.array([1.0, 2.0]))
array([1., 2.])
>>> hamming(4)
array([0.08, 0.77, 0.77, 0.08])
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import base as anp
from . import contractions, elementwise, reductions
from ..core import primitives as p
from ..core.trace import Tracer
from ..errors import ConcretizationTypeError


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


# -- predicates and dtypes (static: a traced array counts as an array of its dtype) ------------
issubdtype = np.issubdtype
promote_types = np.promote_types


def isscalar(element) -> bool:
    """``numpy.isscalar``: a traced array is an array (not a scalar), as in NumPy."""
    return False if isinstance(element, Tracer) else np.isscalar(element)


def iterable(y) -> bool:
    """``numpy.iterable``: traced arrays iterate when they have an axis."""
    return y.ndim > 0 if isinstance(y, Tracer) else np.iterable(y)


# -- printing and files: NumPy's, on concrete arrays -------------------------------------------
get_printoptions, set_printoptions, printoptions = (np.get_printoptions,
                                                    np.set_printoptions, np.printoptions)
load, save, savez, savez_compressed = np.load, np.save, np.savez, np.savez_compressed
loadtxt, savetxt, genfromtxt = np.loadtxt, np.savetxt, np.genfromtxt


def _concrete(name: str, fn):
    def wrapped(a, *args, **kwargs):
        if isinstance(a, Tracer):
            raise ConcretizationTypeError(
                f"anp.{name} needs the values of the traced array {a.aval}; return the "
                f"array from the jitted function and call it outside jit")
        return fn(a, *args, **kwargs)
    wrapped.__name__ = wrapped.__qualname__ = name
    wrapped.__doc__ = f"``numpy.{name}`` of a concrete array."
    return wrapped


array_repr = _concrete("array_repr", np.array_repr)
array_str = _concrete("array_str", np.array_str)
array2string = _concrete("array2string", np.array2string)


def _constant_maker(name: str):
    numpy_fn = getattr(np, name)

    def make(*args, **kwargs):
        return anp._traced_constant(np.asarray(numpy_fn(*args, **kwargs)))
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``numpy.{name}`` (a constant inside jit)."
    return make


frombuffer = _constant_maker("frombuffer")
fromfile = _constant_maker("fromfile")
fromiter = _constant_maker("fromiter")
fromstring = _constant_maker("fromstring")
mask_indices = _constant_maker("mask_indices")
bartlett = _constant_maker("bartlett")
blackman = _constant_maker("blackman")
hamming = _constant_maker("hamming")
hanning = _constant_maker("hanning")


def kaiser(M: int, beta):
    """``numpy.kaiser``: the Kaiser window (``beta`` may be traced; ``M`` is the length)."""
    if not _traced(beta):
        return anp._traced_constant(np.kaiser(M, beta))
    if M == 1:
        return anp.ones((1,))
    n = np.arange(0, M)
    alpha = (M - 1) / 2.0
    ratio = anp.asarray(1 - ((n - alpha) / alpha) ** 2.0)
    return anp.true_divide(elementwise.i0(anp.multiply(beta, anp.sqrt(ratio))),
                           elementwise.i0(anp.asarray(beta, np.float64)))


# -- small array functions -------------------------------------------------------------------------
def array_equiv(a1, a2) -> Any:
    """``numpy.array_equiv``: equal after broadcasting (False when they do not broadcast)."""
    if not _traced(a1, a2):
        return np.array_equiv(a1, a2)
    try:
        np.broadcast_shapes(p.aval_of(a1).shape, p.aval_of(a2).shape)
    except ValueError:
        return anp.asarray(False)
    return reductions.all(anp.equal(a1, a2))


def matvec(x1, x2, /):
    """``numpy.matvec``: matrix-vector products over broadcast leading axes."""
    if not _traced(x1, x2):
        return np.matvec(x1, x2)
    return contractions.matmul(x1, anp.asarray(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    """``numpy.vecmat``: vector-matrix products (the vector conjugated)."""
    if not _traced(x1, x2):
        return np.vecmat(x1, x2)
    x1 = anp.asarray(x1)
    x1 = anp.conjugate(x1) if x1.dtype.kind == "c" else x1
    return contractions.matmul(x1[..., None, :], x2)[..., 0, :]


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """``numpy.einsum_path``: the contraction order for operands of these shapes."""
    stand_ins = [np.broadcast_to(np.zeros((), p.aval_of(x).dtype), p.aval_of(x).shape)
                 for x in operands]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize, einsum_call=einsum_call)


def _outside_jit(name: str, reason: str):
    numpy_fn = getattr(np, name)

    def fn(*args, **kwargs):
        if any(isinstance(a, Tracer) for a in (*args, *kwargs.values())):
            raise ConcretizationTypeError(
                f"anp.{name} of a traced array: {reason}, which jit does not know while "
                f"tracing. Call it outside jit.")
        return numpy_fn(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``numpy.{name}``, outside jit only: {reason}."
    return fn


trim_zeros = _outside_jit("trim_zeros", "its length depends on the values")
histogram2d = _outside_jit("histogram2d", "its bin edges are computed from the values")
histogramdd = _outside_jit("histogramdd", "its bin edges are computed from the values")
