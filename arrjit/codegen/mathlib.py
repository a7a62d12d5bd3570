"""Vectorisable math functions for generated CPU kernels.

numba's ``np.exp``/``np.log``/``np.tanh``... are calls to the scalar C library, and a loop that
calls a function LLVM has no vector variant for is not vectorised at all. The functions here are
branch-free (conditions become selects), call nothing but each other (LLVM inlines them into
the kernel loop) and reinterpret float bits with the ``bits``/``from_bits`` intrinsics, so a
fused loop using them vectorises.

Each ``<name>64`` works in float64 and each ``<name>32`` in float32. Methods follow FreeBSD's
msun/musl (argument reduction by ``k*ln2`` or ``k*pi/2`` in two or three parts, then a
minimax or Taylor polynomial on the reduced argument); the float32 forms of the costlier
functions evaluate the float64 form and round once.

Accuracy, measured against NumPy by ``tests/test_mathlib.py`` (dense uniform and log-uniform
sampling over each function's domain plus the edge regions; the per-function bounds are in its
``UNARY`` table): every function is within 3 ULP of NumPy in float32 and float64 (exp, log,
log1p, sinh, arctan, sin, cos: 1-2 ULP), and special values (NaN, +-inf, +-0, subnormals,
overflow and underflow thresholds, out-of-domain arguments) are bit-identical to NumPy's.

``sin``/``cos``/``tan`` reduce ``|x| < 2**20 * pi/2`` by three-part Cody-Waite and larger
arguments by Payne-Hanek with a table of 2/pi chunks indexed by the exponent (a gather), in
double-double arithmetic with ``fma``. ``power`` computes ``exp(y * log|x|)`` with the
logarithm in double-double (to 2**-61), so the exponent keeps its precision near overflow
(within 1 ULP of NumPy); float32 rounds the float64 result once. The larger functions are
``inline="always"``: LLVM's inliner would leave them as calls, and a call keeps the loop
scalar.

>>> import numpy as np
>>> float(exp64(1.0)) == float(np.exp(1.0))
True
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

# Inside these functions FMA contraction is allowed (more accurate, never less); nothing else.
_FLAGS = dict(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy")


# -- bit casts --------------------------------------------------------------------------------
def _bitcast(source: type, targets: dict[int, types.Type], doc: str):
    """An intrinsic reinterpreting a ``source``-kind scalar as the same-width type in
    ``targets`` (keyed by bit width)."""
    @intrinsic
    def cast(typingctx, x):
        if not isinstance(x, source) or x.bitwidth not in targets:
            return None
        target = targets[x.bitwidth]

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))
        return target(x), codegen
    cast.__doc__ = doc
    return cast


bits = _bitcast(types.Float, {64: types.int64, 32: types.int32},
                "The IEEE bits of a float as a signed integer of the same width.")
from_bits = _bitcast(types.Integer, {64: types.float64, 32: types.float32},
                     "The float whose IEEE bits are the signed integer (int64 -> float64, "
                     "int32 -> float32).")


def _llvm_float(name: str, arity: int, doc: str):
    """An intrinsic calling LLVM's ``name`` on ``arity`` (2 or 3) floats of one type (LLVM
    knows their vector forms, so loops using them still vectorise)."""
    def typer(operands):
        ftype = operands[0]
        if not isinstance(ftype, types.Float) or any(t != ftype for t in operands):
            return None

        def codegen(context, builder, signature, args):
            ty = context.get_value_type(ftype)
            fn = builder.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * arity))
            return builder.call(fn, args)
        return ftype(*operands), codegen

    # numba's inliner needs a fixed parameter list (no *args)
    if arity == 2:
        def call(typingctx, a, b):
            return typer((a, b))
    else:
        def call(typingctx, a, b, c):
            return typer((a, b, c))
    call.__doc__ = doc
    return intrinsic(call)


fma = _llvm_float("llvm.fma", 3, "``a * b + c`` with one rounding.")
# NaN-propagating max/min: a loop reducing with them vectorises, where the equivalent
# compare-and-branch does not.
fmaximum = _llvm_float("llvm.maximum", 2, "max(a, b); NaN if either is NaN.")
fminimum = _llvm_float("llvm.minimum", 2, "min(a, b); NaN if either is NaN.")


def _f32(value: float) -> np.float32:
    return np.float32(value)


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


@njit(inline="always", **_FLAGS)
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


@njit(inline="always", **_FLAGS)
def _two_sum(a, b):
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


@njit(inline="always", **_FLAGS)
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


@njit(inline="always", **_FLAGS)
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


@njit(inline="always", **_FLAGS)
def _sin_kernel64(x, y):
    z = x * x
    w = z * z
    r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6)
    v = z * x
    return x - ((z * (0.5 * y - v * r) - y) - v * S1)


@njit(inline="always", **_FLAGS)
def _cos_kernel64(x, y):
    z = x * x
    w = z * z
    r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


@njit(inline="always", **_FLAGS)
def sin64(x):
    q, r, rr = _reduce_pio2_64(x)
    s = _sin_kernel64(r, rr)
    c = _cos_kernel64(r, rr)
    y = c if (q & 1) != 0 else s          # two-way selects: a switch would not vectorise
    y = -y if (q & 2) != 0 else y
    y = x if x == 0.0 else y              # keeps the sign of zero
    return x - x if not abs(x) < INF else y  # inf -> NaN, NaN stays


@njit(inline="always", **_FLAGS)
def cos64(x):
    q, r, rr = _reduce_pio2_64(x)
    s = _sin_kernel64(r, rr)
    c = _cos_kernel64(r, rr)
    y = s if (q & 1) != 0 else c
    y = -y if ((q + 1) & 2) != 0 else y
    return x - x if not abs(x) < INF else y


@njit(inline="always", **_FLAGS)
def tan64(x):
    q, r, rr = _reduce_pio2_64(x)
    s = _sin_kernel64(r, rr)
    c = _cos_kernel64(r, rr)
    y = s / c if (q & 1) == 0 else -c / s
    y = x if x == 0.0 else y
    return x - x if not abs(x) < INF else y


# power: exp(y * log|x|) with log|x| in double-double, so that the product keeps ~60 bits
# (a plain double log loses up to |y log x| * 2**-53 in the exponent: 300 ULP near overflow).
@njit(inline="always", **_FLAGS)
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


@njit(inline="always", **_FLAGS)
def _exp_dd64(hi, lo):
    """exp(hi + lo), |lo| <= ulp(hi)."""
    xc = -746.0 if hi < -746.0 else (710.0 if hi > 710.0 else hi)
    k, r = _reduce_ln2_64(xc)
    return _scale64(1.0 + _expm1_poly64(r + lo), k)


@njit(inline="always", **_FLAGS)
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


@njit(inline="always", **_FLAGS)
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


@njit(inline="always", **_FLAGS)
def arctan2_32(y, x):
    return np.float32(arctan2_64(np.float64(y), np.float64(x)))


@njit(inline="always", **_FLAGS)
def sin32(x):
    return np.float32(sin64(np.float64(x)))


@njit(inline="always", **_FLAGS)
def cos32(x):
    return np.float32(cos64(np.float64(x)))


@njit(inline="always", **_FLAGS)
def tan32(x):
    return np.float32(tan64(np.float64(x)))


@njit(inline="always", **_FLAGS)
def power32(x, y):
    """``x ** y`` (C99 ``pow`` special cases) through float64 ``exp(y * log|x|)``, exact to
    float32 after one rounding."""
    xd = np.float64(x)
    yd = np.float64(y)
    return np.float32(_pow_signs_and_specials(xd, yd, exp64(yd * log64(abs(xd)))))
