"""float64 power: ``exp(y * log|x|)`` with the logarithm in double-double."""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import _FLAGS, fma
from .float64 import (INF, LN2_HI, LN2_LO, NAN, _expm1_poly64, _reduce_ln2_64, _reduce_log64,
    _scale64)
from .trig64 import _two_sum

# power: exp(y * log|x|) with log|x| in double-double, so that the product keeps ~60 bits
# (a plain double log loses up to |y log x| * 2**-53 in the exponent: 300 ULP near overflow).
@njit(forceinline=True, **_FLAGS)
def _log_dd64(a):
    """log(a) = hi + lo for finite a > 0."""
    dk, f = _reduce_log64(a)
    d, d_lo = _two_sum(2.0, f)            # 2 + f may round
    s = f / d
    s_lo = (fma(-s, d, f) - s * d_lo) / d  # f / (d + d_lo) = s + s_lo
    # log1p(f) = 2s + 2s z/3 + 2s z (z/5 + z**2/7 + ... + z**11/25), z = s*s < 0.0295; the
    # second term (up to 1% of the result) is formed in double-double, the rest is below 2**-61
    z = s * s
    z_lo = fma(s, s, -z) + 2.0 * s * s_lo
    p = 1.0 / 25.0
    p = p * z + 1.0 / 23.0
    p = p * z + 1.0 / 21.0
    p = p * z + 1.0 / 19.0
    p = p * z + 1.0 / 17.0
    p = p * z + 1.0 / 15.0
    p = p * z + 1.0 / 13.0
    p = p * z + 1.0 / 11.0
    p = p * z + 1.0 / 9.0
    p = p * z + 1.0 / 7.0
    p = p * z + 1.0 / 5.0
    tail = (2.0 * s) * (z * (z * p))
    u = (2.0 * s) * z                     # 2s z = u + u_lo
    u_lo = fma(2.0 * s, z, -u) + 2.0 * s * z_lo + 2.0 * s_lo * z
    third = u / 3.0                       # 2s z / 3 = third + third_lo
    third_lo = (fma(-third, 3.0, u) + u_lo) / 3.0
    hi, e1 = _two_sum(dk * LN2_HI, 2.0 * s)
    hi, e2 = _two_sum(hi, third)
    lo = e1 + e2 + (dk * LN2_LO + 2.0 * s_lo + third_lo + tail)
    return _two_sum(hi, lo)


@njit(forceinline=True, **_FLAGS)
def _exp_dd64(hi, lo):
    """exp(hi + lo), |lo| <= ulp(hi). Beyond the range where the result is finite and
    nonzero, ``hi`` is clamped and ``lo`` (huge there: ulp(hi)) is dropped."""
    inside = hi >= -746.0 and hi <= 710.0
    xc = hi if inside else (-746.0 if hi < -746.0 else 710.0)
    k, r = _reduce_ln2_64(xc)
    return _scale64(1.0 + _expm1_poly64(r + (lo if inside else 0.0)), k)


@njit(forceinline=True, **_FLAGS)
def _pow_signs_and_specials(x, y, mag):
    """``x ** y`` (float64) from ``mag`` = ``|x| ** y``: the sign for negative ``x`` and odd
    integer ``y``, NaN for negative ``x`` and non-integer ``y``, and C99 ``pow``'s cases for
    1, 0, NaN and infinite exponents."""
    ax = abs(x)
    y_int = np.floor(y) == y
    y_odd = y_int and abs(y) < 9007199254740992.0 and np.floor(0.5 * y) * 2.0 != y
    negative = np.signbit(x)
    r = -mag if (negative and y_odd) else mag
    r = NAN if (negative and not y_int and ax != 0.0 and ax != INF) else r
    r = 1.0 if (ax == 1.0 and abs(y) == INF) else r
    r = x + y if (x != x or y != y) else r
    return 1.0 if (x == 1.0 or y == 0.0) else r


@njit(forceinline=True, **_FLAGS)
def power64(x, y):
    """``x ** y`` with C99 ``pow``'s special cases."""
    ax = abs(x)
    l_hi, l_lo = _log_dd64(ax if (ax > 0.0 and ax < INF) else 1.0)
    z_hi = y * l_hi
    z_lo = fma(y, l_hi, -z_hi) + y * l_lo
    mag = _exp_dd64(z_hi, z_lo)
    edge = (y < 0.0) == (ax == 0.0)       # |x| = 0 or inf: 0 or inf by the sign of y
    mag = (INF if edge else 0.0) if (ax == 0.0 or ax == INF) else mag
    mag = (INF if (ax > 1.0) == (y > 0.0) else 0.0) if abs(y) == INF else mag
    return _pow_signs_and_specials(x, y, mag)
