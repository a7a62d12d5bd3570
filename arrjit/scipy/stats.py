"""``arrjit.scipy.stats``: densities and distribution functions of ``jax.scipy.stats``
(``norm``, ``multivariate_normal``, ``poisson``, ``bernoulli``), as compositions that fuse;
values follow ``scipy.stats``.

>>> import numpy as np, arrjit
>>> from arrjit.scipy import stats
>>> arrjit.jit(stats.norm.cdf)(np.array([0.0]))
array([0.5])
>>> float(arrjit.jit(lambda k: stats.poisson.pmf(k, 2.0))(np.array(1.0)))
0.2706705664732254
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .. import numpy as anp
from . import special

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _float(x):
    x = anp.asarray(x)
    return x if x.dtype.kind == "f" else anp.astype(x, np.float64)


def _standardized(x, loc, scale):
    return anp.true_divide(anp.subtract(_float(x), loc), scale)


def _norm_logpdf(x, loc=0, scale=1):
    """The normal log density ``-z**2 / 2 - log(scale) - log(sqrt(2 pi))``."""
    z = _standardized(x, loc, scale)
    return anp.subtract(anp.subtract(anp.multiply(-0.5, anp.square(z)), anp.log(scale)),
                        _LOG_SQRT_2PI)


def _norm_pdf(x, loc=0, scale=1):
    return anp.exp(_norm_logpdf(x, loc, scale))


def _norm_cdf(x, loc=0, scale=1):
    return special.ndtr(_standardized(x, loc, scale))


def _norm_logcdf(x, loc=0, scale=1):
    return special.log_ndtr(_standardized(x, loc, scale))


def _norm_sf(x, loc=0, scale=1):
    return special.ndtr(anp.negative(_standardized(x, loc, scale)))


def _norm_logsf(x, loc=0, scale=1):
    return special.log_ndtr(anp.negative(_standardized(x, loc, scale)))


norm = SimpleNamespace(logpdf=_norm_logpdf, pdf=_norm_pdf, cdf=_norm_cdf, logcdf=_norm_logcdf,
                       sf=_norm_sf, logsf=_norm_logsf)
"""The normal distribution: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``, ``sf``, ``logsf``
(``x, loc=0, scale=1``)."""


def _mvn_logpdf(x, mean, cov, allow_singular: bool = False):
    """The multivariate normal log density at ``x`` (``..., d``) through the Cholesky factor
    of ``cov`` (``d, d``; a 1-d ``cov`` is its diagonal, a scalar a multiple of the
    identity)."""
    if allow_singular:
        raise NotImplementedError("multivariate_normal with allow_singular=True is not "
                                  "supported")
    x, mean = _float(x), _float(mean)
    cov = anp.asarray(cov)
    d = x.shape[-1] if x.ndim else 1
    if x.ndim == 0:
        x = anp.reshape(x, (1,))
    if cov.ndim < 2:
        cov = anp.multiply(anp.eye(d), cov)
    factor = anp.linalg.cholesky(cov)
    centred = anp.subtract(x, mean)
    flat = anp.reshape(centred, (-1, d))
    whitened = anp.linalg.solve(factor, anp.transpose(flat))         # (d, n)
    mahalanobis = anp.sum(anp.square(whitened), axis=0)
    log_det = anp.sum(anp.log(anp.diagonal(factor)))
    value = anp.subtract(anp.multiply(-0.5, mahalanobis),
                         anp.add(log_det, d * _LOG_SQRT_2PI))
    return anp.reshape(value, centred.shape[:-1])


def _mvn_pdf(x, mean, cov, allow_singular: bool = False):
    return anp.exp(_mvn_logpdf(x, mean, cov, allow_singular))


multivariate_normal = SimpleNamespace(logpdf=_mvn_logpdf, pdf=_mvn_pdf)
"""The multivariate normal distribution: ``logpdf``, ``pdf`` (``x, mean, cov``)."""


def _poisson_logpmf(k, mu, loc=0):
    """``k log(mu) - mu - log(k!)`` for integer ``k - loc >= 0``, ``-inf`` elsewhere."""
    k = anp.subtract(_float(k), loc)
    mu = _float(mu)
    value = anp.subtract(anp.subtract(special.xlogy(k, mu), mu),
                         special.gammaln(anp.add(k, 1)))
    valid = anp.logical_and(anp.equal(k, anp.round(k)), anp.greater_equal(k, 0))
    return anp.where(valid, value, -np.inf)


def _poisson_pmf(k, mu, loc=0):
    return anp.exp(_poisson_logpmf(k, mu, loc))


def _poisson_cdf(k, mu, loc=0):
    """``P(K <= k) = gammaincc(floor(k) + 1, mu)``; 0 below the support."""
    k = anp.subtract(_float(k), loc)
    mu = _float(mu)
    value = special.gammaincc(anp.add(anp.floor(anp.maximum(k, 0)), 1), mu)
    return anp.where(anp.less(k, 0), 0.0, value)


poisson = SimpleNamespace(logpmf=_poisson_logpmf, pmf=_poisson_pmf, cdf=_poisson_cdf)
"""The Poisson distribution: ``logpmf``, ``pmf``, ``cdf`` (``k, mu, loc=0``)."""


def _bernoulli_logpmf(k, p, loc=0):
    """``log(p)`` at 1, ``log(1 - p)`` at 0, ``-inf`` elsewhere."""
    k = anp.subtract(_float(k), loc)
    p = _float(p)
    value = anp.add(special.xlogy(k, p), special.xlog1py(anp.subtract(1, k), anp.negative(p)))
    valid = anp.logical_or(anp.equal(k, 0), anp.equal(k, 1))
    return anp.where(valid, value, -np.inf)


def _bernoulli_pmf(k, p, loc=0):
    return anp.exp(_bernoulli_logpmf(k, p, loc))


def _bernoulli_cdf(k, p, loc=0):
    """0 below 0, ``1 - p`` on [0, 1), 1 from 1 on."""
    k = anp.subtract(_float(k), loc)
    p = _float(p)
    return anp.where(anp.less(k, 0), 0.0, anp.where(anp.less(k, 1), anp.subtract(1, p), 1.0))


bernoulli = SimpleNamespace(logpmf=_bernoulli_logpmf, pmf=_bernoulli_pmf, cdf=_bernoulli_cdf)
"""The Bernoulli distribution: ``logpmf``, ``pmf``, ``cdf`` (``k, p, loc=0``)."""


# -- further location-scale families -----------------------------------------------------------------
def _location_scale(logpdf_standard, cdf_standard=None, sf_standard=None):
    """A distribution from its standard form: ``logpdf(x, loc, scale) =
    logpdf_standard((x - loc) / scale) - log(scale)``, ``cdf`` likewise."""
    def logpdf(x, loc=0, scale=1):
        return anp.subtract(logpdf_standard(_standardized(x, loc, scale)), anp.log(scale))

    def pdf(x, loc=0, scale=1):
        return anp.exp(logpdf(x, loc, scale))

    functions = {"logpdf": logpdf, "pdf": pdf}
    if cdf_standard is not None:
        functions["cdf"] = lambda x, loc=0, scale=1: cdf_standard(_standardized(x, loc, scale))
        functions["logcdf"] = lambda x, loc=0, scale=1: anp.log(functions["cdf"](x, loc,
                                                                                   scale))
    if sf_standard is not None:
        functions["sf"] = lambda x, loc=0, scale=1: sf_standard(_standardized(x, loc, scale))
    return SimpleNamespace(**functions)


def _inside(z, low, high, value, outside):
    return anp.where(anp.logical_and(anp.greater_equal(z, low), anp.less_equal(z, high)),
                     value, outside)


uniform = _location_scale(
    lambda z: _inside(z, 0.0, 1.0, anp.zeros_like(z), -np.inf),
    lambda z: anp.clip(z, 0.0, 1.0), lambda z: anp.subtract(1.0, anp.clip(z, 0.0, 1.0)))
"""The uniform distribution on ``[loc, loc + scale]``."""

expon = _location_scale(
    lambda z: anp.where(anp.less(z, 0), -np.inf, anp.negative(z)),
    lambda z: anp.where(anp.less(z, 0), 0.0, anp.negative(anp.expm1(anp.negative(z)))),
    lambda z: anp.where(anp.less(z, 0), 1.0, anp.exp(anp.negative(z))))
"""The exponential distribution."""

laplace = _location_scale(
    lambda z: anp.subtract(anp.negative(anp.absolute(z)), np.log(2.0)),
    lambda z: anp.where(anp.less(z, 0), anp.multiply(0.5, anp.exp(z)),
                        anp.subtract(1.0, anp.multiply(0.5, anp.exp(anp.negative(z))))))
"""The Laplace (double exponential) distribution."""

logistic = _location_scale(
    lambda z: anp.subtract(anp.negative(z), anp.multiply(2.0, anp.logaddexp(0.0,
                                                                            anp.negative(z)))),
    special.expit, lambda z: special.expit(anp.negative(z)))
"""The logistic distribution."""

cauchy = _location_scale(
    lambda z: anp.negative(anp.add(np.log(np.pi), anp.log1p(anp.square(z)))),
    lambda z: anp.add(0.5, anp.multiply(1 / np.pi, anp.arctan(z))))
"""The Cauchy distribution."""


def _gamma_logpdf(x, a, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    value = anp.subtract(anp.subtract(special.xlogy(anp.subtract(a, 1), z), z),
                         anp.add(special.gammaln(a), anp.log(scale)))
    return anp.where(anp.less(z, 0), -np.inf, value)


def _gamma_cdf(x, a, loc=0, scale=1):
    return special.gammainc(a, anp.maximum(_standardized(x, loc, scale), 0.0))


gamma = SimpleNamespace(logpdf=_gamma_logpdf, pdf=lambda x, a, loc=0, scale=1: anp.exp(
    _gamma_logpdf(x, a, loc, scale)), cdf=_gamma_cdf)
"""The gamma distribution: ``logpdf``, ``pdf``, ``cdf`` (``x, a, loc=0, scale=1``)."""

chi2 = SimpleNamespace(
    logpdf=lambda x, df, loc=0, scale=1: _gamma_logpdf(x, anp.true_divide(df, 2.0), loc,
                                                       anp.multiply(scale, 2.0)),
    pdf=lambda x, df, loc=0, scale=1: anp.exp(_gamma_logpdf(
        x, anp.true_divide(df, 2.0), loc, anp.multiply(scale, 2.0))),
    cdf=lambda x, df, loc=0, scale=1: _gamma_cdf(x, anp.true_divide(df, 2.0), loc,
                                                 anp.multiply(scale, 2.0)))
"""The chi-squared distribution: ``logpdf``, ``pdf``, ``cdf`` (``x, df``)."""


def _t_logpdf(x, df, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    df = _float(df)
    half = anp.true_divide(anp.add(df, 1.0), 2.0)
    norm_const = anp.subtract(anp.subtract(special.gammaln(half), special.gammaln(
        anp.true_divide(df, 2.0))), anp.multiply(0.5, anp.log(anp.multiply(df, np.pi))))
    return anp.subtract(anp.subtract(norm_const, anp.multiply(half, anp.log1p(
        anp.true_divide(anp.square(z), df)))), anp.log(scale))


t = SimpleNamespace(logpdf=_t_logpdf, pdf=lambda x, df, loc=0, scale=1: anp.exp(
    _t_logpdf(x, df, loc, scale)))
"""Student's t distribution: ``logpdf``, ``pdf`` (``x, df, loc=0, scale=1``)."""


def _beta_logpdf(x, a, b, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    value = anp.subtract(anp.add(special.xlogy(anp.subtract(a, 1), z), special.xlog1py(
        anp.subtract(b, 1), anp.negative(z))), anp.add(special.betaln(a, b), anp.log(scale)))
    return anp.where(anp.logical_or(anp.less(z, 0), anp.greater(z, 1)), -np.inf, value)


beta = SimpleNamespace(logpdf=_beta_logpdf, pdf=lambda x, a, b, loc=0, scale=1: anp.exp(
    _beta_logpdf(x, a, b, loc, scale)))
"""The beta distribution: ``logpdf``, ``pdf`` (``x, a, b, loc=0, scale=1``)."""


def _geom_logpmf(k, p, loc=0):
    k = anp.subtract(_float(k), loc)
    p = _float(p)
    value = anp.add(special.xlog1py(anp.subtract(k, 1), anp.negative(p)), anp.log(p))
    valid = anp.logical_and(anp.equal(k, anp.floor(k)), anp.greater_equal(k, 1))
    return anp.where(valid, value, -np.inf)


def _geom_cdf(k, p, loc=0):
    k = anp.floor(anp.subtract(_float(k), loc))
    p = _float(p)
    value = anp.negative(anp.expm1(anp.multiply(k, anp.log1p(anp.negative(p)))))
    return anp.where(anp.less(k, 1), 0.0, value)


geom = SimpleNamespace(logpmf=_geom_logpmf, pmf=lambda k, p, loc=0: anp.exp(
    _geom_logpmf(k, p, loc)), cdf=_geom_cdf)
"""The geometric distribution (trials until the first success): ``logpmf``, ``pmf``,
``cdf`` (``k, p, loc=0``)."""


def _binom_logpmf(k, n, p, loc=0):
    k = anp.subtract(_float(k), loc)
    n, p = _float(n), _float(p)
    combinations = anp.subtract(special.gammaln(anp.add(n, 1)), anp.add(
        special.gammaln(anp.add(k, 1)), special.gammaln(anp.add(anp.subtract(n, k), 1))))
    value = anp.add(combinations, anp.add(special.xlogy(k, p), special.xlog1py(
        anp.subtract(n, k), anp.negative(p))))
    valid = anp.logical_and(anp.equal(k, anp.floor(k)), anp.logical_and(
        anp.greater_equal(k, 0), anp.less_equal(k, n)))
    return anp.where(valid, value, -np.inf)


binom = SimpleNamespace(logpmf=_binom_logpmf, pmf=lambda k, n, p, loc=0: anp.exp(
    _binom_logpmf(k, n, p, loc)))
"""The binomial distribution: ``logpmf``, ``pmf`` (``k, n, p, loc=0``)."""
