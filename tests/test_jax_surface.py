"""The JAX surface that programs written for JAX use, with JAX as the oracle: vmap over mixed
dtypes and Python scalars (against a Python loop over the batch), grad of Python control flow
outside jit, pytrees with unhashable aux data, ``arrjit.tree`` / ``tree_util``,
``arrjit.Array``, the Jacobian transformations, ``lax.select``, traced ``linspace``, the
array API's ``device``, and the error messages that name the fix."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import arrjit
import arrjit.numpy as anp
from arrjit import errors, lax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(2)


# -- vmap ----------------------------------------------------------------------------------------
def test_vmap_promotes_dtypes_as_numpy_does():
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(arrjit.vmap(lambda v: v + 1.5)(x), x + 1.5)
    a, b = np.ones(3, np.float32), np.arange(3.0)
    out = arrjit.vmap(lambda u, v: u * v)(a, b)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, a * b)
    out = arrjit.vmap(lambda u: u.astype(np.float32) * 2)(x)
    assert out.dtype == np.float32


FUNCTIONS = {
    "affine": lambda ns, a, b: a * b + 1.5,
    "mixed": lambda ns, a, b: ns.where(a > b, a, b * 2) - 1,
    "reduce": lambda ns, a, b: ns.sum(a * b, axis=-1),
    "matmul": lambda ns, a, b: ns.matmul(a, ns.ones((a.shape[-1], 2))) + ns.sum(b),
    "softmax": lambda ns, a, b: ns.exp(a - ns.max(a)) / ns.sum(ns.exp(a - ns.max(a))) + b,
    "cast": lambda ns, a, b: a.astype(np.float32) * b,
    "index": lambda ns, a, b: a[..., ::-1] + b,
}
DTYPES = ["float64", "float32", "int32", "int64"]


def _example(rng, dtype, shape):
    if dtype == "python_float":
        return float(rng.standard_normal())
    if dtype == "python_int":
        return int(rng.integers(-3, 4))
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _loop(fn, args, in_axes, out_axis, size):
    """The reference: ``fn`` on each example with NumPy, results stacked along ``out_axis``."""
    results = []
    for k in range(size):
        example = [a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, in_axes)]
        results.append(np.asarray(fn(np, *example)))
    return np.stack(results, axis=out_axis)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(FUNCTIONS)), st.sampled_from(DTYPES),
       st.sampled_from(DTYPES + ["python_float", "python_int"]), st.integers(1, 3),
       st.integers(0, 2), st.sampled_from([0, -1]), st.sampled_from(["vmap", "jit(vmap)",
                                                                      "vmap(jit)", "vmap(vmap)"]),
       st.integers(0, 1000))
def test_vmap_equals_a_python_loop_over_the_batch(name, dtype_a, dtype_b, size, axis_a,
                                                  out_axis, nesting, seed):
    rng = np.random.default_rng(seed)
    fn = FUNCTIONS[name]
    example_shape = (2, 3)
    a = np.moveaxis(_example(rng, dtype_a, (size,) + example_shape), 0, axis_a)
    b = _example(rng, dtype_b, example_shape)
    in_axes = (axis_a, None)
    with np.errstate(all="ignore"):
        want = _loop(fn, (a, b), in_axes, out_axis, size)
    body = lambda u, v: fn(anp, u, v)        # noqa: E731
    if nesting == "vmap(vmap)":               # an inner vmap over the rows of each example
        if name in ("matmul", "softmax", "reduce", "index"):
            return                            # row-wise these differ from the whole example
        body = arrjit.vmap(lambda u, v: fn(anp, u, v),
                           in_axes=(0, None if isinstance(b, (int, float)) else 0))
    mapped = arrjit.vmap(arrjit.jit(body) if nesting == "vmap(jit)" else body,
                         in_axes=in_axes, out_axes=out_axis)
    if nesting == "jit(vmap)":
        mapped = arrjit.jit(mapped)
    with np.errstate(all="ignore"):
        got = mapped(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    single = "float32" in (dtype_a, dtype_b) or name == "cast"
    # float32 sums in another order round differently; adding ``b`` can cancel most of a
    # value (softmax + b near 0), so the bound is on the terms' size, not the result's
    np.testing.assert_allclose(got, want, rtol=2e-6 if single else 1e-12,
                               atol=1e-6 if single else 0.0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.sampled_from([0, 1]), st.booleans(), st.integers(0, 1000))
def test_vmap_of_grad_equals_jax_per_example(size, axis, jitted, seed):
    rng = np.random.default_rng(seed)
    w = np.moveaxis(rng.standard_normal((size, 3)), 0, axis) if axis else rng.standard_normal(
        (size, 3))
    x = rng.standard_normal(3)

    def loss(ns, w, x, scale):
        return ns.sum(ns.tanh(w * x) ** 2) * scale

    per_example = arrjit.vmap(arrjit.grad(lambda w, x: loss(anp, w, x, 0.5)),
                              in_axes=(axis, None))
    if jitted:
        per_example = arrjit.jit(per_example)
    want = jax.vmap(jax.grad(lambda w, x: loss(jnp, w, x, 0.5)), in_axes=(axis, None))(w, x)
    np.testing.assert_allclose(per_example(w, x), want, rtol=1e-12, atol=1e-14)


def test_vmap_axes_accept_prefix_trees_and_none_leaves():
    params = {"w": np.ones((4, 3)), "b": np.arange(3.0)}
    out = arrjit.vmap(lambda p, x: (p["w"] * x + p["b"], x.sum()),
                      in_axes=({"w": 0, "b": None}, 0), out_axes=(1, None))
    with pytest.raises(ValueError, match="out_axes=None"):
        out(params, np.ones((4, 3)))
    rows, total = arrjit.vmap(lambda p, x: (p["w"] * x + p["b"], p["b"].sum()),
                              in_axes=({"w": 0, "b": None}, 0), out_axes=(1, None))(
        params, np.ones((4, 3)))
    assert rows.shape == (3, 4) and total == 3.0


# -- differentiation -----------------------------------------------------------------------------
def piecewise(x):
    return 3.0 * x ** 2 if x < 3 else -4 * x


def test_grad_of_python_control_flow_outside_jit_uses_the_concrete_value():
    assert arrjit.grad(piecewise)(2.0) == jax.grad(piecewise)(2.0) == 12.0
    assert arrjit.grad(piecewise)(4.0) == jax.grad(piecewise)(4.0) == -4.0
    assert arrjit.grad(arrjit.grad(piecewise))(2.0) == 6.0

    def looped(x, n):
        for _ in range(int(n)):
            x = anp.sin(x)
        return x

    np.testing.assert_allclose(arrjit.grad(looped)(0.5, 3.0),
                               jax.grad(lambda x, n: jnp.sin(jnp.sin(jnp.sin(x))))(0.5, 3.0))
    with pytest.raises(errors.TracerBoolConversionError, match="lax.cond"):
        arrjit.jit(arrjit.grad(piecewise))(2.0)


def test_jacobians_match_jax():
    x, w = RNG.standard_normal(3), RNG.standard_normal((2, 3))

    def f(ns, x, w):
        return {"a": ns.tanh(w @ x), "b": ns.sum(x ** 2)}

    for ours, theirs in ((arrjit.jacfwd, jax.jacfwd), (arrjit.jacrev, jax.jacrev),
                         (arrjit.jacobian, jax.jacobian)):
        for argnums in (0, 1, (0, 1)):
            got = ours(lambda x, w: f(anp, x, w), argnums)(x, w)
            want = theirs(lambda x, w: f(jnp, x, w), argnums)(x, w)
            got_leaves, got_tree = arrjit.tree.flatten(got)
            want_leaves = jax.tree.leaves(want)
            assert len(got_leaves) == len(want_leaves)
            for g, v in zip(got_leaves, want_leaves):
                np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-14)
            jitted = arrjit.jit(ours(lambda x, w: f(anp, x, w), argnums))(x, w)
            for g, v in zip(arrjit.tree.leaves(jitted), want_leaves):
                np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-14)
    g = lambda ns, x: ns.sum(ns.sin(x) * x[::-1])     # noqa: E731
    np.testing.assert_allclose(arrjit.hessian(lambda v: g(anp, v))(x),
                               jax.hessian(lambda v: g(jnp, v))(x), rtol=1e-12)
    params = {"w": x, "b": 2.0}
    got = arrjit.jacrev(lambda p: p["w"] * p["b"])(params)
    want = jax.jacrev(lambda p: p["w"] * p["b"])(params)
    assert {k: np.shape(v) for k, v in got.items()} == {k: v.shape for k, v in want.items()}
    jac, aux = arrjit.jacfwd(lambda v: (v ** 2, v.sum()), has_aux=True)(x)
    np.testing.assert_allclose(jac, np.diag(2 * x))
    np.testing.assert_allclose(aux, x.sum())
    with pytest.raises(TypeError, match="real-valued inputs"):
        arrjit.jacfwd(lambda v: v)(np.arange(3))


# -- pytrees -------------------------------------------------------------------------------------
class Special:
    """A container whose aux data is a dict, as in JAX's documentation."""

    def __init__(self, x, y, name):
        self.x, self.y, self.name = x, y, name


arrjit.register_pytree_node(Special, lambda s: ((s.x, s.y), {"name": s.name}),
                            lambda aux, children: Special(*children, aux["name"]))


def test_pytree_aux_data_is_compared_by_equality():
    f = arrjit.jit(lambda s: Special(s.x * 2, s.y + 1, s.name))
    out = f(Special(np.ones(2), np.zeros(2), "a"))
    assert isinstance(out, Special) and out.name == "a"
    np.testing.assert_array_equal(out.x, [2.0, 2.0])
    f(Special(np.ones(2), np.zeros(2), "a"))
    assert f.cache_info().traces == 1 and f.cache_info().hits == 1
    f(Special(np.ones(2), np.zeros(2), "b"))
    assert f.cache_info().traces == 2


def test_tree_functions_match_jax_tree():
    tree = {"b": [1.0, (2.0, None)], "a": {"x": 3.0, "y": [4.0]}}
    assert arrjit.tree.leaves(tree) == jax.tree.leaves(tree)
    assert arrjit.tree.map(lambda v: v * 2, tree) == jax.tree.map(lambda v: v * 2, tree)
    assert arrjit.tree.map(lambda u, v: u + v, tree, tree) == jax.tree.map(
        lambda u, v: u + v, tree, tree)
    assert arrjit.tree.reduce(lambda u, v: u + v, tree) == jax.tree.reduce(
        lambda u, v: u + v, tree)
    assert arrjit.tree.reduce(lambda u, v: u + v, tree, 10.0) == 20.0
    leaves, treedef = arrjit.tree.flatten(tree)
    assert arrjit.tree.unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == 4 and arrjit.tree.structure(tree) == treedef
    assert arrjit.tree.all([True, (1, 2.0)]) and not arrjit.tree.all([True, 0])
    assert arrjit.tree.leaves([1, [2, 3]], is_leaf=lambda n: isinstance(n, list) and
                              len(n) == 2 and n[0] == 2) == [1, [2, 3]]
    outer, inner = arrjit.tree.structure([0, 0]), arrjit.tree.structure((0, 0))
    assert arrjit.tree.transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    with pytest.raises(ValueError, match="does not match"):
        arrjit.tree.map(lambda u, v: u, [1, 2], [1])
    with pytest.raises(ValueError, match="leaves"):
        arrjit.tree.unflatten(treedef, [1.0])
    assert arrjit.tree.leaves_with_path({"w": [5]}) == [("['w'][0]", 5)]


def test_tree_util_spellings_and_class_registration():
    from arrjit.tree_util import (register_pytree_node_class, tree_flatten, tree_leaves,
                                  tree_map, tree_unflatten)

    @register_pytree_node_class
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    doubled = arrjit.jit(lambda p: tree_map(lambda v: v * 2, p))(Pair(np.ones(2), 3.0))
    assert isinstance(doubled, Pair) and float(doubled.b) == 6.0
    leaves, treedef = tree_flatten(Pair(1, 2))
    assert tree_leaves(Pair(1, 2)) == [1, 2] and tree_unflatten(treedef, [3, 4]).b == 4


def test_array_is_the_type_of_arrays_and_traced_arrays():
    def scale(x: arrjit.Array, k: float) -> arrjit.Array:
        assert isinstance(x, arrjit.Array)
        return x * k

    assert isinstance(np.ones(2), arrjit.Array) and not isinstance([1.0], arrjit.Array)
    np.testing.assert_array_equal(arrjit.jit(scale)(np.ones(2), 2.0), [2.0, 2.0])
    arrjit.grad(lambda v: anp.sum(scale(v, 3.0)))(np.ones(2))
    arrjit.vmap(lambda v: scale(v, 3.0))(np.ones((2, 2)))
    from arrjit.typing import ArrayLike, DTypeLike   # noqa: F401  (annotations)


# -- the namespace -------------------------------------------------------------------------------
def test_lax_select_takes_integer_predicates_as_jax_does():
    pred = np.array([1, 0, 2])
    want = jax.lax.select(pred, jnp.ones(3), jnp.zeros(3))
    np.testing.assert_array_equal(lax.select(pred, np.ones(3), np.zeros(3)), want)
    np.testing.assert_array_equal(arrjit.jit(lax.select)(pred, np.ones(3), np.zeros(3)), want)
    with pytest.raises(TypeError, match="boolean or integer"):
        arrjit.jit(lax.select)(np.ones(3), np.ones(3), np.zeros(3))


def test_linspace_with_traced_bounds_is_numpys():
    for kwargs in ({"num": 5}, {"num": 7, "endpoint": False}, {"num": 1}, {"num": 0},
                   {"num": 6, "dtype": np.int64}, {"num": 4, "retstep": True}):
        got = arrjit.jit(lambda a, b: anp.linspace(a, b, **kwargs))(0.1, 1.3)
        want = np.linspace(0.1, 1.3, **kwargs)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_array_equal(g, w)
    starts, stops = np.array([0.0, 1.0]), np.array([1.0, -2.0])
    np.testing.assert_array_equal(
        arrjit.jit(lambda a, b: anp.linspace(a, b, 4, axis=1))(starts, stops),
        np.linspace(starts, stops, 4, axis=1))
    with pytest.raises(errors.ConcretizationTypeError, match="num"):
        arrjit.jit(lambda n: anp.linspace(0.0, 1.0, n))(np.int64(3))


def test_traced_arrays_carry_the_array_apis_device():
    seen = []

    def f(x):
        seen.append(x.device)
        return x.to_device(x.device) * 2

    np.testing.assert_array_equal(arrjit.jit(f)(np.ones(2)), [2.0, 2.0])
    assert seen == ["cpu"]
    with pytest.raises(ValueError, match="device_put"):
        arrjit.jit(lambda x: x.to_device("cuda"))(np.ones(2))


# -- error messages ------------------------------------------------------------------------------
def test_a_list_argument_is_explained_with_the_fix():
    with pytest.raises(errors.TracerArrayConversionError,
                       match=r"argument 'x' is a Python list or tuple.*np\.asarray\(x\)"):
        arrjit.jit(lambda x: anp.sum(np.asarray(x)))([1.0, 2.0])
    message = ""
    try:
        arrjit.jit(lambda x: anp.sum(np.asarray(x)))([1.0, 2.0])
    except errors.TracerArrayConversionError as err:
        message = str(err)
    assert "static_argnames" not in message


def test_ranges_and_lists_of_traced_values_index_as_numpy_does():
    x = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(arrjit.jit(lambda x, y: x[range(3), y])(x, np.arange(3)),
                                  x[range(3), np.arange(3)])
    np.testing.assert_array_equal(arrjit.jit(lambda x, i, j: x[[i, j]])(x[0], 1, 2),
                                  x[0][[1, 2]])
    np.testing.assert_array_equal(arrjit.jit(lambda x, i: x[i])(x[0], [0, 2]), x[0][[0, 2]])


def test_index_tricks_are_numpys():
    got = arrjit.jit(lambda s: (anp.mgrid[0:3, 0:4:2] * s, anp.ogrid[0:2, 0:3], anp.r_[1:4, 7],
                                anp.mgrid[-1:1:5j]))(2.0)
    want = (np.mgrid[0:3, 0:4:2] * 2.0, np.ogrid[0:2, 0:3], np.r_[1:4, 7], np.mgrid[-1:1:5j])
    np.testing.assert_array_equal(got[0], want[0])
    for g, w in zip(got[1], want[1]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_allclose(got[3], want[3])
    x = np.arange(3.0)
    np.testing.assert_array_equal(arrjit.jit(lambda v: anp.r_[v, 0:2, -1.0])(x),
                                  np.r_[x, 0:2, -1.0])
    np.testing.assert_array_equal(arrjit.jit(lambda v: anp.c_[v, v * 2])(x), np.c_[x, x * 2])
    assert anp.s_[1:3] == np.s_[1:3] and anp.index_exp[2] == np.index_exp[2]
    with pytest.raises(TypeError, match="static slice bounds"):
        arrjit.jit(lambda n: anp.mgrid[0:n])(np.int64(3))


def test_item_assignment_writes_arrays_the_function_computed_as_numpy_does():
    def differences(x):
        out = anp.zeros_like(x)
        out[0] = x[0]
        out[1:] = x[1:] - x[:-1]
        out[out < 0] = -1.0             # a traced boolean mask with a broadcast value
        out[2] += 10
        return out

    x = np.array([1.0, 3.0, 2.0, 7.0])
    want = np.zeros_like(x)
    want[0], want[1:] = x[0], x[1:] - x[:-1]
    want[want < 0] = -1.0
    want[2] += 10
    np.testing.assert_array_equal(arrjit.jit(differences)(x), want)
    np.testing.assert_allclose(arrjit.grad(lambda v: anp.sum(differences(v) ** 2))(x),
                               jax.grad(lambda v: jnp.sum(_jax_differences(v) ** 2))(x))


def _jax_differences(x):
    out = jnp.zeros_like(x).at[0].set(x[0]).at[1:].set(x[1:] - x[:-1])
    out = jnp.where(out < 0, -1.0, out)
    return out.at[2].add(10)


@pytest.mark.parametrize("program,reason", [
    (lambda x: x.__setitem__(0, 1.0), "an argument"),
    (lambda x: x[1:].__setitem__(0, 1.0), "an argument"),
    (lambda x: _write_then_read_view(x * 2), "a view of it"),
    (lambda x: _write_into_view(x * 2), "a view of another array"),
], ids=["argument", "view-of-argument", "live-view", "into-a-view"])
def test_item_assignment_that_numpy_would_share_is_refused(program, reason):
    with pytest.raises(TypeError, match=f"{reason}.*x.at\\[idx\\].set"):
        arrjit.jit(program)(np.ones(4))


def _write_then_read_view(y):
    view = y[1:]
    y[0] = 100.0          # NumPy: view[...] would not change, y's memory would
    return view


def _write_into_view(y):
    view = y[1:]
    view[0] = 100.0       # NumPy writes through to y
    return y


def test_array_api_extra_functions_run_under_jit():
    xpx = pytest.importorskip("array_api_extra")
    x = np.linspace(-2.0, 2.0, 5)
    for fn in (lambda v: xpx.sinc(v), lambda v: xpx.pad(v, 2, constant_values=1.0),
               lambda v: xpx.create_diagonal(v), lambda v: xpx.at(v * 1)[1].set(10.0),
               lambda v: xpx.one_hot(anp.astype(v + 2, anp.int64), 5),
               lambda v: xpx.kron(v, v), lambda v: xpx.cov(anp.stack([v, v ** 2]))):
        np.testing.assert_allclose(arrjit.jit(fn)(x), fn(x.copy()))


def test_sizes_from_shapes_are_weak_python_ints_with_numpy_scalars_and_arrays():
    """``x.shape[0]`` under jit is an int that generated code reads at run time; with NumPy
    operands it must promote as the Python int it is in NumPy (NEP 50: weak), not as int64."""
    import arrjit

    def f(a):
        n = a.shape[0]
        return (a * (a.dtype.type(0.5) / n), np.ones(2, np.float32) * n, np.int8(3) + n,
                n < np.float32(3.5), a + n)

    a = np.ones(3, np.float32)
    got = arrjit.jit(f)(a)
    want = f(a)
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
