"""``arrjit.scipy``: special functions against SciPy (special values, float32, compiled and
eager), the distributions of ``stats`` against ``scipy.stats``, derivatives against JAX's, and
that the compositions fuse into one kernel."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.scipy import special, stats

sp = pytest.importorskip("scipy.special")
ss = pytest.importorskip("scipy.stats")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp, jsp = jax.numpy, pytest.importorskip("jax.scipy.special")

RNG = np.random.default_rng(0)
X = np.concatenate([RNG.standard_normal(20) * 5, [
    0.0, -0.0, 1.4616321449683622, 1e-300, -1.0, -2.5, 0.5, 30.0, 1e5, -1e17, np.inf, -np.inf,
    np.nan]])
POSITIVE = np.abs(X[np.isfinite(X)]) + 1e-3


def check(got, want, rtol, atol=0.0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


UNARY = {"erf": 1e-14, "erfc": 1e-14, "gammaln": 1e-13, "digamma": 1e-12, "expit": 1e-15,
         "entr": 1e-15, "ndtr": 1e-14, "log_ndtr": 1e-13, "gamma": 1e-11}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_functions_match_scipy(name):
    fn, want = getattr(special, name), getattr(sp, name)
    with np.errstate(all="ignore"):
        check(arrjit.jit(fn)(X), want(X), UNARY[name], atol=1e-15)
        check(fn(X), want(X), UNARY[name], atol=1e-15)
        single = X.astype(np.float32)
        check(arrjit.jit(fn)(single), want(single), 2e-6, atol=1e-30)
        check(arrjit.jit(fn)(np.arange(-3, 4)), want(np.arange(-3, 4)), UNARY[name], atol=1e-15)


def test_incomplete_gamma_matches_scipy_over_its_regions():
    a = np.array([0.1, 0.5, 1.0, 2.5, 10.0, 50.0, 200.0, 0.0, 1.0, 3.0, -1.0, 1.0, 0.0])
    x = np.array([0.05, 1.0, 0.3, 7.0, 9.0, 60.0, 180.0, 1.0, 0.0, 3.0, 1.0, -1.0, 0.0])
    for name in ("gammainc", "gammaincc"):
        with np.errstate(all="ignore"):
            want = getattr(sp, name)(a, x)
        check(arrjit.jit(getattr(special, name))(a, x), want, 1e-11)
        check(getattr(special, name)(a, x), want, 1e-11)
    check(arrjit.jit(special.gammainc)(a[:7], np.inf), sp.gammainc(a[:7], np.inf), 0)


def test_compositions_match_scipy():
    p = RNG.random(10)
    m = RNG.standard_normal((3, 4))
    b = np.array([1.0, 2.0, -1.0, 0.5])
    x0, y0 = np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, np.nan, 0.0, 3.0])
    cases = [
        (special.logit, sp.logit, (p,)),
        (special.xlogy, sp.xlogy, (x0, y0)),
        (special.xlog1py, sp.xlog1py, (np.array([0.0, 1.0, 2.0]), np.array([-1.0, 0.5, 3.0]))),
        (lambda v: special.softmax(v, axis=1), lambda v: sp.softmax(v, axis=1), (m,)),
        (lambda v: special.log_softmax(v, axis=0), lambda v: sp.log_softmax(v, axis=0), (m,)),
        (lambda v: special.logsumexp(v, axis=1, b=b), lambda v: sp.logsumexp(v, axis=1, b=b),
         (m,)),
        (special.betaln, sp.betaln, (POSITIVE[:5], POSITIVE[5:10])),
        (special.rel_entr, sp.rel_entr, (np.array([0.0, 1.0, 2.0, 1.0]),
                                          np.array([1.0, 0.5, 0.0, 3.0]))),
        (lambda v: special.multigammaln(v, 3), lambda v: sp.multigammaln(v, 3),
         (POSITIVE + 2,)),
        (special.erfcx, sp.erfcx, (np.array([-2.0, 0.0, 1.5, 5.0]),)),
        (special.poch, sp.poch, (np.array([2.0, 0.5]), np.array([3.0, 2.5]))),
        (special.factorial, sp.factorial, (np.array([0.0, 3.0, 4.5, -1.0]),)),
    ]
    for ours, theirs, args in cases:
        with np.errstate(all="ignore"):
            check(arrjit.jit(ours)(*args), theirs(*args), 1e-11)
    for n in (1, 2, 3):
        check(arrjit.jit(lambda v: special.polygamma(n, v))(POSITIVE), sp.polygamma(n, POSITIVE),
              1e-11)
    negative = -POSITIVE[:5] - 0.3
    check(arrjit.jit(lambda v: special.polygamma(1, v))(negative), sp.polygamma(1, negative),
          1e-9)
    lse, sign = arrjit.jit(lambda v: special.logsumexp(v, axis=1, b=-1.0, return_sign=True))(m)
    want_lse, want_sign = sp.logsumexp(m, axis=1, b=-1.0, return_sign=True)
    check(lse, want_lse, 1e-13)
    check(sign, want_sign, 0)


def test_distributions_match_scipy_stats():
    with np.errstate(all="ignore"):
        for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
            check(arrjit.jit(lambda v: getattr(stats.norm, fn)(v, 1.0, 2.0))(X),
                  getattr(ss.norm, fn)(X, 1.0, 2.0), 1e-11)
        k = np.array([0.0, 1.0, 2.0, 5.0, 10.0, -1.0, 2.5, 30.0])
        for fn in ("logpmf", "pmf", "cdf"):
            check(arrjit.jit(lambda v: getattr(stats.poisson, fn)(v, 3.5))(k),
                  getattr(ss.poisson, fn)(k, 3.5), 1e-11)
            bits = np.array([0.0, 1.0, 2.0, -1.0, 0.5])
            check(arrjit.jit(lambda v: getattr(stats.bernoulli, fn)(v, 0.3))(bits),
                  getattr(ss.bernoulli, fn)(bits, 0.3), 1e-12)
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])
    x, mean = RNG.standard_normal((5, 3)), np.array([0.1, -0.2, 0.3])
    check(arrjit.jit(stats.multivariate_normal.logpdf)(x, mean, cov),
          ss.multivariate_normal.logpdf(x, mean, cov), 1e-12)
    check(arrjit.jit(stats.multivariate_normal.pdf)(x[0], mean, cov),
          np.asarray(ss.multivariate_normal.pdf(x[0], mean, cov)), 1e-12)
    check(arrjit.jit(lambda v: stats.multivariate_normal.logpdf(v, mean, 2.0))(x),
          ss.multivariate_normal.logpdf(x, mean, 2.0), 1e-12)


@pytest.mark.parametrize("name", ["erf", "erfc", "gammaln", "digamma", "expit", "logit",
                                  "ndtr", "log_ndtr", "entr"])
def test_derivatives_match_jax(name):
    v = POSITIVE[:8] * 0.3 + 0.05 if name != "logit" else RNG.random(8)
    got = arrjit.grad(lambda v: anp.sum(getattr(special, name)(v)))(v)
    want = jax.grad(lambda v: jnp.sum(getattr(jsp, name)(v)))(v)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    np.testing.assert_allclose(arrjit.jit(arrjit.grad(lambda v: anp.sum(
        getattr(special, name)(v))))(v), want, rtol=1e-9)


def test_derivatives_of_incomplete_gamma_and_distributions_match_jax():
    a, x = np.array([0.1, 0.5, 1.0, 2.5, 10.0]), np.array([0.05, 1.0, 0.3, 7.0, 9.0])
    for name in ("gammainc", "gammaincc"):
        got = arrjit.grad(lambda a, x: anp.sum(getattr(special, name)(a, x)), (0, 1))(a, x)
        want = jax.grad(lambda a, x: jnp.sum(getattr(jsp, name)(a, x)), (0, 1))(a, x)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-7)    # central difference in a
        np.testing.assert_allclose(got[1], want[1], rtol=1e-11)
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    pts = RNG.standard_normal((4, 2))
    got = arrjit.grad(lambda m, c: stats.multivariate_normal.logpdf(pts, m, c).sum(),
                      (0, 1))(np.zeros(2), cov)
    want = jax.grad(lambda m, c: jax.scipy.stats.multivariate_normal.logpdf(pts, m, c).sum(),
                    (0, 1))(np.zeros(2), cov)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    k = np.array([0.0, 1.0, 3.0, 7.0])
    got = arrjit.grad(lambda mu: stats.poisson.cdf(k, mu).sum())(3.5)
    want = jax.grad(lambda mu: jax.scipy.stats.poisson.cdf(k, mu).sum())(3.5)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    got = arrjit.grad(lambda s: stats.norm.logpdf(pts, 0.5, s).sum())(1.5)
    want = jax.grad(lambda s: jax.scipy.stats.norm.logpdf(pts, 0.5, s).sum())(1.5)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_special_functions_fuse_with_their_neighbours():
    f = arrjit.jit(lambda x: anp.sum(special.erf(x * 2.0) + special.gammaln(anp.abs(x) + 1)
                                     + stats.norm.logpdf(x) + special.digamma(x + 3.0)))
    assert len(f.lower(X[:20]).kernels) == 1
    f = arrjit.jit(lambda x: special.softmax(x, axis=1))
    assert len(f.lower(RNG.standard_normal((3, 4))).kernels) == 1


def test_complex_operands_are_refused():
    with pytest.raises(arrjit.errors.UnsupportedDtypeError, match="complex"):
        arrjit.jit(special.erf)(np.ones(2, np.complex128))


def test_more_special_functions_match_scipy():
    x = np.array([0.0, -0.0, 0.5, 1.0, 2.5, 10.0, 800.0, -1.5, -2.0, 1e5, np.nan])
    y = np.abs(np.linspace(-1.0, 3.0, x.size))
    with np.errstate(all="ignore"):
        for name, args in [("gammasgn", (x,)), ("i0e", (x,)), ("i0", (x[:9],)),
                           ("kl_div", (np.abs(x[:9]), y[:9])),
                           ("boxcox", (np.abs(x[:9]) + 0.1, y[:9] - 0.5)),
                           ("boxcox1p", (np.abs(x[:9]), y[:9] - 0.5)),
                           ("loggamma", (np.abs(x[:9]) + 0.1,))]:
            check(arrjit.jit(getattr(special, name))(*args), getattr(sp, name)(*args), 1e-12)
    n, k = np.array([0.0, 5.0, 10.0, 30.0, 3.0]), np.array([0.0, 2.0, 3.0, 12.0, 5.0])
    check(arrjit.jit(special.comb)(n, k), sp.comb(n, k), 1e-11)


@pytest.mark.parametrize("name,functions,shape", [
    ("uniform", ("logpdf", "pdf", "cdf", "sf"), ()), ("expon", ("logpdf", "pdf", "cdf", "sf"), ()),
    ("laplace", ("logpdf", "pdf", "cdf"), ()), ("logistic", ("logpdf", "pdf", "cdf", "sf"), ()),
    ("cauchy", ("logpdf", "pdf", "cdf"), ()), ("gamma", ("logpdf", "pdf", "cdf"), (2.5,)),
    ("chi2", ("logpdf", "pdf", "cdf"), (3.0,)), ("t", ("logpdf", "pdf"), (4.0,)),
    ("beta", ("logpdf", "pdf"), (2.0, 3.5))])
def test_continuous_distributions_match_scipy_stats(name, functions, shape):
    x = np.array([-2.0, -0.5, 0.0, 0.3, 0.7, 1.0, 1.5, 4.0])
    with np.errstate(all="ignore"):
        for fn in functions:
            got = arrjit.jit(lambda v: getattr(getattr(stats, name), fn)(v, *shape, 0.2, 1.3))(x)
            check(got, getattr(getattr(ss, name), fn)(x, *shape, 0.2, 1.3), 1e-12)


def test_discrete_distributions_match_scipy_stats():
    k = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 2.5, -1.0])
    with np.errstate(all="ignore"):
        for fn in ("logpmf", "pmf", "cdf"):
            check(arrjit.jit(lambda v: getattr(stats.geom, fn)(v, 0.3))(k),
                  getattr(ss.geom, fn)(k, 0.3), 1e-12)
        for fn in ("logpmf", "pmf"):
            check(arrjit.jit(lambda v: getattr(stats.binom, fn)(v, 6, 0.3))(k),
                  getattr(ss.binom, fn)(k, 6, 0.3), 1e-12)
