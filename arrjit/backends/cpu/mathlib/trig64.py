"""float64 arctan, arctan2, sin, cos, tan (Cody-Waite and Payne-Hanek reduction)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .bits import _FLAGS, bits, fma
from .float64 import INF, SHIFT, SHIFT_BITS

# arctan: FreeBSD s_atan.c, the interval chosen by selects.
AT0 = 3.33333333333329318027e-01
AT1 = -1.99999999998764832476e-01
AT2 = 1.42857142725034663711e-01
AT3 = -1.11111104054623557880e-01
AT4 = 9.09088713343650656196e-02
AT5 = -7.69187620504482999495e-02
AT6 = 6.66107313738753120669e-02
AT7 = -5.83357013379057348645e-02
AT8 = 4.97687799461593236017e-02
AT9 = -3.65315727442169155270e-02
AT10 = 1.62858201153657823623e-02
ATAN_HALF_HI, ATAN_HALF_LO = 4.63647609000806093515e-01, 2.26987774529616870924e-17
ATAN_ONE_HI, ATAN_ONE_LO = 7.85398163397448278999e-01, 3.06161699786838301793e-17
ATAN_1P5_HI, ATAN_1P5_LO = 9.82793723247329054082e-01, 1.39033110312309984516e-17
PIO2_HI, PIO2_LO = 1.57079632679489655800e+00, 6.12323399573676603587e-17
PI_HI, PI_LO = 3.1415926535897931160e+00, 1.2246467991473531772e-16


@njit(**_FLAGS)
def _atan_abs64(a):
    """arctan(a) for a >= 0 (or NaN)."""
    r3 = a >= 2.4375
    r2 = a >= 1.1875
    r1 = a >= 0.6875
    r0 = a >= 0.4375
    num = -1.0 if r3 else (a - 1.5 if r2 else (a - 1.0 if r1 else (2.0 * a - 1.0 if r0 else a)))
    den = a if r3 else (1.0 + 1.5 * a if r2 else (a + 1.0 if r1 else (2.0 + a if r0 else 1.0)))
    hi = PIO2_HI if r3 else (ATAN_1P5_HI if r2 else (ATAN_ONE_HI if r1 else
                                                      (ATAN_HALF_HI if r0 else 0.0)))
    lo = PIO2_LO if r3 else (ATAN_1P5_LO if r2 else (ATAN_ONE_LO if r1 else
                                                      (ATAN_HALF_LO if r0 else 0.0)))
    t = num / den
    z = t * t
    w = z * z
    s1 = z * (AT0 + w * (AT2 + w * (AT4 + w * (AT6 + w * (AT8 + w * AT10)))))
    s2 = w * (AT1 + w * (AT3 + w * (AT5 + w * (AT7 + w * AT9))))
    return hi - ((t * (s1 + s2) - lo) - t)


@njit(**_FLAGS)
def arctan64(x):
    return np.copysign(_atan_abs64(abs(x)), x)


@njit(forceinline=True, **_FLAGS)
def arctan2_64(y, x):
    ay = abs(y)
    ax = abs(x)
    z = _atan_abs64(ay / ax)
    z = ATAN_ONE_HI if (ay == INF and ax == INF) else z
    z = PIO2_HI if (ax == 0.0 and ay != 0.0) else z
    z = 0.0 if ay == 0.0 else z
    z = (PI_HI - (z - PI_LO)) if np.signbit(x) else z
    z = np.copysign(z, y)
    return y + x if (x != x or y != y) else z


# sin/cos/tan: argument reduction by k*pi/2 in three parts (FreeBSD e_rem_pio2.c, medium
# case), valid for |x| < 2**20 * pi/2; kernels of k_sin.c / k_cos.c.
INV_PIO2 = 6.36619772367581382433e-01
PIO2_1 = 1.57079632673412561417e+00
PIO2_2 = 6.07710050630396597660e-11
PIO2_3 = 2.02226624871116645580e-21
PIO2_3T = 8.47842766036889956997e-32
LIBM_RANGE = 1647099.0   # below 2**20 * pi/2
S1 = -1.66666666666666324348e-01
S2 = 8.33333333332248946124e-03
S3 = -1.98412698298579493134e-04
S4 = 2.75573137070700676789e-06
S5 = -2.50507602534068634195e-08
S6 = 1.58969099521155010221e-10
C1 = 4.16666666666666019037e-02
C2 = -1.38888888888741095749e-03
C3 = 2.48015872894767294178e-05
C4 = -2.75573143513906633035e-07
C5 = 2.08757232129817482790e-09
C6 = -1.13596475577881948265e-11


def _two_over_pi_table() -> np.ndarray:
    """For each binary exponent E of a large argument, three doubles t0, t1, t2 (scaled by
    2**64) holding the 159 bits of 2/pi that matter for ``x * 2/pi mod 4``: the bits that
    would contribute multiples of 4 (weight >= 4 / ulp(x)) are dropped, so ``x * t0`` stays
    below 2**55. Computed exactly from a 1400-bit 2/pi (Machin's formula in integers)."""
    bits_ = 1400
    one = 1 << (bits_ + 20)

    def arctan_inv(n: int) -> int:       # arctan(1/n) * one
        total, term, k = 0, one // n, 0
        while term:
            total += term // (2 * k + 1) * (-1) ** k
            term //= n * n
            k += 1
        return total
    pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)
    two_over_pi = (2 * one << bits_) // pi   # 2/pi * 2**bits_
    table = np.zeros((3, 1024), dtype=np.float64)
    for e in range(1024):
        p = e - 52
        for k in range(3):
            shift = p + 51 + 53 * k
            chunk = (two_over_pi >> (bits_ - shift)) & ((1 << 53) - 1) if shift >= 0 else 0
            table[k, e] = math.ldexp(float(chunk), 64 - shift)
    return table


TWO_OVER_PI_CHUNKS = _two_over_pi_table()
T0_TABLE, T1_TABLE, T2_TABLE = (np.ascontiguousarray(row) for row in TWO_OVER_PI_CHUNKS)
TWO_M64 = 2.0 ** -64


@njit(forceinline=True, **_FLAGS)
def _two_sum(a, b):
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


@njit(forceinline=True, **_FLAGS)
def _reduce_large64(a):
    """(quadrant, r, rr) for a >= LIBM_RANGE (finite): Payne-Hanek reduction with the
    exponent-indexed chunks of 2/pi, in double-double arithmetic."""
    e = ((bits(a) >> 52) & 0x7ff) - 1023
    e = 20 if e < 20 else e
    a_s = a * TWO_M64
    t0, t1, t2 = T0_TABLE[e], T1_TABLE[e], T2_TABLE[e]
    p0h = a_s * t0
    p0l = fma(a_s, t0, -p0h)
    p0h = p0h - 4.0 * ((p0h * 0.25 + SHIFT) - SHIFT)   # drop multiples of 4 (exact)
    p1h = a_s * t1
    p1l = fma(a_s, t1, -p1h)
    sh, e1 = _two_sum(p0h, p1h)
    sh, e2 = _two_sum(sh, p0l)
    sl = e1 + e2 + p1l + a_s * t2
    qf = (sh + SHIFT) - SHIFT                          # nearest integer
    q = bits(sh + SHIFT) - SHIFT_BITS
    fh, fl = _two_sum(sh - qf, sl)
    rh = fh * PIO2_HI
    rl = fma(fh, PIO2_HI, -rh) + (fh * PIO2_LO + fl * PIO2_HI)
    r = rh + rl
    return q & 3, r, rl - (r - rh)


@njit(forceinline=True, **_FLAGS)
def _reduce_pio2_64(x):
    """(quadrant, r, rr) with x = quadrant*pi/2 + r + rr, |r| <= ~pi/4."""
    large = not abs(x) < LIBM_RANGE
    xc = 0.0 if large else x
    kf = xc * INV_PIO2 + SHIFT
    n = bits(kf) - SHIFT_BITS
    kd = kf - SHIFT
    r1 = xc - kd * PIO2_1                 # exact
    w = kd * PIO2_2
    r2 = r1 - w
    w2 = kd * PIO2_3 - ((r1 - r2) - w)    # the rounding of r1 - w, plus the third part
    r = r2 - w2
    rr = ((r2 - r) - w2) - kd * PIO2_3T
    a = abs(x)
    lq, lr, lrr = _reduce_large64(a if a < INF else LIBM_RANGE)
    negative = x < 0.0
    lq = ((4 - lq) & 3) if negative else lq
    lr = -lr if negative else lr
    lrr = -lrr if negative else lrr
    return (lq if large else n & 3), (lr if large else r), (lrr if large else rr)


@njit(forceinline=True, **_FLAGS)
def _sin_kernel64(x, y):
    z = x * x
    w = z * z
    r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6)
    v = z * x
    return x - ((z * (0.5 * y - v * r) - y) - v * S1)


@njit(forceinline=True, **_FLAGS)
def _cos_kernel64(x, y):
    z = x * x
    w = z * z
    r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


@njit(forceinline=True, **_FLAGS)
def sin64(x):
    q, r, rr = _reduce_pio2_64(x)
    s = _sin_kernel64(r, rr)
    c = _cos_kernel64(r, rr)
    y = c if (q & 1) != 0 else s          # two-way selects: a switch would not vectorise
    y = -y if (q & 2) != 0 else y
    y = x if x == 0.0 else y              # keeps the sign of zero
    return x - x if not abs(x) < INF else y  # inf -> NaN, NaN stays


@njit(forceinline=True, **_FLAGS)
def cos64(x):
    q, r, rr = _reduce_pio2_64(x)
    s = _sin_kernel64(r, rr)
    c = _cos_kernel64(r, rr)
    y = s if (q & 1) != 0 else c
    y = -y if ((q + 1) & 2) != 0 else y
    return x - x if not abs(x) < INF else y


@njit(forceinline=True, **_FLAGS)
def tan64(x):
    q, r, rr = _reduce_pio2_64(x)
    s = _sin_kernel64(r, rr)
    c = _cos_kernel64(r, rr)
    y = s / c if (q & 1) == 0 else -c / s
    y = x if x == 0.0 else y
    return x - x if not abs(x) < INF else y
