"""float32 forms: their own exp/log family; the costlier ones round the float64
form once."""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import _FLAGS, _f32, bits, from_bits
from .float64 import cosh64, exp64, log64, sinh64
from .trig64 import arctan2_64, arctan64, cos64, sin64, tan64
from .power64 import _pow_signs_and_specials

# -- float32 ----------------------------------------------------------------------------------
LOG2E_F = _f32(1.4426950408889634)
LN2_HI_F = _f32(6.9314575195e-01)     # 0x3f317200: k * LN2_HI_F is exact
LN2_LO_F = _f32(1.4286067653e-06)
SHIFT_F = _f32(12582912.0)            # 1.5 * 2**23
SHIFT_BITS_F = 0x4b400000
ONE_F, HALF_F, TWO_F, ZERO_F = _f32(1.0), _f32(0.5), _f32(2.0), _f32(0.0)
INF_F, NAN_F = _f32(np.inf), _f32(np.nan)
EXP_LO_F, EXP_HI_F = _f32(-104.0), _f32(89.0)
EXPM1_LO_F = _f32(-18.0)
TANH_CAP_F = _f32(9.5)     # tanh rounds to 1 beyond it
INV_FACT_F = tuple(_f32(1.0 / f) for f in (2.0, 6.0, 24.0, 120.0, 720.0, 5040.0, 40320.0))


@njit(**_FLAGS)
def _scale32(p, k):
    k1 = k >> 1
    s1 = from_bits(np.int32((k1 + 127) << 23))
    s2 = from_bits(np.int32((k - k1 + 127) << 23))
    return (p * s1) * s2


@njit(**_FLAGS)
def _reduce_ln2_32(x):
    kf = x * LOG2E_F + SHIFT_F
    k = np.int32(bits(kf) - SHIFT_BITS_F)
    kd = kf - SHIFT_F
    r = (x - kd * LN2_HI_F) - kd * LN2_LO_F
    return k, r


@njit(**_FLAGS)
def _expm1_poly32(r):
    p = INV_FACT_F[6]
    p = p * r + INV_FACT_F[5]
    p = p * r + INV_FACT_F[4]
    p = p * r + INV_FACT_F[3]
    p = p * r + INV_FACT_F[2]
    p = p * r + INV_FACT_F[1]
    p = p * r + INV_FACT_F[0]
    return r + (r * r) * p


@njit(**_FLAGS)
def exp32(x):
    xc = EXP_LO_F if x < EXP_LO_F else (EXP_HI_F if x > EXP_HI_F else x)
    k, r = _reduce_ln2_32(xc)
    y = _scale32(ONE_F + _expm1_poly32(r), k)
    return x if x != x else y


@njit(**_FLAGS)
def expm1_32(x):
    xc = EXPM1_LO_F if x < EXPM1_LO_F else (EXP_HI_F if x > EXP_HI_F else x)
    k, r = _reduce_ln2_32(xc)
    p = _expm1_poly32(r)
    scale = from_bits(np.int32(((k if k < 100 else 0) + 127) << 23))
    moderate = scale * p + (scale - ONE_F)
    large = _scale32(ONE_F + p, k)
    y = large if k > 25 else moderate
    return x if (x != x or x == ZERO_F) else y


# logf: FreeBSD e_logf.c without branches.
LG1_F = _f32(0.66666662693)
LG2_F = _f32(0.40000972152)
LG3_F = _f32(0.28498786688)
LG4_F = _f32(0.24279078841)
LN2_HI_LOG_F = _f32(6.9313812256e-01)
LN2_LO_LOG_F = _f32(9.0580006145e-06)
TWO25_F = _f32(33554432.0)
MIN_NORMAL32 = _f32(1.1754943508222875e-38)
INV_LN2_F = _f32(1.4426950408889634)
LOG1P_TINY_F = _f32(-2.9802322e-08)   # below it log1p(x) rounds to x
INV_LN10_F = _f32(0.4342944819032518)
LOG10_2_F = _f32(0.30102999566398120)


@njit(**_FLAGS)
def _log_parts32(x):
    """(dk, f, hfsq, tail) with log(x) = dk*ln2 + f - hfsq + tail for finite x > 0."""
    sub = x < MIN_NORMAL32
    xs = x * TWO25_F if sub else x
    ix = bits(xs) + (0x3f800000 - 0x3f3504f3)
    k = (ix >> 23) - 0x7f - (25 if sub else 0)
    m = from_bits(np.int32((ix & 0x007fffff) + 0x3f3504f3))
    f = m - ONE_F
    s = f / (TWO_F + f)
    z = s * s
    w = z * z
    t1 = w * (LG2_F + w * LG4_F)
    t2 = z * (LG1_F + w * LG3_F)
    hfsq = HALF_F * f * f
    return np.float32(k), f, hfsq, s * (hfsq + t1 + t2)


@njit(**_FLAGS)
def _log_specials32(x, y):
    y = INF_F if x == INF_F else y
    y = -INF_F if x == ZERO_F else y
    y = NAN_F if x < ZERO_F else y
    return x if x != x else y


@njit(**_FLAGS)
def log32(x):
    dk, f, hfsq, tail = _log_parts32(x)
    return _log_specials32(x, tail + dk * LN2_LO_LOG_F - hfsq + f + dk * LN2_HI_LOG_F)


@njit(**_FLAGS)
def log2_32(x):
    dk, f, hfsq, tail = _log_parts32(x)
    return _log_specials32(x, dk + (f - hfsq + tail) * INV_LN2_F)


@njit(**_FLAGS)
def log10_32(x):
    dk, f, hfsq, tail = _log_parts32(x)
    return _log_specials32(x, dk * LOG10_2_F + (f - hfsq + tail) * INV_LN10_F)


@njit(**_FLAGS)
def log1p32(x):
    u = ONE_F + x
    c = (x - (u - ONE_F)) / u
    y = log32(u) + c
    y = INF_F if x == INF_F else y
    y = -INF_F if x == -ONE_F else y
    y = NAN_F if x < -ONE_F else y
    small = x if x < ZERO_F else -x
    return x if (x != x or small > LOG1P_TINY_F) else y


@njit(**_FLAGS)
def tanh32(x):
    a = abs(x)
    t = expm1_32(TWO_F * (TANH_CAP_F if a > TANH_CAP_F else a))
    return np.copysign(t / (t + TWO_F), x)


@njit(**_FLAGS)
def sinh32(x):
    return np.float32(sinh64(np.float64(x)))


@njit(**_FLAGS)
def cosh32(x):
    return np.float32(cosh64(np.float64(x)))


@njit(**_FLAGS)
def arctan32(x):
    return np.float32(arctan64(np.float64(x)))


@njit(forceinline=True, **_FLAGS)
def arctan2_32(y, x):
    return np.float32(arctan2_64(np.float64(y), np.float64(x)))


@njit(forceinline=True, **_FLAGS)
def sin32(x):
    return np.float32(sin64(np.float64(x)))


@njit(forceinline=True, **_FLAGS)
def cos32(x):
    return np.float32(cos64(np.float64(x)))


@njit(forceinline=True, **_FLAGS)
def tan32(x):
    return np.float32(tan64(np.float64(x)))


@njit(forceinline=True, **_FLAGS)
def power32(x, y):
    """``x ** y`` (C99 ``pow`` special cases) through float64 ``exp(y * log|x|)``, exact to
    float32 after one rounding."""
    xd = np.float64(x)
    yd = np.float64(y)
    return np.float32(_pow_signs_and_specials(xd, yd, exp64(yd * log64(abs(xd)))))
