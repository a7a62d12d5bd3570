"""``arrjit.scipy.special``: the special functions of ``jax.scipy.special``, with SciPy's
values. ``erf``, ``erfc``, ``gammaln``, ``digamma``, ``gammainc`` and ``gammaincc`` are
elementwise primitives (numba-compiled scalar algorithms, ``core.special``); the others are
compositions that fuse into the surrounding kernel. All are differentiable.

>>> import numpy as np, arrjit
>>> from arrjit.scipy.special import logsumexp, erf, expit
>>> float(arrjit.jit(logsumexp)(np.log(np.array([1.0, 2.0, 3.0]))))
1.791759469228055
>>> arrjit.jit(lambda x: erf(x) + expit(x))(np.array([0.0]))
array([0.5])
"""
from __future__ import annotations

import math

import numpy as np

from .. import numpy as anp
from ..core import primitives as p
from ..core.ir import Op
from ..core.trace import Tracer
from ..numpy import elementwise

__all__ = ["erf", "erfc", "gammaln", "digamma", "psi", "polygamma", "gammainc", "gammaincc",
           "gamma", "betaln", "beta", "expit", "logit", "xlogy", "xlog1py", "entr",
           "logsumexp", "softmax", "log_softmax", "ndtr", "log_ndtr", "erfcx", "rel_entr",
           "multigammaln", "poch", "factorial", "kl_div", "boxcox", "boxcox1p", "gammasgn",
           "i0", "i0e", "comb", "loggamma"]


def erf(x):
    """The error function ``2/sqrt(pi) * integral(exp(-t**2), 0, x)``."""
    return p.bind_special(Op.ERF, x)


def erfc(x):
    """The complementary error function ``1 - erf(x)``, without cancellation for large x."""
    return p.bind_special(Op.ERFC, x)


def gammaln(x):
    """``log|gamma(x)|`` (``inf`` at the poles 0, -1, -2, ...)."""
    return p.bind_special(Op.GAMMALN, x)


def digamma(x):
    """The digamma function ``d/dx log(gamma(x))``."""
    return p.bind_special(Op.DIGAMMA, x)


psi = digamma


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``. Its derivative with
    respect to ``a`` is a central difference (relative accuracy about 1e-10); with respect
    to ``x``, exact."""
    return p.bind_special(Op.GAMMAINC, a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return p.bind_special(Op.GAMMAINCC, a, x)


def _float(x):
    """``x`` as an array of the floating-point dtype SciPy computes it in."""
    x = anp.asarray(x)
    return x if x.dtype.kind == "f" else anp.astype(x, np.float64)


def _in_float64(fn):
    """``fn`` computed in float64 and rounded once to the input's float dtype (as SciPy's
    float32 loops compute): the steep tails would multiply a float32 argument's rounding."""
    def wide(x):
        x = _float(x)
        return anp.astype(fn(anp.astype(x, np.float64)), x.dtype)
    wide.__name__, wide.__doc__ = fn.__name__, fn.__doc__
    return wide


# B_2k / (2k)! of the polygamma asymptotic series, k = 1..8
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_SHIFT = 10


def _polygamma_positive(n: int, x):
    """``psi^(n)(x)`` for x > 0 and n >= 1: the recurrence up to ``x + 10``, then the
    asymptotic series (as a fused composition)."""
    sign = (-1) ** (n + 1)
    head = None
    for k in range(_SHIFT):
        term = anp.power(anp.add(x, k), -(n + 1))
        head = term if head is None else anp.add(head, term)
    z = anp.add(x, _SHIFT)
    tail = anp.add(anp.true_divide(math.factorial(n - 1), anp.power(z, n)),
                   anp.true_divide(math.factorial(n) / 2, anp.power(z, n + 1)))
    for k, b in enumerate(_BERNOULLI, start=1):
        coefficient = b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
        tail = anp.add(tail, anp.true_divide(coefficient, anp.power(z, 2 * k + n)))
    return anp.multiply(sign, anp.add(anp.multiply(math.factorial(n), head), tail))


def polygamma(n, x):
    """The ``n``-th derivative of the digamma function (``n`` a static integer >= 0;
    ``n == 1`` is also defined for negative ``x``, by reflection)."""
    if isinstance(n, Tracer):
        raise TypeError("polygamma: the order n must be a static integer")
    n = int(np.asarray(n))
    if n < 0:
        raise ValueError("polygamma: n must be non-negative")
    if n == 0:
        return digamma(x)
    x = _float(x)
    positive = _polygamma_positive(n, anp.where(anp.greater(x, 0), x, 1.0))
    if n != 1:
        return anp.where(anp.greater(x, 0), positive, np.nan)
    reflected = anp.subtract(
        anp.true_divide(math.pi ** 2, anp.square(anp.sin(anp.multiply(math.pi, x)))),
        _polygamma_positive(1, anp.where(anp.greater(x, 0), 1.0, anp.subtract(1.0, x))))
    return anp.where(anp.greater(x, 0), positive, reflected)


@_in_float64
def gamma(x):
    """The gamma function, ``sign * exp(gammaln(x))`` (``exp`` multiplies the logarithm's
    error by its size, hence float64 throughout): ``+-inf`` at +-0, NaN at the negative
    integers (as SciPy)."""
    negative_sign = anp.where(anp.equal(anp.remainder(anp.floor(x), 2), 0), 1.0, -1.0)
    sign = anp.where(anp.greater(x, 0), 1.0, negative_sign)
    value = anp.multiply(sign, anp.exp(gammaln(x)))
    value = anp.where(anp.equal(x, 0), anp.copysign(np.inf, x), value)
    pole = anp.logical_and(anp.less(x, 0), anp.equal(x, anp.floor(x)))
    return anp.where(pole, np.nan, value)


def betaln(a, b):
    """``log|beta(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``."""
    return anp.subtract(anp.add(gammaln(a), gammaln(b)), gammaln(anp.add(a, b)))


def beta(a, b):
    """The beta function ``gamma(a) gamma(b) / gamma(a + b)`` (positive arguments)."""
    return anp.exp(betaln(a, b))


def multigammaln(a, d: int):
    """The log of the multivariate gamma function of dimension ``d`` (static)."""
    a = _float(a)
    total = d * (d - 1) / 4 * math.log(math.pi)
    for j in range(d):
        total = anp.add(total, gammaln(anp.subtract(a, j / 2)))
    return total


def poch(z, m):
    """The Pochhammer symbol ``gamma(z + m) / gamma(z)``."""
    return anp.true_divide(gamma(anp.add(z, m)), gamma(z))


def factorial(n, exact: bool = False):
    """``n!`` as ``gamma(n + 1)`` (0 for negative n, as SciPy)."""
    if exact:
        raise NotImplementedError("factorial(exact=True) needs Python integers; use "
                                  "math.factorial outside jit")
    n = _float(n)
    return anp.where(anp.less(n, 0), 0.0, gamma(anp.add(n, 1)))


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    x = _float(x)
    return anp.true_divide(1, anp.add(1, anp.exp(anp.negative(x))))


def logit(p_):
    """The log-odds ``log(p / (1 - p))``."""
    p_ = _float(p_)
    return anp.log(anp.true_divide(p_, anp.subtract(1, p_)))


def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y = _float(x), _float(y)
    product = anp.multiply(x, anp.log(anp.where(anp.equal(x, 0), 1, y)))
    return anp.where(anp.equal(x, 0), anp.where(anp.isnan(y), np.nan, 0.0), product)


def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y = _float(x), _float(y)
    product = anp.multiply(x, anp.log1p(anp.where(anp.equal(x, 0), 0, y)))
    return anp.where(anp.equal(x, 0), anp.where(anp.isnan(y), np.nan, 0.0), product)


def entr(x):
    """``-x log(x)`` for x > 0, 0 at 0, ``-inf`` below."""
    x = _float(x)
    inside = anp.negative(xlogy(x, x))
    return anp.where(anp.less(x, 0), -np.inf, inside)


def rel_entr(x, y):
    """``x log(x / y)`` for positive x, y; 0 for x == 0 <= y; ``inf`` otherwise."""
    x, y = _float(x), _float(y)
    both = anp.logical_and(anp.greater(x, 0), anp.greater(y, 0))
    value = anp.multiply(x, anp.log(anp.true_divide(anp.where(both, x, 1),
                                                    anp.where(both, y, 1))))
    zero = anp.logical_and(anp.equal(x, 0), anp.greater_equal(y, 0))
    return anp.where(both, value, anp.where(zero, 0.0, np.inf))


def erfcx(x):
    """The scaled complementary error function ``exp(x**2) * erfc(x)`` (for x below about
    26; larger x overflow ``exp`` as the composition it is)."""
    x = _float(x)
    return anp.multiply(anp.exp(anp.square(x)), erfc(x))


@_in_float64
def ndtr(x):
    """The standard normal CDF, ``erfc(-x / sqrt(2)) / 2``."""
    return anp.multiply(0.5, erfc(anp.multiply(x, -1 / math.sqrt(2))))


@_in_float64
def log_ndtr(x):
    """``log(ndtr(x))``, accurate in both tails: ``log1p(-ndtr(-x))`` above 0, the
    asymptotic series below -20."""
    middle = anp.log(ndtr(anp.clip(x, -20.0, 0.0)))
    upper = anp.log1p(anp.negative(ndtr(anp.negative(anp.maximum(x, 0.0)))))
    z = anp.minimum(x, -20.0)
    inv2 = anp.true_divide(1, anp.square(z))
    series = anp.add(1, anp.multiply(inv2, anp.add(-1, anp.multiply(inv2, anp.add(
        3, anp.multiply(inv2, anp.add(-15, anp.multiply(inv2, 105))))))))
    lower = anp.subtract(anp.subtract(anp.multiply(-0.5, anp.square(z)),
                                      anp.log(anp.negative(z))),
                         anp.subtract(0.5 * math.log(2 * math.pi), anp.log(series)))
    return anp.where(anp.greater(x, 0), upper, anp.where(anp.less(x, -20), lower, middle))


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False):
    """``log(sum(b * exp(a)))`` over ``axis`` without overflow; ``return_sign`` gives
    ``(log|sum|, sign)`` for weights ``b`` that may make the sum negative."""
    from ..numpy import reductions

    if b is None and not return_sign:
        return reductions.logsumexp(a, axis=axis, keepdims=keepdims)
    a = _float(a)
    axes = tuple(range(a.ndim)) if axis is None else reductions._axes(axis, a.ndim)
    a_max = anp.max(a, axis=axes, keepdims=True)
    a_max = anp.where(anp.isfinite(a_max), a_max, 0)
    terms = anp.exp(anp.subtract(a, a_max))
    if b is not None:
        terms = anp.multiply(terms, b)
    total = anp.sum(terms, axis=axes, keepdims=True)
    sign = anp.sign(total)
    out = anp.add(anp.log(anp.absolute(total)), a_max)
    if not keepdims:
        out, sign = anp.squeeze(out, axis=axes), anp.squeeze(sign, axis=axes)
    if return_sign:
        return out, sign
    return anp.where(anp.less(sign, 0), np.nan, out)


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes: None), shifted by the maximum;
    a row-wise softmax fuses into one kernel."""
    x = _float(x)
    shifted = anp.subtract(x, anp.max(x, axis=axis, keepdims=True))
    e = anp.exp(shifted)
    return anp.true_divide(e, anp.sum(e, axis=axis, keepdims=True))


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis``."""
    x = _float(x)
    shifted = anp.subtract(x, anp.max(x, axis=axis, keepdims=True))
    return anp.subtract(shifted, anp.log(anp.sum(anp.exp(shifted), axis=axis, keepdims=True)))


def kl_div(x, y):
    """``x log(x / y) - x + y`` for positive x, y; ``y`` at x == 0 <= y; ``inf``
    elsewhere."""
    x, y = _float(x), _float(y)
    return anp.where(anp.logical_and(anp.greater(x, 0), anp.greater(y, 0)),
                     anp.add(anp.subtract(rel_entr(x, y), x), y),
                     anp.where(anp.logical_and(anp.equal(x, 0), anp.greater_equal(y, 0)), y,
                               np.inf))


def boxcox(x, lmbda):
    """The Box-Cox transform: ``(x**lmbda - 1) / lmbda``, ``log(x)`` at ``lmbda == 0``."""
    x, lmbda = _float(x), _float(lmbda)
    nonzero = anp.where(anp.equal(lmbda, 0), 1.0, lmbda)
    power = anp.true_divide(anp.expm1(anp.multiply(nonzero, anp.log(x))), nonzero)
    return anp.where(anp.equal(lmbda, 0), anp.log(x), power)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``, accurate for small x."""
    x, lmbda = _float(x), _float(lmbda)
    nonzero = anp.where(anp.equal(lmbda, 0), 1.0, lmbda)
    power = anp.true_divide(anp.expm1(anp.multiply(nonzero, anp.log1p(x))), nonzero)
    return anp.where(anp.equal(lmbda, 0), anp.log1p(x), power)


def gammasgn(x):
    """The sign of the gamma function (NaN at the negative integers; ``+-1`` at ``+-0``)."""
    x = _float(x)
    negative_sign = anp.where(anp.equal(anp.remainder(anp.floor(x), 2), 0), 1.0, -1.0)
    sign = anp.where(anp.greater(x, 0), 1.0, negative_sign)
    sign = anp.where(anp.equal(x, 0), anp.copysign(1.0, x), sign)
    pole = anp.logical_and(anp.less(x, 0), anp.equal(x, anp.floor(x)))
    return anp.where(anp.logical_or(pole, anp.isnan(x)), np.nan, sign)


def i0(x):
    """The modified Bessel function of the first kind of order 0 (``numpy.i0``)."""
    return anp.i0(_float(x))


def i0e(x):
    """``exp(-|x|) * i0(x)``, without overflow for large ``|x|``."""
    return elementwise.scaled_i0(_float(x))[0]


def comb(N, k, exact: bool = False, repetition: bool = False):
    """The binomial coefficient ``N choose k`` (floats, through ``gammaln``: relative
    accuracy about 1e-12; 0 outside ``0 <= k <= N``)."""
    if exact:
        raise NotImplementedError("comb(exact=True) needs Python integers; use math.comb "
                                  "outside jit")
    N, k = _float(N), _float(k)
    if repetition:
        N = anp.add(N, anp.subtract(k, 1))
    value = anp.exp(anp.subtract(gammaln(anp.add(N, 1)), anp.add(
        gammaln(anp.add(k, 1)), gammaln(anp.add(anp.subtract(N, k), 1)))))
    inside = anp.logical_and(anp.greater_equal(k, 0), anp.less_equal(k, N))
    return anp.where(anp.logical_and(inside, anp.greater_equal(N, 0)), value, 0.0)


def loggamma(x):
    """The logarithm of the gamma function of real ``x > 0`` (``gammaln`` there; NaN for
    x <= 0, where SciPy's principal branch is complex)."""
    x = _float(x)
    return anp.where(anp.greater(x, 0), gammaln(x), np.nan)

