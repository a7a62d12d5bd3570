"""Scalar algorithms of the special functions that are primitives (``ir.SPECIAL``): plain
Python over the ``math`` module, so that one text serves every target. The CPU backend
compiles them with ``numba.njit`` (``backends/cpu/mathlib/special``), the CUDA backend as
device functions, and the reference interpreter runs them element by element
(``vectorized``). Values follow SciPy's (``scipy.special``), special values included.

>>> round(digamma(1.0), 12)            # -euler_gamma
-0.577215664902
>>> round(gammainc(1.0, 1.0), 15)      # 1 - exp(-1)
0.632120558828558
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

_ASYMPTOTIC_FROM = 10.0      # digamma: the recurrence shifts x up to here
_MAX_TERMS = 2000            # gammainc: series and continued fraction terms at most
_TINY = 1e-300
_INTEGRAL = 4503599627370496.0   # 2**52: floats this large are integers (and math.floor,
                                  # an integer in compiled code, would overflow past 2**63)


def erf(x: float) -> float:
    return math.erf(x)


def erfc(x: float) -> float:
    return math.erfc(x)


def gammaln(x: float) -> float:
    """``log|gamma(x)|``; ``inf`` at the poles (0 and the negative integers), ``-inf`` at
    ``-inf`` (as SciPy)."""
    if x != x or x == math.inf or x == -math.inf:
        return x
    if x <= 0.0 and (x <= -_INTEGRAL or x == math.floor(x)):
        return math.inf
    return math.lgamma(x)


def digamma(x: float) -> float:
    """The logarithmic derivative of gamma: reflection for x <= 0, the recurrence
    ``psi(x) = psi(x + 1) - 1/x`` up to x >= 10, then the asymptotic series (Bernoulli
    numbers through B14). Poles: ``-inf`` at +0, ``inf`` at -0, NaN at negative integers."""
    if x != x or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x == 0.0:
        return -math.copysign(math.inf, x)
    result = 0.0
    if x < 0.0:
        if x <= -_INTEGRAL or x == math.floor(x):
            return math.nan
        # psi(1 - x) - psi(x) = pi / tan(pi x); tan has period pi, so reduce x first
        result = -math.pi / math.tan(math.pi * (x - math.floor(x)))
        x = 1.0 - x
    while x < _ASYMPTOTIC_FROM:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 - inv2 / 12))))))
    return result + math.log(x) - 0.5 / x - series


def incomplete_gamma(a: float, x: float, upper: bool) -> float:
    """The regularized incomplete gamma function: Q(a, x) (``upper``) or P(a, x) = 1 - Q, for
    a >= 0 and x >= 0: the power series of P for x < a + 1, else the continued fraction of Q
    (modified Lentz), each times ``x**a exp(-x) / gamma(a)``. Self-contained (no calls but
    ``math``), so that every target compiles it as it is."""
    if a != a or x != x or a < 0.0 or x < 0.0 or (a == 0.0 and x == 0.0):
        return math.nan
    if a == 0.0:                        # all the mass at 0
        return 0.0 if upper else 1.0
    if x == 0.0:
        return 1.0 if upper else 0.0
    if x == math.inf:
        return 0.0 if upper else 1.0
    if a == math.inf:
        return 1.0 if upper else 0.0
    prefactor = math.exp(a * math.log(x) - x - math.lgamma(a))
    if x < a + 1.0:
        term = 1.0 / a
        total = term
        n = a
        for _ in range(_MAX_TERMS):
            n += 1.0
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-17:
                break
        lower = total * prefactor
        return 1.0 - lower if upper else lower
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    q = h * prefactor
    return q if upper else 1.0 - q


def gammainc(a: float, x: float) -> float:
    """The regularized lower incomplete gamma function P(a, x)."""
    return incomplete_gamma(a, x, False)


def gammaincc(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return incomplete_gamma(a, x, True)


def gcd(a: int, b: int) -> int:
    """The greatest common divisor of two integers (Euclid's algorithm on the signed values,
    the sign dropped at the end, so that no ``abs`` overflows on the way; a divisor of +-1
    ends it, since ``INT_MIN % -1`` traps in machine code)."""
    while b != 0:
        if b == 1 or b == -1:
            return abs(b)
        a, b = b, a % b
    return abs(a)


def lcm(a: int, b: int) -> int:
    """The least common multiple of two integers, never negative (0 when either is)."""
    g = a
    c = b
    while c != 0:
        if c == 1 or c == -1:
            g = c
            break
        g, c = c, g % c
    if g == 0:
        return 0 * a
    g = abs(g)
    return (abs(a) // g) * abs(b)      # wraps as NumPy's does when it overflows


SCALAR: dict[str, Callable[..., float]] = {
    "erf": erf, "erfc": erfc, "gammaln": gammaln, "digamma": digamma, "gammainc": gammainc,
    "gammaincc": gammaincc,
}
"""The scalar function of each special op, by the op's value."""


def vectorized(fn: Callable[..., float]) -> Callable[..., np.ndarray]:
    """``fn`` element by element over arrays (with NumPy's broadcasting), in the operands'
    dtype: what the interpreter and eager calls run."""
    ufunc = np.frompyfunc(fn, fn.__code__.co_argcount, 1)

    def apply(*operands):
        dtype = np.result_type(*operands)
        wide = [np.asarray(x, dtype=np.float64) for x in operands]
        return np.asarray(ufunc(*wide), dtype=np.float64).astype(dtype)
    return apply
