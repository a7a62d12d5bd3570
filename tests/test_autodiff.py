"""Automatic differentiation: every rule against central finite differences (float64) and
against JAX; composition with jit, vmap and itself; control flow; user rules; errors; real
programs; and that the backward pass fuses (kernel counts)."""
import math

import numpy as np
import pytest

import arrjit
import arrjit.core.tree
import arrjit.numpy as anp
from arrjit import lax
from arrjit.autodiff.elementwise import PARTIALS, ZERO_DERIVATIVE
from arrjit.autodiff.rules import JVP_RULES, NON_DIFFERENTIABLE, VJP_RULES
from arrjit.core.ir import Op
from test_namespace import CASES as NAMESPACE_CASES

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(7)


def numerical_grad(f, x, eps=1e-6):
    """Central differences of a scalar function of one float64 array."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def check_gradient(f, x, rtol=1e-6, atol=1e-7, jit=False):
    """grad (eager, or under jit) and jvp of ``f`` match central differences at ``x``."""
    expected = numerical_grad(f, x)
    grad = arrjit.jit(arrjit.grad(f)) if jit else arrjit.grad(f)
    np.testing.assert_allclose(grad(x), expected, rtol=rtol, atol=atol)
    direction = RNG.standard_normal(np.shape(x))
    _, tangent = arrjit.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(tangent, np.sum(expected * direction), rtol=rtol, atol=atol)


# -- coverage: every op has exactly one kind of rule ------------------------------------------
def test_every_primitive_has_a_derivative_rule():
    kinds = [set(PARTIALS), set(ZERO_DERIVATIVE), set(NON_DIFFERENTIABLE), set(JVP_RULES),
             {Op.WHILE}]
    assert set(JVP_RULES) == set(VJP_RULES)
    for a in range(len(kinds)):
        for b in range(a + 1, len(kinds)):
            assert not kinds[a] & kinds[b], kinds[a] & kinds[b]
    assert set().union(*kinds) == set(Op)


# -- elementwise rules: one row per differentiable primitive ---------------------------------
POSITIVE = np.array([0.3, 0.7, 1.3, 2.2])
INSIDE_ONE = np.array([-0.7, -0.2, 0.3, 0.8])
ANY = np.array([-1.7, -0.4, 0.6, 1.9])
ABOVE_ONE = np.array([1.2, 1.7, 2.5, 3.9])

UNARY_CASES = [
    ("negative", ANY), ("absolute", ANY), ("exp", ANY), ("log", POSITIVE), ("log1p", POSITIVE),
    ("log2", POSITIVE), ("log10", POSITIVE), ("expm1", ANY), ("sqrt", POSITIVE),
    ("cbrt", ANY), ("square", ANY), ("sin", ANY), ("cos", ANY), ("tan", INSIDE_ONE),
    ("tanh", ANY), ("sinh", ANY), ("cosh", ANY), ("arcsin", INSIDE_ONE),
    ("arccos", INSIDE_ONE), ("arctan", ANY), ("arcsinh", ANY), ("arccosh", ABOVE_ONE),
    ("arctanh", INSIDE_ONE), ("erf", ANY), ("erfc", ANY), ("gammaln", POSITIVE),
    ("digamma", POSITIVE),
]
BINARY_CASES = [
    ("add", ANY, POSITIVE), ("subtract", ANY, POSITIVE), ("multiply", ANY, POSITIVE),
    ("true_divide", ANY, POSITIVE), ("remainder", np.array([3.65, 5.15, 7.45, 11.75]), POSITIVE),
    ("power", POSITIVE, ANY), ("maximum", ANY, INSIDE_ONE), ("minimum", ANY, INSIDE_ONE),
    ("arctan2", ANY, POSITIVE), ("hypot", ANY, POSITIVE), ("logaddexp", ANY, POSITIVE),
    ("copysign", ANY, INSIDE_ONE), ("nextafter", ANY, POSITIVE),
    ("gammainc", POSITIVE, POSITIVE), ("gammaincc", POSITIVE, POSITIVE),
    ("fmod", ANY, np.array([0.7, 0.9, 1.1, 1.3])), ("ldexp", ANY, np.array([1, -2, 3, 0])),
]
# the special functions are arrjit.scipy.special's (jax.scipy.special's); the derivative of
# gammainc with respect to ``a`` is a central difference, so it matches JAX's to about 1e-8
SPECIAL = {"erf", "erfc", "gammaln", "digamma", "gammainc", "gammaincc"}
JAX_RTOL = {"gammainc": 1e-8, "gammaincc": 1e-8}


def _functions(name):
    """(arrjit's function, JAX's) of that name."""
    if name in SPECIAL:
        import arrjit.scipy.special
        import jax.scipy.special
        return getattr(arrjit.scipy.special, name), getattr(jax.scipy.special, name)
    return getattr(anp, name), getattr(jnp, {"true_divide": "divide"}.get(name, name))


def test_the_cases_cover_every_elementwise_rule():
    names = {n for n, *_ in UNARY_CASES + BINARY_CASES}
    assert names == {op.value for op in PARTIALS}


@pytest.mark.parametrize("name,x", UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_unary_rules_match_finite_differences_and_jax(name, x):
    fn, jfn = _functions(name)
    weights = np.arange(1.0, 5.0)
    check_gradient(lambda v: anp.sum(fn(v) * weights), x)
    expected = jax.grad(lambda v: jnp.sum(jfn(v) * weights))(x)
    np.testing.assert_allclose(arrjit.grad(lambda v: anp.sum(fn(v) * weights))(x), expected,
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,x,y", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary_rules_match_finite_differences(name, x, y):
    fn, jfn = _functions(name)
    check_gradient(lambda v: anp.sum(fn(v, y) * np.arange(1.0, 5.0)), x)
    if name != "nextafter" and y.dtype.kind == "f":   # nextafter: a step function of y
        check_gradient(lambda v: anp.sum(fn(x, v) * np.arange(1.0, 5.0)), y)
    if y.dtype.kind != "f":     # an integer operand (ldexp's exponent) has no derivative
        np.testing.assert_allclose(arrjit.grad(lambda a: anp.sum(fn(a, y)))(x),
                                   jax.grad(lambda a: jnp.sum(jfn(a, y)))(x), rtol=1e-12)
        return
    gx, gy = arrjit.grad(lambda a, b: anp.sum(fn(a, b)), argnums=(0, 1))(x, y)
    if name not in ("nextafter",):
        jx, jy = jax.grad(lambda a, b: jnp.sum(jfn(a, b)), argnums=(0, 1))(x, y)
        np.testing.assert_allclose(gx, jx, rtol=JAX_RTOL.get(name, 1e-12), atol=1e-14)
        np.testing.assert_allclose(gy, jy, rtol=1e-12, atol=1e-14)


def test_conventions_at_ties_and_kinks_follow_jax():
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(arrjit.grad(lambda v: anp.sum(anp.abs(v)))(x), [-1, 1, 1])
    np.testing.assert_array_equal(
        arrjit.grad(lambda v: anp.sum(anp.maximum(v, 0.0)))(x), [0, 0.5, 1])
    np.testing.assert_array_equal(arrjit.grad(lambda v: anp.max(v))(np.array([3.0, 3.0, 1.0])),
                                  [0.5, 0.5, 0])
    for fn in (anp.floor, anp.sign, anp.rint):
        np.testing.assert_array_equal(arrjit.grad(lambda v: anp.sum(fn(v) * v))(x),
                                      np.asarray(fn(x)))
    assert float(arrjit.grad(lambda v: anp.sum(v ** 0.0))(np.array([0.0]))[0]) == 0.0
    # a cast's cotangent comes back in the argument's dtype
    g = arrjit.grad(lambda v: anp.sum(anp.sin(anp.astype(v, anp.float32))))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.cos(x.astype(np.float32)), rtol=1e-6)


# -- structural rules ---------------------------------------------------------------------------
M = RNG.standard_normal((3, 4))
STRUCTURAL = {
    "broadcast": lambda v: anp.sum((v[:, None, :] + np.ones((3, 2, 4))) ** 2),
    "transpose": lambda v: anp.sum(v.T * np.arange(12.0).reshape(4, 3)),
    "reshape": lambda v: anp.sum(anp.reshape(v, (6, 2)) ** 3),
    "slice": lambda v: anp.sum(v[1:, ::-2] ** 2) + anp.sum(v[:, 1:] * v[:, :-1]),
    "roll": lambda v: anp.sum(anp.roll(v, 1, axis=1) * v),
    "sum": lambda v: anp.sum(anp.sum(v, axis=0) ** 2),
    "prod": lambda v: anp.sum(anp.prod(v, axis=1)),
    "max": lambda v: anp.sum(anp.max(v, axis=1) ** 2) + anp.min(v),
    "matmul": lambda v: anp.sum((v @ M.T) ** 2) + anp.sum(v[0] @ M.T) + anp.sum(M[0] @ v.T),
    "matmul_batched": lambda v: anp.sum(anp.matmul(np.ones((2, 1, 3, 3)), v) ** 2),
    "einsum": lambda v: anp.sum(anp.einsum("ij,kj->ik", v, M) ** 2) + anp.einsum("ij->", v),
    "concatenate": lambda v: anp.sum(anp.concatenate([v, v ** 2], axis=1) ** 2),
    "sort": lambda v: anp.sum(anp.sort(v, axis=1) * np.arange(4.0)),
    "cumsum": lambda v: anp.sum(anp.cumsum(v, axis=1) ** 2),
    "cumprod": lambda v: anp.sum(anp.cumprod(v, axis=1)),
    "gather": lambda v: anp.sum(v[np.array([0, 2, 2])] ** 2) + anp.sum(anp.take(v, [1, 1], 1)),
    "select": lambda v: anp.sum(anp.where(v > 0, v ** 2, -v)),
    "complex": lambda v: anp.sum(anp.abs(v * 1j + v ** 2) ** 2) + anp.sum(anp.real(
        anp.conjugate(v * (1 + 2j)))) + anp.sum(anp.imag(v * (3 - 1j))),
}


@pytest.mark.parametrize("name", sorted(STRUCTURAL))
def test_structural_rules_match_finite_differences(name):
    f = STRUCTURAL[name]
    x = RNG.standard_normal((3, 4)) if name != "matmul_batched" else RNG.standard_normal((3, 2))
    check_gradient(f, x)


def test_product_and_cumulative_product_rules_are_exact_at_zeros():
    x = np.array([[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 5.0, 1.0]])
    check_gradient(lambda v: anp.sum(anp.prod(v, axis=1)), x)
    check_gradient(lambda v: anp.sum(anp.cumprod(v, axis=1) * np.arange(4.0)), x)
    np.testing.assert_array_equal(arrjit.grad(lambda v: anp.prod(v))(np.array([2.0, 0.0, 3.0])),
                                  [0.0, 6.0, 0.0])


def test_scatter_rules():
    x = RNG.standard_normal(5)
    u = RNG.standard_normal(2)
    idx = np.array([1, 3])

    def f(v, w, mode):
        return anp.sum(getattr(v.at[idx], mode)(w) ** 2)

    for mode in ("set", "add", "multiply", "max", "min"):
        gx, gu = arrjit.jit(arrjit.grad(f, argnums=(0, 1)), static_argnames=("mode",))(
            x, u, mode=mode)
        np.testing.assert_allclose(gx, numerical_grad(lambda v: arrjit.jit(
            f, static_argnames=("mode",))(v, u, mode=mode), x), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gu, numerical_grad(lambda w: arrjit.jit(
            f, static_argnames=("mode",))(x, w, mode=mode), u), rtol=1e-6, atol=1e-7)


# -- the namespace table: every function of arrjit.numpy, differentiated ----------------------
# cases that jax.numpy spells differently (checked against finite differences only)
JAX_SPELLS_DIFFERENTLY = {"average", "flatten", "from_dlpack", "isin", "logsumexp",
                          "permute_dims", "repeat",
                          # jax.numpy refuses lists, these methods or edge orders, keeps
                          # polydiv's leading zeros, and has no derivative of nextafter
                          "compress", "delete", "gradient", "insert", "percentile",
                          "polyint", "put", "quantile", "polydiv", "spacing"}


def _weighted_sum(ns, case):
    """A scalar from every floating-point output of a namespace case, each weighted."""
    def scalar(x, y):
        outs = (jax.tree_util.tree_leaves(case(ns, x, y)) if ns is jnp
                else arrjit.core.tree.flatten(case(ns, x, y))[0])
        total = 0.0
        for k, out in enumerate(outs):
            out = ns.asarray(out)
            if out.dtype.kind in "fc":
                w = np.cos(np.arange(int(np.prod(out.shape))) + k).reshape(out.shape)
                total = total + ns.sum(ns.real(out) * w)
        return total
    return scalar


@pytest.mark.parametrize("name", sorted(NAMESPACE_CASES))
def test_every_namespace_function_differentiates(name):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.2, 0.9, (3, 4)) * rng.choice([-1, 1], (3, 4))
    y = rng.uniform(0.2, 0.9, (3, 4))
    f = _weighted_sum(anp, NAMESPACE_CASES[name])
    gx, gy = arrjit.grad(f, argnums=(0, 1))(x, y)
    value = arrjit.jit(f) if name == "at_updates" else f   # x.at needs a traced array
    np.testing.assert_allclose(gx, numerical_grad(lambda v: value(v, y), x), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(gy, numerical_grad(lambda v: value(x, v), y), rtol=1e-6,
                               atol=1e-6)
    if name not in JAX_SPELLS_DIFFERENTLY:
        jx, jy = jax.grad(_weighted_sum(jnp, NAMESPACE_CASES[name]), argnums=(0, 1))(x, y)
        np.testing.assert_allclose(gx, jx, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gy, jy, rtol=1e-10, atol=1e-12)


# -- composition ---------------------------------------------------------------------------------
def test_grad_composes_with_jit_in_either_order_and_with_itself():
    f = lambda x: anp.sum(anp.tanh(x) * anp.exp(-x * x))  # noqa: E731
    x = RNG.standard_normal(6)
    expected = numerical_grad(f, x)
    np.testing.assert_allclose(arrjit.jit(arrjit.grad(f))(x), expected, rtol=1e-6)
    np.testing.assert_allclose(arrjit.grad(arrjit.jit(f))(x), expected, rtol=1e-6)
    g = arrjit.jit(arrjit.grad(f))
    g(x)
    g(x + 1)
    assert g.cache_info().traces == 1 and g.cache_info().hits == 1
    # second order of elementwise and reduction primitives
    d2 = arrjit.grad(arrjit.grad(lambda v: anp.sin(v) * v ** 3))(0.7)
    assert math.isclose(float(d2), -math.sin(0.7) * 0.7 ** 3 + 6 * math.cos(0.7) * 0.7 ** 2
                        + 6 * 0.7 * math.sin(0.7), rel_tol=1e-12)
    hess_diag = arrjit.vmap(arrjit.grad(arrjit.grad(lambda v: anp.log(anp.cosh(v)))))(x)
    np.testing.assert_allclose(hess_diag, 1 - np.tanh(x) ** 2, rtol=1e-12)
    lse = lambda v: anp.log(anp.sum(anp.exp(v)))  # noqa: E731
    hvp = arrjit.jit(arrjit.grad(lambda v: anp.sum(arrjit.grad(lse)(v) * np.arange(6.0))))(x)
    jhvp = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: jnp.log(jnp.sum(jnp.exp(u))))(v)
                                      * jnp.arange(6.0)))(x)
    np.testing.assert_allclose(hvp, jhvp, rtol=1e-10, atol=1e-14)


def test_pytrees_argnums_has_aux_and_value_and_grad():
    params = {"w": RNG.standard_normal((3, 2)), "b": np.zeros(2)}
    x = RNG.standard_normal((4, 3))

    def loss(p, x):
        out = x @ p["w"] + p["b"]
        return anp.mean(out ** 2), {"out": out}

    (value, aux), g = arrjit.value_and_grad(loss, has_aux=True)(params, x)
    out = x @ params["w"] + params["b"]
    assert math.isclose(float(value), float(np.mean(out ** 2)), rel_tol=1e-14)
    np.testing.assert_allclose(aux["out"], out)
    np.testing.assert_allclose(g["w"], x.T @ (2 * out / out.size), rtol=1e-12)
    np.testing.assert_allclose(g["b"], np.sum(2 * out / out.size, axis=0), rtol=1e-12)
    gw, gx = arrjit.grad(lambda p, x: loss(p, x)[0], argnums=(0, 1))(params, x)
    np.testing.assert_allclose(gx, (2 * out / out.size) @ params["w"].T, rtol=1e-12)
    g_jit, aux_jit = arrjit.jit(arrjit.grad(loss, has_aux=True))(params, x)
    np.testing.assert_allclose(g_jit["w"], g["w"], rtol=1e-12)
    y, pull = arrjit.vjp(lambda a, b: (a * b, a + b), np.ones(2), np.full(2, 3.0))
    ga, gb = pull((np.ones(2), np.full(2, 2.0)))
    np.testing.assert_array_equal(ga, [5.0, 5.0])
    np.testing.assert_array_equal(gb, [3.0, 3.0])
    _, gi = arrjit.vjp(lambda v, n: v * n, np.ones(2), np.arange(2))[1](np.ones(2))
    assert gi.dtype == arrjit.float0 and gi.shape == (2,)


def test_per_example_gradients_of_an_mlp_with_vmap_of_grad():
    params = {"w1": RNG.standard_normal((3, 5)) * 0.5, "b1": np.zeros(5),
              "w2": RNG.standard_normal((5, 2)) * 0.5}
    xs = RNG.standard_normal((6, 3))
    ys = RNG.standard_normal((6, 2))

    def loss(p, x, y):
        h = anp.tanh(x @ p["w1"] + p["b1"])
        return anp.sum((h @ p["w2"] - y) ** 2)

    per_example = arrjit.jit(arrjit.vmap(arrjit.grad(loss), in_axes=(None, 0, 0)))(
        params, xs, ys)
    assert per_example["w1"].shape == (6, 3, 5) and per_example["w2"].shape == (6, 5, 2)
    for k in range(6):
        one = arrjit.grad(loss)(params, xs[k], ys[k])
        for name in params:
            np.testing.assert_allclose(per_example[name][k], one[name], rtol=1e-12)

    def jloss(p, x, y):
        return jnp.sum((jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] - y) ** 2)

    expected = jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(params, xs, ys)
    for name in params:
        np.testing.assert_allclose(per_example[name], expected[name], rtol=1e-10)


# -- control flow ----------------------------------------------------------------------------------
def test_cond_and_switch_differentiate_the_taken_branch():
    f = lambda x: lax.cond(x > 0, lambda v: anp.sqrt(v), lambda v: -v, x)  # noqa: E731
    assert float(arrjit.grad(f)(-1.0)) == -1.0      # the untaken sqrt branch gives no NaN
    assert float(arrjit.grad(f)(4.0)) == 0.25
    assert float(arrjit.jit(arrjit.grad(f))(-1.0)) == -1.0
    s = lambda i, x: lax.switch(i, [anp.sin, anp.cos, lambda v: v ** 2], x)  # noqa: E731
    for i, expected in [(0, math.cos(0.3)), (1, -math.sin(0.3)), (2, 0.6), (7, 0.6)]:
        assert math.isclose(float(arrjit.jit(arrjit.grad(s, argnums=1))(i, 0.3)), expected)


def test_fori_loop_and_scan_differentiate_in_reverse():
    x = RNG.standard_normal(3)
    w = RNG.standard_normal(3)

    def looped(x):
        return anp.sum(lax.fori_loop(0, 4, lambda i, v: anp.sin(v) * w + i * x, x))

    check_gradient(looped, x)
    np.testing.assert_allclose(arrjit.jit(arrjit.grad(looped))(x), numerical_grad(looped, x),
                               rtol=1e-6)

    def scanned(x):
        c, ys = lax.scan(lambda c, xi: (c * anp.tanh(xi) + 1.0, anp.sin(c) * xi), 0.5, x)
        return c + anp.sum(ys)

    check_gradient(scanned, x)
    np.testing.assert_allclose(arrjit.jit(arrjit.grad(scanned))(x),
                               numerical_grad(scanned, x), rtol=1e-6)
    jx = jax.grad(lambda x: (lambda cy: cy[0] + jnp.sum(cy[1]))(jax.lax.scan(
        lambda c, xi: (c * jnp.tanh(xi) + 1.0, jnp.sin(c) * xi), 0.5, x)))(x)
    np.testing.assert_allclose(arrjit.grad(scanned)(x), jx, rtol=1e-12)
    # second order through a loop
    twice = arrjit.grad(lambda a: arrjit.grad(
        lambda b: lax.fori_loop(0, 3, lambda i, v: v * b, 1.0))(a))
    assert math.isclose(float(twice(1.5)), 6 * 1.5, rel_tol=1e-12)


def test_while_loop_differentiates_forward_only():
    body = lambda v: v * 1.5  # noqa: E731
    f = lambda x: lax.while_loop(lambda v: v < 10.0, body, x)  # noqa: E731
    value, tangent = arrjit.jvp(f, (1.0,), (1.0,))
    assert float(value) == 1.5 ** 6 and float(tangent) == 1.5 ** 6
    value, tangent = arrjit.jit(lambda x, t: arrjit.jvp(f, (x,), (t,)))(1.0, 1.0)
    assert float(tangent) == 1.5 ** 6
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop.*fori_loop with static"):
        arrjit.grad(f)(1.0)
    with pytest.raises(ValueError, match="traced bounds"):
        arrjit.jit(arrjit.grad(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * x, x)))(
            1.0, 3)


# -- user control ----------------------------------------------------------------------------------
def test_stop_gradient():
    assert float(arrjit.grad(lambda x: x * arrjit.stop_gradient(x))(3.0)) == 3.0
    assert float(arrjit.jit(arrjit.grad(lambda x: x * lax.stop_gradient(x ** 2)))(3.0)) == 9.0
    _, t = arrjit.jvp(lambda x: x * arrjit.stop_gradient(x), (3.0,), (1.0,))
    assert float(t) == 3.0
    np.testing.assert_array_equal(arrjit.jit(lambda x: arrjit.stop_gradient(x) + 1)(np.ones(2)),
                                  [2.0, 2.0])


def test_custom_vjp_replaces_the_rule_in_reverse_mode():
    @arrjit.custom_vjp
    def safe_log1pexp(x):
        return anp.log1p(anp.exp(x))

    def fwd(x):
        return safe_log1pexp(x), x

    def bwd(x, g):
        return (g * anp.where(x > 0, 1 / (1 + anp.exp(-x)), anp.exp(x) / (1 + anp.exp(x))),)

    safe_log1pexp.defvjp(fwd, bwd)
    x = np.array([-3.0, 0.0, 800.0])
    g = arrjit.grad(lambda v: anp.sum(safe_log1pexp(v)))(x)
    np.testing.assert_allclose(g, [1 / (1 + math.exp(3)), 0.5, 1.0])
    gj = arrjit.jit(arrjit.grad(lambda v: anp.sum(safe_log1pexp(v) * 2)))(x)
    np.testing.assert_allclose(gj, 2 * g)
    # plain calls and jit without differentiation run the function
    np.testing.assert_allclose(arrjit.jit(safe_log1pexp)(np.zeros(1)), [math.log(2)])
    with pytest.raises(TypeError, match="custom_vjp rule defines reverse mode only"):
        arrjit.jvp(lambda v: anp.sum(safe_log1pexp(v)), (x,), (np.ones(3),))

    @arrjit.custom_vjp
    def bad(x):
        return x * 2

    bad.defvjp(lambda x: (x * 2, None), lambda r, g: (g, g))
    with pytest.raises(TypeError, match="one cotangent per differentiable argument"):
        arrjit.grad(lambda v: anp.sum(bad(v)))(np.ones(2))


def test_custom_vjp_with_nondiff_argnums_and_in_a_loop():
    def clip(limit, x):
        return x

    clip = arrjit.custom_vjp(clip, nondiff_argnums=(0,))
    clip.defvjp(lambda limit, x: (x, None), lambda limit, _, g: (anp.clip(g, -limit, limit),))
    f = lambda x: lax.fori_loop(0, 2, lambda i, v: clip(0.5, v) * 3.0, x)  # noqa: E731
    assert float(arrjit.grad(lambda x: clip(0.5, x) * 3.0)(1.0)) == 0.5
    # the rule runs inside the loop's backward pass: each step clips 3 * g to 0.5
    assert float(arrjit.grad(f)(1.0)) == 0.5
    assert float(arrjit.jit(arrjit.grad(f))(1.0)) == 0.5


# -- errors ----------------------------------------------------------------------------------------
def test_errors_say_what_to_do():
    with pytest.raises(TypeError, match=r"scalar-output functions. Output had shape: \(3,\)"):
        arrjit.grad(lambda x: x * 2)(np.ones(3))
    with pytest.raises(TypeError, match=r"requires real- or complex-valued inputs.*int64 "
                                        r"for 'n'.*allow_int=True"):
        arrjit.grad(lambda n: n * 2.0)(3)
    g = arrjit.grad(lambda n: n * 2.0, allow_int=True)(3)
    assert g.dtype == arrjit.float0
    with pytest.raises(TypeError, match="requires real-valued outputs.*complex128"):
        arrjit.grad(lambda x: x * 1j)(1.0)
    with pytest.raises(TypeError, match="argnums=2 requires at least 3 positional"):
        arrjit.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(TypeError, match="has_aux=True the function must return a pair"):
        arrjit.grad(lambda x: x, has_aux=True)(1.0)
    with pytest.raises(ValueError, match="cotangent leaf 0 has shape"):
        arrjit.vjp(lambda x: x * 2, np.ones(3))[1](np.ones(2))
    with pytest.raises(TypeError, match="defvjp"):
        arrjit.custom_vjp(lambda x: x)(1.0)


# -- real programs -----------------------------------------------------------------------------------
def test_logistic_regression_trained_in_a_fori_loop():
    X = RNG.standard_normal((40, 3))
    y = (X @ np.array([1.5, -2.0, 0.5]) + 0.3 * RNG.standard_normal(40) > 0).astype(float)

    def loss(w):
        p = 1 / (1 + anp.exp(-(X @ w)))
        return -anp.mean(y * anp.log(p) + (1 - y) * anp.log(1 - p))

    w0 = np.zeros(3)
    g = arrjit.grad(loss)(w0)
    p0 = 1 / (1 + np.exp(-(X @ w0)))
    np.testing.assert_allclose(g, X.T @ (p0 - y) / len(y), rtol=1e-12)   # by hand

    @arrjit.jit
    def train(w):
        return lax.fori_loop(0, 50, lambda i, w: w - 0.5 * arrjit.grad(loss)(w), w)

    w = train(w0)
    w_np = w0.copy()
    for _ in range(50):
        p = 1 / (1 + np.exp(-(X @ w_np)))
        w_np = w_np - 0.5 * X.T @ (p - y) / len(y)
    np.testing.assert_allclose(w, w_np, rtol=1e-10)
    assert float(loss(w)) < 0.5 * float(loss(w0))


def test_black_scholes_delta_and_vega():
    from math import erf, exp, log, pi, sqrt

    def call(s, sigma, k=100.0, r=0.01, t=0.5):
        d1 = (anp.log(s / k) + (r + sigma ** 2 / 2) * t) / (sigma * anp.sqrt(t))
        d2 = d1 - sigma * anp.sqrt(t)
        cdf = lambda z: 0.5 * (1 + lax_erf(z / math.sqrt(2)))  # noqa: E731
        return s * cdf(d1) - k * anp.exp(-r * t) * cdf(d2)

    def lax_erf(z):   # erf by its Taylor series (|z| < 0.5 here: 14 terms are exact)
        terms = [z]
        term = z
        for n in range(1, 14):
            term = -term * z * z / n
            terms.append(term / (2 * n + 1))
        return 2 / math.sqrt(math.pi) * sum(terms[1:], terms[0])

    s, sigma = np.array([90.0, 100.0, 110.0]), np.array([0.2, 0.25, 0.3])
    delta, vega = arrjit.jit(arrjit.grad(lambda s, v: anp.sum(call(s, v)), argnums=(0, 1)))(
        s, sigma)
    for k in range(3):
        d1 = (log(s[k] / 100.0) + (0.01 + sigma[k] ** 2 / 2) * 0.5) / (sigma[k] * sqrt(0.5))
        assert math.isclose(delta[k], 0.5 * (1 + erf(d1 / sqrt(2))), rel_tol=1e-9)
        assert math.isclose(vega[k], s[k] * exp(-d1 * d1 / 2) / sqrt(2 * pi) * sqrt(0.5),
                            rel_tol=1e-9)


# -- the backward pass fuses --------------------------------------------------------------------------
def _softmax_cross_entropy(logits, labels):
    z = logits - anp.max(logits, axis=1, keepdims=True)
    lse = anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
    return -anp.mean(anp.sum(labels * (z - lse), axis=1))


def _layernorm(x, g, b):
    mu = anp.mean(x, axis=-1, keepdims=True)
    var = anp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return anp.sum(((x - mu) / anp.sqrt(var + 1e-5) * g + b) ** 2)


def _mlp(w1, w2, x, y):
    return anp.mean((anp.tanh(x @ w1) @ w2 - y) ** 2)


def test_backward_passes_fuse_into_as_few_kernels_as_the_forward_pass():
    logits, labels = RNG.standard_normal((64, 10)), np.eye(10)[RNG.integers(0, 10, 64)]
    x, g, b = RNG.standard_normal((64, 32)), RNG.standard_normal(32), RNG.standard_normal(32)
    w1, w2, t = RNG.standard_normal((32, 16)), RNG.standard_normal((16, 4)), RNG.standard_normal(
        (64, 4))
    for f, args in [(_softmax_cross_entropy, (logits, labels)), (_layernorm, (x, g, b)),
                    (_mlp, (w1, w2, x, t))]:
        forward = len(arrjit.jit(f).lower(*args).kernels)
        # the backward pass adds no more kernels than the forward pass has
        every = tuple(range(len(args) if f is not _softmax_cross_entropy else 1))
        both = len(arrjit.jit(arrjit.value_and_grad(f, argnums=every)).lower(*args).kernels)
        assert both <= 2 * forward, (f.__name__, forward, both)
        if f is not _mlp:
            # row-wise losses: the whole gradient is one kernel, fewer than the forward pass
            assert len(arrjit.jit(arrjit.grad(f)).lower(*args).kernels) == 1 < forward
        got = arrjit.jit(arrjit.grad(f))(*args)
        jf = {"_softmax_cross_entropy": lambda a, b: -jnp.mean(jnp.sum(
                  b * jax.nn.log_softmax(a, axis=1), axis=1)),
              "_layernorm": lambda x, g, b: jnp.sum(((x - x.mean(-1, keepdims=True)) / jnp.sqrt(
                  x.var(-1, keepdims=True) + 1e-5) * g + b) ** 2),
              "_mlp": lambda w1, w2, x, y: jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)}[
            f.__name__]
        np.testing.assert_allclose(got, jax.grad(jf)(*args), rtol=1e-9, atol=1e-12)
