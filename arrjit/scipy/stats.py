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
