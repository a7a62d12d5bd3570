"""Elementwise functions of ``arrjit.numpy`` that NumPy has as ufuncs (or ufunc-like
functions) and arrjit composes from its primitives: ``fmax``, ``fmin``, ``heaviside``,
``deg2rad``, ``exp2``, ``logaddexp2``, ``fabs``, ``float_power``, ``spacing``, ``frexp``,
``modf``, ``divmod``, ``bitwise_count``, ``sinc``, ``i0`` and the ``is*`` predicates. Result
dtypes come from NumPy's own ufunc resolution (``resolve``), so they are NumPy's; each
composition fuses into the surrounding kernel.

>>> import numpy as np, arrjit
>>> arrjit.jit(fmax)(np.array([1.0, np.nan]), np.array([np.nan, 2.0]))
array([1., 2.])
>>> arrjit.jit(lambda x: frexp(x))(np.array([8.0, 0.75]))
(array([0.5 , 0.75]), array([4, 0], dtype=int32))
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import base as anp
from ..core import primitives as p
from ..core.dtypes import resolve_ufunc
from ..core.trace import Tracer


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def resolve(ufunc: np.ufunc, *xs: Any) -> tuple[list[Any], np.dtype]:
    """The operands cast to NumPy's loop dtypes for ``ufunc``, and its result dtype (NumPy's
    refusals, float16 results included, raise as for every ufunc)."""
    loops, out = resolve_ufunc(ufunc, [p.aval_of(x) for x in xs])
    return [anp.astype(anp.asarray(x), dt) if not p.is_python_scalar(x) else x
            for x, dt in zip(xs, loops)], out


def fmax(x1, x2):
    """``numpy.fmax``: the maximum, ignoring a NaN (NaN only where both are)."""
    if not _traced(x1, x2):
        return np.fmax(x1, x2)
    (a, b), _ = resolve(np.fmax, x1, x2)
    return anp.where(anp.logical_or(anp.greater_equal(a, b), anp.isnan(b)), a, b)


def fmin(x1, x2):
    """``numpy.fmin``: the minimum, ignoring a NaN (NaN only where both are)."""
    if not _traced(x1, x2):
        return np.fmin(x1, x2)
    (a, b), _ = resolve(np.fmin, x1, x2)
    return anp.where(anp.logical_or(anp.less_equal(a, b), anp.isnan(b)), a, b)


def heaviside(x1, x2):
    """``numpy.heaviside``: 0 below zero, 1 above, ``x2`` at zero (NaN stays NaN)."""
    if not _traced(x1, x2):
        return np.heaviside(x1, x2)
    (a, b), _ = resolve(np.heaviside, x1, x2)
    step = anp.where(anp.less(a, 0), 0, anp.where(anp.greater(a, 0), 1, b))
    return anp.where(anp.isnan(a), a, step)


def _scaled(ufunc: np.ufunc, factor: float):
    def fn(x):
        if not _traced(x):
            return ufunc(x)
        (a,), _ = resolve(ufunc, x)
        return anp.multiply(a, factor)
    fn.__name__ = fn.__qualname__ = ufunc.__name__
    fn.__doc__ = f"``numpy.{ufunc.__name__}``: ``x * {factor!r}``."
    return fn


deg2rad = radians = _scaled(np.deg2rad, math.pi / 180.0)
rad2deg = degrees = _scaled(np.rad2deg, 180.0 / math.pi)


def exp2(x):
    """``numpy.exp2``: ``2**x``."""
    if not _traced(x):
        return np.exp2(x)
    (a,), _ = resolve(np.exp2, x)
    return anp.power(2.0, a)


def logaddexp2(x1, x2):
    """``numpy.logaddexp2``: ``log2(2**x1 + 2**x2)`` without overflow."""
    if not _traced(x1, x2):
        return np.logaddexp2(x1, x2)
    (a, b), _ = resolve(np.logaddexp2, x1, x2)
    big, gap = anp.maximum(a, b), anp.negative(anp.absolute(anp.subtract(a, b)))
    tail = anp.multiply(anp.log1p(exp2(gap)), 1 / math.log(2))
    return anp.where(anp.equal(a, b), anp.add(a, 1), anp.add(big, tail))


def fabs(x):
    """``numpy.fabs``: the absolute value of real numbers (floats)."""
    if not _traced(x):
        return np.fabs(x)
    (a,), _ = resolve(np.fabs, x)
    return anp.absolute(a)


def float_power(x1, x2):
    """``numpy.float_power``: ``x1 ** x2`` in float64 (complex128 for complex)."""
    if not _traced(x1, x2):
        return np.float_power(x1, x2)
    (a, b), _ = resolve(np.float_power, x1, x2)
    return anp.power(a, b)


def spacing(x):
    """``numpy.spacing``: the distance from ``x`` to the next float away from zero."""
    if not _traced(x):
        return np.spacing(x)
    (a,), dtype = resolve(np.spacing, x)
    away = anp.where(anp.less(a, 0), -np.inf, np.inf)      # -0.0 counts as 0, as in NumPy
    return anp.astype(anp.subtract(anp.nextafter(a, away), a), dtype)


def frexp(x):
    """``numpy.frexp``: ``(mantissa, exponent)`` with ``x = mantissa * 2**exponent`` and
    ``0.5 <= |mantissa| < 1`` (0 at 0; inf and NaN keep themselves with exponent 0)."""
    if not _traced(x):
        return np.frexp(x)
    (a,), _ = resolve(np.frexp, x)
    finite = anp.logical_and(anp.isfinite(a), anp.not_equal(a, 0))
    magnitude = anp.where(finite, anp.absolute(a), 1)
    exponent = anp.astype(anp.add(anp.floor(anp.log2(magnitude)), 1), np.int32)
    mantissa = anp.ldexp(a, anp.negative(exponent))
    # log2 rounds near powers of two: move one step where the mantissa left [0.5, 1)
    high = anp.greater_equal(anp.absolute(mantissa), 1)
    low = anp.logical_and(finite, anp.less(anp.absolute(mantissa), 0.5))
    exponent = anp.where(high, exponent + 1, anp.where(low, exponent - 1, exponent))
    mantissa = anp.ldexp(a, anp.negative(exponent))
    return anp.where(finite, mantissa, a), anp.where(finite, exponent, 0).astype(np.int32)


def modf(x):
    """``numpy.modf``: ``(fractional part, integral part)``, both with ``x``'s sign."""
    if not _traced(x):
        return np.modf(x)
    (a,), _ = resolve(np.modf, x)
    whole = anp.trunc(a)
    fraction = anp.where(anp.isinf(a), anp.copysign(0.0, a), anp.subtract(a, whole))
    return anp.copysign(fraction, a), whole


def divmod(x1, x2):  # noqa: A001
    """``numpy.divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``."""
    if not _traced(x1, x2):
        return np.divmod(x1, x2)
    return anp.floor_divide(x1, x2), anp.remainder(x1, x2)


_M1, _M2, _M4, _H01 = (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
                       0x0101010101010101)


def bitwise_count(x):
    """``numpy.bitwise_count``: the number of 1 bits in ``|x|`` (uint8)."""
    if not _traced(x):
        return np.bitwise_count(x)
    (a,), dtype = resolve(np.bitwise_count, x)
    v = anp.astype(anp.absolute(a) if a.dtype.kind == "i" else a, np.uint64)
    v = anp.subtract(v, anp.bitwise_and(anp.right_shift(v, np.uint64(1)), np.uint64(_M1)))
    v = anp.add(anp.bitwise_and(v, np.uint64(_M2)),
                anp.bitwise_and(anp.right_shift(v, np.uint64(2)), np.uint64(_M2)))
    v = anp.bitwise_and(anp.add(v, anp.right_shift(v, np.uint64(4))), np.uint64(_M4))
    return anp.astype(anp.right_shift(anp.multiply(v, np.uint64(_H01)), np.uint64(56)), dtype)


def sinc(x):
    """``numpy.sinc``: ``sin(pi x) / (pi x)``, 1 at 0."""
    if not _traced(x):
        return np.sinc(x)
    x = anp.asarray(x)
    if x.dtype.kind not in "fc":
        x = anp.astype(x, np.float64)
    y = anp.multiply(math.pi, anp.where(anp.equal(x, 0), 1.0e-20, x))
    return anp.true_divide(anp.sin(y), y)


# Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) on (8, inf)
# (Cephes' i0, the tables NumPy evaluates)
_I0_SMALL = (
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
    1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
    -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
    9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
    1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
    -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
    0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
    -0.3046826723431984, 0.6767952744094761,
)
_I0_LARGE = (
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
    3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
    1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
    -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
    -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
    3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
    2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943, 0.8044904110141088,
)


def _chebyshev(x, coefficients):
    """Clenshaw's recurrence for a Chebyshev series at ``x`` (Cephes' ``chbevl``)."""
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = anp.add(anp.subtract(anp.multiply(x, b1), b2), c)
    return anp.multiply(0.5, anp.subtract(b0, b2))


def scaled_i0(x):
    """``exp(-|x|) * i0(x)`` from the two Chebyshev series (never overflows); with the
    magnitude ``|x|`` it was computed for."""
    x = anp.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    x = anp.absolute(x if x.dtype.kind == "f" else anp.astype(x, np.float64))
    small = _chebyshev(anp.subtract(anp.multiply(x, 0.5), 2.0), _I0_SMALL)
    wide = anp.where(anp.greater(x, 8.0), x, 8.0)
    large = anp.true_divide(_chebyshev(anp.subtract(anp.true_divide(32.0, wide), 2.0),
                                       _I0_LARGE), anp.sqrt(wide))
    return anp.where(anp.less_equal(x, 8.0), small, anp.where(anp.isnan(x), x, large)), x


def i0(x):
    """``numpy.i0``: the modified Bessel function of the first kind, order 0 (real x)."""
    if not _traced(x):
        return np.i0(x)
    scaled, magnitude = scaled_i0(x)
    return anp.multiply(anp.exp(magnitude), scaled)


def isneginf(x):
    """``numpy.isneginf``: ``-inf`` elements."""
    if not _traced(x):
        return np.isneginf(x)
    return anp.logical_and(anp.isinf(x), anp.signbit(x))


def isposinf(x):
    """``numpy.isposinf``: ``+inf`` elements."""
    if not _traced(x):
        return np.isposinf(x)
    return anp.logical_and(anp.isinf(x), anp.logical_not(anp.signbit(x)))


def isreal(x):
    """``numpy.isreal``: elements with a zero imaginary part."""
    if not _traced(x):
        return np.isreal(x)
    return anp.equal(anp.imag(x), 0)


def iscomplex(x):
    """``numpy.iscomplex``: elements with a nonzero imaginary part."""
    if not _traced(x):
        return np.iscomplex(x)
    return anp.not_equal(anp.imag(x), 0)


def isrealobj(x) -> bool:
    """``numpy.isrealobj``: whether the dtype is not complex (static)."""
    return p.aval_of(x).dtype.kind != "c" if _traced(x) else np.isrealobj(x)


def iscomplexobj(x) -> bool:
    """``numpy.iscomplexobj``: whether the dtype is complex (static)."""
    return p.aval_of(x).dtype.kind == "c" if _traced(x) else np.iscomplexobj(x)


def copy(a, order: str = "K", subok: bool = False):
    """``numpy.copy``: a new array (inside jit, values are immutable: the same value)."""
    if not _traced(a):
        return np.copy(a, order=order, subok=subok)
    return anp.asarray(a)
