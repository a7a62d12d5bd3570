"""Complex functions whose numba forms differ from NumPy's.

numba compiles complex arithmetic and ``np.exp``/``np.log``/``np.sqrt``/... of complex values
itself; these are the ones where its answer is not NumPy's:

- ``absolute``: NumPy's SIMD loop, exactly (numba calls hypot, which NumPy uses only for
  scalars).
- ``mul``/``square``: NumPy's vectorised loop rounds ``ar*br - ai*bi`` as one FMA (and the
  imaginary part likewise), so the same FMA form matches it bit for bit on FMA hardware.
- ``div``: NumPy's Smith division (a zero divisor gives inf/NaN parts, never an exception;
  numba raises ``ZeroDivisionError``). These are compiled without fast-math, so they match
  NumPy bit for bit.
- ``sign``: NumPy 2's ``z / |z|`` with its rules for infinite and NaN parts.
- ``tanh``/``tan``: C99's (Annex G) algorithm; numba's overflows to NaN for large real parts.
- ``rint``: both parts rounded half to even.
- ``power``: NumPy's special cases (zero exponent or base, small integral exponents by
  repeated multiplication).
- ``exp``: C99's ``exp(x) + 0i`` for a zero imaginary part (numba's is NaN once ``exp(x)``
  overflows).
- ``sinh``/``cosh``/``sin``/``cos`` and the inverse functions ``arcsinh``/``arccosh``/
  ``arctanh``/``arcsin``/``arccos``/``arctan``: numba's values for finite arguments, and for
  an infinite or NaN part C99's special values (Annex G, as FreeBSD's msun computes them),
  which numba's forms get wrong.

Each helper exists per width, ``<name>_c64`` (complex64, float32 arithmetic) and
``<name>_c128``.

>>> div_c128(1 + 0j, 0j)
(inf+nanj)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import fma, select
from ..mathnames import COMPLEX_HELPERS

# No fast-math at all: the operation order is NumPy's.
_FLAGS = dict(nogil=True, cache=True, error_model="numpy", no_cfunc_wrapper=True)


@njit(**_FLAGS)
def exp(a):
    if a.imag == 0:                       # exactly: exp(x) + i y, not exp(x) * (1 + 0i)
        return complex(np.exp(a.real), a.imag)
    return np.exp(a)


def _helpers(float_type, tanh_cap: float) -> dict:
    one, zero, four = float_type(1.0), float_type(0.0), float_type(4.0)
    nan = float_type(np.nan)
    cap = float_type(tanh_cap)

    @njit(**_FLAGS)
    def mul(a, b):
        return complex(fma(a.real, b.real, -(a.imag * b.imag)),
                       fma(a.real, b.imag, a.imag * b.real))

    @njit(**_FLAGS)
    def square(a):
        return mul(a, a)

    inf = float_type(np.inf)

    @njit(**_FLAGS)
    def absolute(a):
        # NumPy's SIMD loop (bit for bit): an infinite part wins over NaN, then NaN wins,
        # then larger * sqrt(1 + (smaller/larger)**2) with one FMA; branch-free, so it
        # vectorises (numba's abs calls the C library's hypot)
        re, im = abs(a.real), abs(a.imag)
        im = select(re == inf, inf, im)
        re = select(im == inf, inf, re)
        im = select(re == re, im, nan)
        re = select(im == im, re, nan)
        larger = select(re >= im, re, im)
        smaller = select(im <= re, im, re)
        ratio = select((larger == zero) | (smaller == inf), zero, smaller / larger)
        return np.sqrt(fma(ratio, ratio, one)) * larger

    @njit(**_FLAGS)
    def div(a, b):
        ar, ai, br, bi = a.real, a.imag, b.real, b.imag
        abs_br, abs_bi = abs(br), abs(bi)
        if abs_br >= abs_bi:
            if abs_br == zero and abs_bi == zero:
                return complex(ar / abs_br, ai / abs_br)
            rat = bi / br
            scl = one / (br + bi * rat)
            return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
        rat = br / bi
        scl = one / (bi + br * rat)
        return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)

    @njit(**_FLAGS)
    def sign(a):
        ar, ai = a.real, a.imag
        magnitude = np.hypot(ar, ai)
        if magnitude != magnitude:
            return complex(nan, nan)
        if np.isinf(magnitude):
            if np.isinf(ar):
                if np.isinf(ai):
                    return complex(nan, nan)
                return complex(one if ar > zero else -one, zero)
            return complex(zero, one if ai > zero else -one)
        if magnitude == zero:
            return complex(zero, zero)
        return complex(ar / magnitude, ai / magnitude)

    @njit(**_FLAGS)
    def tanh(a):
        x, y = a.real, a.imag
        if not np.isfinite(x):
            if x != x:
                return complex(x, y if y == zero else x + y)
            return complex(np.copysign(one, x),
                           np.copysign(zero, y if np.isinf(y) else np.sin(y) * np.cos(y)))
        if not np.isfinite(y):
            return complex(y - y if x != zero else x, y - y)
        if abs(x) >= cap:
            exp_mx = np.exp(-abs(x))
            return complex(np.copysign(one, x), four * np.sin(y) * np.cos(y) * exp_mx * exp_mx)
        t = np.tan(y)
        beta = one + t * t
        s = np.sinh(x)
        rho = np.sqrt(one + s * s)
        denom = one + beta * s * s
        return complex((beta * rho * s) / denom, t / denom)

    @njit(**_FLAGS)
    def tan(a):
        # tan(z) = -i tanh(iz), as C99 defines it
        t = tanh(complex(-a.imag, a.real))
        return complex(t.imag, -t.real)

    @njit(**_FLAGS)
    def rint(a):
        return complex(np.rint(a.real), np.rint(a.imag))

    @njit(**_FLAGS)
    def plain_mul(a, b):
        # NumPy's power multiplies without FMA
        return complex(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)

    @njit(**_FLAGS)
    def _unit_or_zero(v):
        return np.copysign(one if np.isinf(v) else zero, v)

    @njit(**_FLAGS)
    def _zero_if_nan(v):
        return np.copysign(zero, v) if v != v else v

    @njit(**_FLAGS)
    def mul_annex_g(a, b):
        # C99 Annex G's product (as compilers emit for ``*``): a NaN+NaN result of an infinite
        # factor is recovered as the infinity it is
        p, q, r, s = a.real, a.imag, b.real, b.imag
        pr, qs, ps, qr = p * r, q * s, p * s, q * r
        x, y = pr - qs, ps + qr
        if x == x or y == y:
            return complex(x, y)
        again = False
        if np.isinf(p) or np.isinf(q):
            p, q, r, s = _unit_or_zero(p), _unit_or_zero(q), _zero_if_nan(r), _zero_if_nan(s)
            again = True
        if np.isinf(r) or np.isinf(s):
            r, s, p, q = _unit_or_zero(r), _unit_or_zero(s), _zero_if_nan(p), _zero_if_nan(q)
            again = True
        if not again and (np.isinf(pr) or np.isinf(qs) or np.isinf(ps) or np.isinf(qr)):
            p, q, r, s = _zero_if_nan(p), _zero_if_nan(q), _zero_if_nan(r), _zero_if_nan(s)
            again = True
        if again:
            inf = float_type(np.inf)
            return complex(inf * (p * r - q * s), inf * (p * s + q * r))
        return complex(x, y)

    @njit(**_FLAGS)
    def power(a, b):
        # NumPy's: 1 for a zero exponent, 0 or NaN for a zero base, ``a`` itself, a*a and
        # a*(a*a) for the exponents 1, 2 and 3, repeated squaring for other integral exponents
        # below 100 in magnitude, else exp(b log a) (the array API standard's definition)
        if b.real == zero and b.imag == zero:
            return complex(one, zero)
        if a.real == zero and a.imag == zero:
            if b.real > zero:
                return complex(zero, zero)
            return complex(nan, nan)
        if b.imag == zero and b.real == np.trunc(b.real) and abs(b.real) < 100:
            if b.real == one:
                return a
            if b.real == 2:
                return plain_mul(a, a)
            if b.real == 3:
                return plain_mul(a, plain_mul(a, a))
            n = int(abs(b.real))
            result = complex(one, zero)
            base = complex(a.real, a.imag)
            while n:
                if n & 1:
                    result = plain_mul(result, base)
                n >>= 1
                if n:
                    base = plain_mul(base, base)
            return div(complex(one, zero), result) if b.real < zero else result
        return exp(mul_annex_g(b, np.log(a)))

    return dict(mul=mul, square=square, absolute=absolute, div=div, sign=sign, tanh=tanh, tan=tan, rint=rint,
                power=power)


_PI, _HALF_PI, _QUARTER_PI = np.pi, np.pi / 2, np.pi / 4
_INF, _NAN = np.inf, np.nan


@njit(**_FLAGS)
def _cosh(x, y):
    if np.isfinite(x) and y == 0:         # exactly: x * y, not sinh(x) * 0 (NaN past overflow)
        return complex(np.cosh(x), x * y)
    if np.isfinite(x) and np.isfinite(y):
        return np.cosh(complex(x, y))
    if x == 0:
        return complex(y - y, x * np.copysign(0.0, y))
    if y == 0:
        return complex(x * x, np.copysign(0.0, x) * y)
    if np.isfinite(x):
        return complex(y - y, x * (y - y))
    if np.isinf(x):
        if not np.isfinite(y):
            return complex(_INF, x * (y - y))
        return complex(_INF * np.cos(y), x * np.sin(y))
    return complex((x * x) * (y - y), (x + x) * (y - y))


@njit(**_FLAGS)
def _sinh(x, y):
    if np.isfinite(x) and y == 0:
        return complex(np.sinh(x), y)
    if np.isfinite(x) and np.isfinite(y):
        return np.sinh(complex(x, y))
    if x == 0:
        return complex(x, y - y)
    if y == 0:
        return complex(x + x, y)
    if np.isfinite(x):
        return complex(y - y, y - y)
    if np.isinf(x):
        if not np.isfinite(y):
            return complex(_INF, y - y)     # the sign is unspecified: NumPy's (glibc's) +
        return complex(x * np.cos(y), _INF * np.sin(y))
    return complex((x + x) * (y - y), (x * x) * (y - y))


@njit(**_FLAGS)
def _asinh(x, y):
    if np.isfinite(x) and np.isfinite(y):
        return np.arcsinh(complex(x, y))
    if x != x:
        if y == 0:
            return complex(x, y)
        if np.isinf(y):
            return complex(abs(y), x)
        return complex(_NAN, _NAN)
    if y != y:
        return complex(x, y) if np.isinf(x) else complex(_NAN, _NAN)
    imag = (_QUARTER_PI if np.isinf(y) else 0.0) if np.isinf(x) else _HALF_PI
    return complex(np.copysign(_INF, x), np.copysign(imag, y))


@njit(**_FLAGS)
def _atanh(x, y):
    if np.isfinite(x) and np.isfinite(y):
        return np.arctanh(complex(x, y))
    if x != x:
        if np.isinf(y):
            return complex(np.copysign(0.0, x), np.copysign(_HALF_PI, y))
        return complex(_NAN, _NAN)
    if y != y:
        if np.isinf(x) or x == 0:
            return complex(np.copysign(0.0, x), y)
        return complex(_NAN, _NAN)
    return complex(np.copysign(0.0, x), np.copysign(_HALF_PI, y))


_LARGE = np.finfo(np.float64).max / 4


@njit(**_FLAGS)
def _acosh_finite(x, y):
    """acosh for finite parts and ``y >= +0``, as CPython's cmath (numba's loses the sign of
    a zero imaginary part and the precision near 1)."""
    if abs(x) > _LARGE or y > _LARGE:
        return complex(np.log(np.hypot(x / 2, y / 2)) + 2 * np.log(2.0), np.arctan2(y, x))
    s1 = np.sqrt(complex(x - 1, y))
    s2 = np.sqrt(complex(x + 1, y))
    return complex(np.arcsinh(s1.real * s2.real + s1.imag * s2.imag),
                   2 * np.arctan2(s1.imag, s2.real))


@njit(**_FLAGS)
def _acosh(x, y):
    if np.isfinite(x) and np.isfinite(y):
        r = _acosh_finite(x, abs(y))          # acosh(conj z) = conj(acosh z)
        return complex(r.real, -r.imag) if np.signbit(y) else r
    if x != x:
        return complex(_INF, x) if np.isinf(y) else complex(_NAN, _NAN)
    if y != y:
        if np.isinf(x):
            return complex(_INF, y)
        return complex(_NAN, _HALF_PI) if x == 0 else complex(_NAN, _NAN)
    if np.isinf(x):
        if np.isinf(y):
            imag = 3 * _QUARTER_PI if x < 0 else _QUARTER_PI
        else:
            imag = _PI if x < 0 else 0.0
        return complex(_INF, np.copysign(imag, y))
    return complex(_INF, np.copysign(_HALF_PI, y))


@njit(**_FLAGS)
def _acos(x, y):
    if np.isfinite(x) and np.isfinite(y):
        return np.arccos(complex(x, y))
    if x != x:
        return complex(x, -y) if np.isinf(y) else complex(_NAN, _NAN)
    if y != y:
        if np.isinf(x):
            return complex(y, -_INF)        # the sign is unspecified: NumPy's (glibc's) -
        return complex(_HALF_PI, y) if x == 0 else complex(_NAN, _NAN)
    if np.isinf(x):
        if np.isinf(y):
            real = 3 * _QUARTER_PI if x < 0 else _QUARTER_PI
        else:
            real = _PI if x < 0 else 0.0
        return complex(real, -np.copysign(_INF, y))
    return complex(_HALF_PI, -np.copysign(_INF, y))


# The circular functions through the hyperbolic ones, as C99 defines them:
# sin(z) = -i sinh(iz), cos(z) = cosh(iz), arcsin(z) = -i arcsinh(iz), arctan(z) = -i arctanh(iz)
@njit(**_FLAGS)
def cosh(a):
    return _cosh(a.real, a.imag)


@njit(**_FLAGS)
def sinh(a):
    return _sinh(a.real, a.imag)


@njit(**_FLAGS)
def cos(a):
    return _cosh(-a.imag, a.real)


@njit(**_FLAGS)
def sin(a):
    if np.isinf(a.imag) and not np.isfinite(a.real):
        return complex(_NAN, _INF)          # the sign is unspecified: NumPy's (glibc's) +
    s = _sinh(-a.imag, a.real)
    return complex(s.imag, -s.real)


@njit(**_FLAGS)
def arcsinh(a):
    return _asinh(a.real, a.imag)


@njit(**_FLAGS)
def arccosh(a):
    return _acosh(a.real, a.imag)


@njit(**_FLAGS)
def arctanh(a):
    return _atanh(a.real, a.imag)


@njit(**_FLAGS)
def arccos(a):
    return _acos(a.real, a.imag)


@njit(**_FLAGS)
def arcsin(a):
    if np.isinf(a.real) and a.imag != a.imag:
        return complex(_NAN, _INF)          # the sign is unspecified: NumPy's (glibc's) +
    s = _asinh(-a.imag, a.real)
    return complex(s.imag, -s.real)


@njit(**_FLAGS)
def arctan(a):
    s = _atanh(-a.imag, a.real)
    return complex(s.imag, -s.real)


_GENERIC = dict(exp=exp, cosh=cosh, sinh=sinh, cos=cos, sin=sin, arcsinh=arcsinh, arccosh=arccosh,
                arctanh=arctanh, arccos=arccos, arcsin=arcsin, arctan=arctan)

# The two widths' helpers share code objects, so numba's cache keeps them in one index, told
# apart by their argument types (each width is only ever called with its own). The generic
# ones compute in float64 and the kernel rounds a complex64 result once.
for _bits, _float, _cap in ((64, np.float32, 9.0), (128, np.float64, 22.0)):
    for _name, _fn in {**_helpers(_float, _cap), **_GENERIC}.items():
        globals()[f"{_name}_c{_bits}"] = _fn

HELPERS = COMPLEX_HELPERS
assert set(HELPERS) == {*_helpers(np.float64, 22.0), *_GENERIC}, "update mathnames"
__all__ = [f"{name}_c{bits}" for name in HELPERS for bits in (64, 128)]
