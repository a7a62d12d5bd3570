"""Derivatives of the elementwise primitives: one row per op.

``PARTIALS[op](inputs, out)`` gives the partial derivative of the op's result with respect
to each input (``None`` where that input has none, for example an integer exponent). Forward
mode multiplies each input's tangent by its partial and sums; reverse mode multiplies the
cotangent by each partial, without conjugation (JAX's convention for complex values).

Conventions at points where the derivative is not defined, as in JAX:
``absolute`` has derivative +1 at 0; ``maximum``/``minimum`` split a tie evenly (1/2 to each
operand); ``floor``, ``ceil``, ``rint``, ``trunc``, ``sign`` and comparisons have derivative 0;
``power(x, y)`` has d/dy = 0 where x == 0. ``LINEAR`` ops (casts, complex parts, ``select``)
have rules of their own in ``rules``.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .. import numpy as anp
from ..scipy import special
from ..core.ir import Op
from ..core.trace import Tracer
from .values import Value, aval

Partials = Callable[[Sequence[Value], Value], tuple]


def _recip(x: Value) -> Value:
    return anp.true_divide(1, x)


def _balanced(x: Value, other: Value, out: Value) -> Value:
    """maximum/minimum: 1 where ``x`` alone gives the result, 1/2 where both do, else 0."""
    mine = anp.astype(anp.equal(x, out), aval(out).dtype)
    theirs = anp.astype(anp.equal(other, out), aval(out).dtype)
    return anp.true_divide(mine, anp.add(1, theirs))


def _pow_x(x: Value, y: Value, out: Value) -> Value:
    if not isinstance(y, Tracer) and np.ndim(y) == 0:      # a constant exponent
        k = np.asarray(y)
        if k == 0:
            return anp.zeros_like(x)
        if k == 1:
            return 1
        if k == 2:
            return anp.multiply(x, np.asarray(2, k.dtype))
        return anp.multiply(k, anp.power(x, k - np.asarray(1, k.dtype)))
    d = anp.multiply(y, anp.power(x, anp.subtract(y, 1)))
    return anp.where(anp.equal(y, 0), anp.zeros_like(d), d)


def _pow_y(x: Value, y: Value, out: Value) -> Value:
    d = anp.multiply(out, anp.log(anp.where(anp.equal(x, 0), anp.ones_like(x), x)))
    return anp.where(anp.equal(x, 0), anp.zeros_like(d), d)


def _abs(x: Value, out: Value) -> Value:
    if aval(x).dtype.kind == "c":
        # d|z| along t is real(conj(z) t) / |z|; JAX's transpose gives ct * conj(z) / |z|
        safe = anp.where(anp.equal(out, 0), anp.ones_like(out), out)
        return anp.true_divide(anp.conjugate(x), safe)
    return anp.where(anp.greater_equal(x, 0), anp.ones_like(x), -anp.ones_like(x))


def _copysign(x: Value, y: Value) -> Value:
    same = anp.equal(anp.signbit(x), anp.signbit(y))
    return anp.where(same, anp.ones_like(x), -anp.ones_like(x))


def _gaussian_density(x: Value) -> Value:
    """``2 / sqrt(pi) * exp(-x**2)``: the derivative of erf."""
    return anp.multiply(2 / math.sqrt(math.pi), anp.exp(anp.negative(anp.square(x))))


def _gammainc_x(a: Value, x: Value) -> Value:
    """d/dx P(a, x): the gamma density ``x**(a-1) exp(-x) / gamma(a)``."""
    log_density = anp.subtract(anp.subtract(anp.multiply(anp.subtract(a, 1), anp.log(x)), x),
                               special.gammaln(a))
    return anp.exp(log_density)


def _gammainc_a(a: Value, x: Value, upper: bool) -> Value:
    """d/da P(a, x) (or Q) by a central difference in ``a`` (a forward one below the step)."""
    fn = special.gammaincc if upper else special.gammainc
    step = anp.multiply(6e-6, anp.maximum(a, 1.0))
    low = anp.maximum(anp.subtract(a, step), 0.0)
    high = anp.add(a, step)
    return anp.true_divide(anp.subtract(fn(high, x), fn(low, x)), anp.subtract(high, low))


PARTIALS: dict[Op, Partials] = {
    Op.NEG: lambda xs, out: (-1,),
    Op.ABS: lambda xs, out: (_abs(xs[0], out),),
    Op.EXP: lambda xs, out: (out,),
    Op.LOG: lambda xs, out: (_recip(xs[0]),),
    Op.LOG1P: lambda xs, out: (_recip(anp.add(xs[0], 1)),),
    Op.LOG2: lambda xs, out: (_recip(anp.multiply(xs[0], math.log(2))),),
    Op.LOG10: lambda xs, out: (_recip(anp.multiply(xs[0], math.log(10))),),
    Op.EXPM1: lambda xs, out: (anp.add(out, 1),),
    Op.SQRT: lambda xs, out: (anp.true_divide(0.5, out),),
    Op.CBRT: lambda xs, out: (_recip(anp.multiply(3, anp.square(out))),),
    Op.SQUARE: lambda xs, out: (anp.multiply(2, xs[0]),),
    Op.SIN: lambda xs, out: (anp.cos(xs[0]),),
    Op.COS: lambda xs, out: (anp.negative(anp.sin(xs[0])),),
    Op.TAN: lambda xs, out: (anp.add(1, anp.square(out)),),
    Op.TANH: lambda xs, out: (anp.subtract(1, anp.square(out)),),
    Op.SINH: lambda xs, out: (anp.cosh(xs[0]),),
    Op.COSH: lambda xs, out: (anp.sinh(xs[0]),),
    Op.ARCSIN: lambda xs, out: (_recip(anp.sqrt(anp.subtract(1, anp.square(xs[0])))),),
    Op.ARCCOS: lambda xs, out: (anp.negative(_recip(anp.sqrt(anp.subtract(
        1, anp.square(xs[0]))))),),
    Op.ARCTAN: lambda xs, out: (_recip(anp.add(1, anp.square(xs[0]))),),
    Op.ARCSINH: lambda xs, out: (_recip(anp.sqrt(anp.add(anp.square(xs[0]), 1))),),
    Op.ARCCOSH: lambda xs, out: (_recip(anp.multiply(anp.sqrt(anp.subtract(xs[0], 1)),
                                                     anp.sqrt(anp.add(xs[0], 1)))),),
    Op.ARCTANH: lambda xs, out: (_recip(anp.subtract(1, anp.square(xs[0]))),),
    Op.ADD: lambda xs, out: (1, 1),
    Op.SUB: lambda xs, out: (1, -1),
    Op.MUL: lambda xs, out: (xs[1], xs[0]),
    Op.DIV: lambda xs, out: (_recip(xs[1]), anp.negative(anp.true_divide(out, xs[1]))),
    Op.MOD: lambda xs, out: (1, anp.negative(anp.floor_divide(xs[0], xs[1]))),
    Op.POW: lambda xs, out: (_pow_x(xs[0], xs[1], out),
                             _pow_y(xs[0], xs[1], out) if aval(xs[1]).dtype.kind in "fc"
                             else None),
    Op.MAXIMUM: lambda xs, out: (_balanced(xs[0], xs[1], out), _balanced(xs[1], xs[0], out)),
    Op.MINIMUM: lambda xs, out: (_balanced(xs[0], xs[1], out), _balanced(xs[1], xs[0], out)),
    Op.ARCTAN2: lambda xs, out: (
        anp.true_divide(xs[1], anp.add(anp.square(xs[0]), anp.square(xs[1]))),
        anp.negative(anp.true_divide(xs[0], anp.add(anp.square(xs[0]), anp.square(xs[1]))))),
    Op.HYPOT: lambda xs, out: (anp.true_divide(xs[0], out), anp.true_divide(xs[1], out)),
    Op.LOGADDEXP: lambda xs, out: (anp.exp(anp.subtract(xs[0], out)),
                                   anp.exp(anp.subtract(xs[1], out))),
    Op.COPYSIGN: lambda xs, out: (_copysign(xs[0], xs[1]), None),
    Op.NEXTAFTER: lambda xs, out: (1, None),
    Op.FMOD: lambda xs, out: (1, anp.negative(anp.trunc(anp.true_divide(xs[0], xs[1])))),
    Op.LDEXP: lambda xs, out: (anp.ldexp(anp.ones_like(xs[0]), xs[1]), None),
    Op.ERF: lambda xs, out: (_gaussian_density(xs[0]),),
    Op.ERFC: lambda xs, out: (anp.negative(_gaussian_density(xs[0])),),
    Op.GAMMALN: lambda xs, out: (special.digamma(xs[0]),),
    Op.DIGAMMA: lambda xs, out: (special.polygamma(1, xs[0]),),
    Op.GAMMAINC: lambda xs, out: (_gammainc_a(xs[0], xs[1], False), _gammainc_x(*xs)),
    Op.GAMMAINCC: lambda xs, out: (_gammainc_a(xs[0], xs[1], True),
                                   anp.negative(_gammainc_x(*xs))),
}

# Piecewise constant or non-numeric results: derivative zero everywhere it exists.
ZERO_DERIVATIVE = frozenset({
    Op.SIGN, Op.TRUNC, Op.SIGNBIT, Op.FLOOR, Op.CEIL, Op.RINT, Op.LOGICAL_NOT, Op.INVERT,
    Op.ISNAN, Op.ISINF, Op.ISFINITE, Op.FLOORDIV, Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE,
    Op.LOGICAL_AND, Op.LOGICAL_OR, Op.LOGICAL_XOR, Op.BITWISE_AND, Op.BITWISE_OR,
    Op.BITWISE_XOR, Op.LEFT_SHIFT, Op.RIGHT_SHIFT, Op.GCD, Op.LCM,
})


def partials(op: Op, inputs: Sequence[Value], out: Value) -> tuple:
    """The op's partial derivatives at ``inputs`` (``None`` for an input without one)."""
    with np.errstate(all="ignore"):
        return PARTIALS[op](inputs, out)
