"""The special functions (inlined device functions of ``core.special``) and the dense linear
algebra (LAPACK on host copies: library steps) on the CUDA backend, against the CPU's."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.scipy import special, stats

pytestmark = pytest.mark.cuda


def test_special_functions_on_cuda_match_the_cpu():
    x = np.array([0.1, 0.5, 1.4, 3.0, 7.5, -2.5, 0.0, np.inf])
    a = np.array([0.5, 1.0, 2.0, 3.0, 10.0, 1.0, 1.0, 2.0])

    def f(x, a):
        return (special.erf(x), special.erfc(x), special.gammaln(x), special.digamma(x),
                special.gammainc(a, anp.abs(x)), special.gammaincc(a, anp.abs(x)),
                special.digamma(x.astype(np.float32)), stats.norm.logpdf(x))

    with np.errstate(all="ignore"):
        got = arrjit.device_get(arrjit.jit(f, device="cuda")(x, a))
        want = arrjit.jit(f)(x, a)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12 if g.dtype == np.float64 else 1e-6,
                                   equal_nan=True)


def test_linear_algebra_on_cuda_matches_the_cpu():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3))

    def f(a, b):
        w, v = anp.linalg.eigh(a + anp.swapaxes(a, -1, -2))
        return (anp.linalg.solve(a, b[..., None]), w, anp.abs(v), anp.linalg.svd(a)[1],
                anp.linalg.det(a), anp.linalg.inv(a) * 2.0, anp.linalg.norm(a, axis=(1, 2)))

    got = arrjit.device_get(arrjit.jit(f, device="cuda")(a, b))
    for g, w in zip(got, arrjit.jit(f)(a, b)):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    grad = arrjit.jit(arrjit.grad(lambda a: anp.linalg.slogdet(a)[1].sum()), device="cuda")
    np.testing.assert_allclose(arrjit.device_get(grad(a)),
                               np.linalg.inv(a).transpose(0, 2, 1), rtol=1e-10)
