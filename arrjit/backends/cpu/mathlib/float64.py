"""float64 exp, expm1, log, log2, log10, log1p, tanh, sinh, cosh."""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import _FLAGS, bits, from_bits

# -- float64 ----------------------------------------------------------------------------------
LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01   # 32 significant bits: k * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10
SHIFT = 6755399441055744.0            # 1.5 * 2**52: adding it rounds to an integer
SHIFT_BITS = 0x4338000000000000
INF = np.inf
NAN = np.nan


@njit(**_FLAGS)
def _scale64(p, k):
    """``p * 2**k`` for integer k in [-1100, 1100], in two steps so that each factor is a
    normal number (the second multiplication rounds subnormal results once)."""
    k1 = k >> 1
    s1 = from_bits((k1 + 1023) << 52)
    s2 = from_bits((k - k1 + 1023) << 52)
    return (p * s1) * s2


@njit(**_FLAGS)
def _reduce_ln2_64(x):
    """(k, r) with x = k * ln2 + r, |r| <= ln2/2 (x already clamped)."""
    kf = x * LOG2E + SHIFT
    k = bits(kf) - SHIFT_BITS
    kd = kf - SHIFT
    r = (x - kd * LN2_HI) - kd * LN2_LO
    return k, r


@njit(**_FLAGS)
def _expm1_poly64(r):
    """expm1(r) for |r| <= 0.35: Taylor series to degree 13."""
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    return r + (r * r) * p


@njit(**_FLAGS)
def exp64(x):
    xc = -746.0 if x < -746.0 else (710.0 if x > 710.0 else x)
    k, r = _reduce_ln2_64(xc)
    y = _scale64(1.0 + _expm1_poly64(r), k)
    return x if x != x else y


@njit(**_FLAGS)
def expm1_64(x):
    xc = -40.0 if x < -40.0 else (710.0 if x > 710.0 else x)
    k, r = _reduce_ln2_64(xc)
    p = _expm1_poly64(r)
    scale = from_bits(((k if k < 1000 else 0) + 1023) << 52)
    moderate = scale * p + (scale - 1.0)
    large = _scale64(1.0 + p, k)          # k > 56: the "- 1" is below the last bit
    y = large if k > 56 else moderate
    return x if (x != x or x == 0.0) else y


# log: FreeBSD e_log.c without branches.
LG1 = 6.666666666666735130e-01
LG2 = 3.999999999940941908e-01
LG3 = 2.857142874366239149e-01
LG4 = 2.222219843214978396e-01
LG5 = 1.818357216161805012e-01
LG6 = 1.531383769920937332e-01
LG7 = 1.479819860511658591e-01
TWO54 = 18014398509481984.0
MIN_NORMAL64 = 2.2250738585072014e-308


@njit(**_FLAGS)
def _reduce_log64(x):
    """(dk, f) with x = 2**dk * (1 + f), 1 + f in [sqrt(2)/2, sqrt(2)), f exact, for finite
    x > 0 (subnormals scaled first)."""
    sub = x < MIN_NORMAL64
    xs = x * TWO54 if sub else x
    ix = bits(xs)
    hi = (ix >> 32) + (0x3ff00000 - 0x3fe6a09e)
    k = (hi >> 20) - 0x3ff - (54 if sub else 0)
    hi = (hi & 0x000fffff) + 0x3fe6a09e
    return np.float64(k), from_bits((hi << 32) | (ix & 0xffffffff)) - 1.0


@njit(**_FLAGS)
def _log_parts64(x):
    """(dk, f, hfsq, tail) with log(x) = dk*ln2 + f - hfsq + tail for finite x > 0."""
    dk, f = _reduce_log64(x)
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (LG2 + w * (LG4 + w * LG6))
    t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)))
    return dk, f, hfsq, s * (hfsq + t1 + t2)


@njit(**_FLAGS)
def _log_specials64(x, y):
    y = INF if x == INF else y
    y = -INF if x == 0.0 else y
    y = NAN if x < 0.0 else y
    return x if x != x else y


@njit(**_FLAGS)
def log64(x):
    dk, f, hfsq, tail = _log_parts64(x)
    y = dk * LN2_HI + ((f - (hfsq - (tail + dk * LN2_LO))))
    return _log_specials64(x, y)


INV_LN2_HI = 1.44269504072144627571e+00
INV_LN2_LO = 1.67517131648865118353e-10
LOG10_2_HI = 3.01029995663611771306e-01
LOG10_2_LO = 3.69423907715893078616e-13
INV_LN10_HI = 4.34294481878168880939e-01
INV_LN10_LO = 2.50829467116452752298e-11


@njit(**_FLAGS)
def _log1pm_split64(f, hfsq, tail):
    """log(1 + f) = hi + lo, hi with its low 32 bits cleared (FreeBSD e_log2.c)."""
    hi = f - hfsq
    hi = from_bits(bits(hi) & np.int64(-4294967296))
    lo = (f - hi) - hfsq + tail
    return hi, lo


@njit(**_FLAGS)
def log2_64(x):
    dk, f, hfsq, tail = _log_parts64(x)
    hi, lo = _log1pm_split64(f, hfsq, tail)
    val_hi = hi * INV_LN2_HI
    val_lo = (lo + hi) * INV_LN2_LO + lo * INV_LN2_HI
    w = dk + val_hi
    val_lo += (dk - w) + val_hi
    return _log_specials64(x, val_lo + w)


@njit(**_FLAGS)
def log10_64(x):
    dk, f, hfsq, tail = _log_parts64(x)
    hi, lo = _log1pm_split64(f, hfsq, tail)
    val_hi = hi * INV_LN10_HI
    y2 = dk * LOG10_2_HI
    val_lo = dk * LOG10_2_LO + (lo + hi) * INV_LN10_LO + lo * INV_LN10_HI
    w = y2 + val_hi
    val_lo += (y2 - w) + val_hi
    return _log_specials64(x, val_lo + w)


@njit(**_FLAGS)
def log1p64(x):
    u = 1.0 + x
    # log(u) plus the first-order correction for the rounding of 1 + x
    c = (x - (u - 1.0)) / u
    y = log64(u) + c
    y = INF if x == INF else y
    y = -INF if x == -1.0 else y
    y = NAN if x < -1.0 else y
    small = x if x < 0.0 else -x           # -|x|, NaN stays NaN
    return x if (x != x or small > -5.551115123125783e-17) else y


@njit(**_FLAGS)
def tanh64(x):
    a = abs(x)
    t = expm1_64(2.0 * (22.0 if a > 22.0 else a))
    return np.copysign(t / (t + 2.0), x)


@njit(**_FLAGS)
def sinh64(x):
    a = abs(x)
    big = a >= 709.0                      # e**a overflows: use (e**(a/2))**2 / 2
    t = expm1_64(0.5 * a if big else a)
    moderate = 0.5 * (t + t / (t + 1.0))  # no cancellation: exact enough for all a < 709
    w = t + 1.0
    return np.copysign((0.5 * w) * w if big else moderate, x)


@njit(**_FLAGS)
def cosh64(x):
    a = abs(x)
    big = a >= 709.0
    e = exp64(0.5 * a if big else a)
    return (0.5 * e) * e if big else 0.5 * e + 0.5 / e
