"""``arrjit.numpy.linalg``: every function against NumPy's (jitted and eager; batched over
leading axes; float32, float64, integers and complex), derivatives against JAX's (reverse
and forward mode, real and complex, first and second order), vmap, errors, and the plan
(one library step per factorization, fused around it)."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp

from helpers import assert_same

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(5)
A = RNG.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
STACK = RNG.standard_normal((2, 3, 4, 4))
TALL = RNG.standard_normal((5, 3))
WIDE = RNG.standard_normal((3, 5))
VEC = RNG.standard_normal(4)
C = A + 1j * RNG.standard_normal((4, 4))
HERMITIAN = C @ C.conj().T + 4 * np.eye(4)

# name -> (function of (linalg namespace, *arrays), arrays)
CASES = {
    "solve_vector": (lambda L, a, b: L.solve(a, b), (A, VEC)),
    "solve_matrix": (lambda L, a, b: L.solve(a, b), (STACK, RNG.standard_normal((2, 3, 4, 2)))),
    "solve_broadcast": (lambda L, a, b: L.solve(a, b), (STACK, RNG.standard_normal((4, 2)))),
    "solve_stacked_vector": (lambda L, a, b: L.solve(a, b), (STACK, VEC)),
    "inv": (lambda L, a: L.inv(a), (STACK,)),
    "det": (lambda L, a: L.det(a), (STACK,)),
    "slogdet": (lambda L, a: tuple(L.slogdet(a)), (STACK,)),
    "cholesky": (lambda L, a: (L.cholesky(a), L.cholesky(a, upper=True)), (SPD,)),
    "qr": (lambda L, a: tuple(L.qr(a)) + tuple(L.qr(a, mode="complete")) + (L.qr(a, mode="r"),),
           (TALL,)),
    "qr_wide": (lambda L, a: tuple(L.qr(a)), (WIDE,)),
    "eigh": (lambda L, a: tuple(L.eigh(a)) + tuple(L.eigh(a, UPLO="U")), (SPD,)),
    "eigvalsh": (lambda L, a: L.eigvalsh(a), (SPD,)),
    "svd": (lambda L, a: tuple(L.svd(a)) + tuple(L.svd(a, full_matrices=False)), (TALL,)),
    "svd_wide": (lambda L, a: tuple(L.svd(a, full_matrices=False)) + (
        L.svd(a, compute_uv=False),), (WIDE,)),
    "svd_hermitian": (lambda L, a: L.svd(a, hermitian=True)[1], (SPD,)),
    "svdvals": (lambda L, a: L.svdvals(a), (STACK,)),
    "eigvals": (lambda L, a: L.eigvals(a + a.T), (A,)),
    "norm": (lambda L, a, v: (L.norm(a), L.norm(a, 2), L.norm(a, "nuc"), L.norm(a, 1),
                              L.norm(a, -np.inf), L.norm(a, "fro", keepdims=True),
                              L.norm(v, 3), L.norm(v, 0), L.norm(v, -np.inf), L.norm(v, 1)),
             (A, VEC)),
    "norm_axes": (lambda L, a: (L.norm(a, axis=1), L.norm(a, ord=1, axis=(0, 2)),
                                L.norm(a, axis=(2, 3), keepdims=True)), (STACK,)),
    "vector_norm": (lambda L, a: (L.vector_norm(a), L.vector_norm(a, axis=1, ord=1)), (STACK,)),
    "matrix_norm": (lambda L, a: (L.matrix_norm(a), L.matrix_norm(a, ord=2)), (STACK,)),
    "cond": (lambda L, a: (L.cond(a), L.cond(a, 1), L.cond(a, -2), L.cond(a, "fro")), (A,)),
    "matrix_rank": (lambda L, a, b: (L.matrix_rank(a), L.matrix_rank(b), L.matrix_rank(a, 1.0)),
                    (TALL @ WIDE, A)),
    "pinv": (lambda L, a, b: (L.pinv(a), L.pinv(b), L.pinv(a, rtol=None)), (TALL, STACK)),
    "lstsq": (lambda L, a, b: L.lstsq(a, b)[0], (TALL, RNG.standard_normal(5))),
    "matrix_power": (lambda L, a: (L.matrix_power(a, 0), L.matrix_power(a, 1),
                                   L.matrix_power(a, 3), L.matrix_power(a, 6),
                                   L.matrix_power(a, -2)), (A,)),
    "multi_dot": (lambda L, a, b, c, v: (L.multi_dot([a, b, c]), L.multi_dot([v, c.T, c, v]),
                                         L.multi_dot([c, v])),
                  (TALL, WIDE, RNG.standard_normal((5, 4)), VEC)),
    "tensorinv": (lambda L, a: L.tensorinv(a, ind=1), (np.eye(6).reshape(6, 2, 3) + 0.1,)),
    "tensorsolve": (lambda L, a, b: L.tensorsolve(a, b),
                    (np.eye(6).reshape(2, 3, 6) + 0.1, RNG.standard_normal((2, 3)))),
    "cross": (lambda L, a, b: L.cross(a, b), (RNG.standard_normal((4, 3)),
                                              RNG.standard_normal((4, 3)))),
    "outer": (lambda L, a, b: L.outer(a, b), (VEC, VEC[:3])),
    "trace": (lambda L, a: (L.trace(a), L.trace(a, offset=1)), (STACK,)),
    "diagonal": (lambda L, a: (L.diagonal(a), L.diagonal(a, offset=-1)), (STACK,)),
    "matmul_tensordot_vecdot": (lambda L, a, b: (L.matmul(a, b), L.tensordot(a, b, axes=1),
                                                 L.vecdot(a, b), L.matrix_transpose(a)),
                                (A, A.T)),
    "integers": (lambda L, a, b: (L.det(a), L.inv(a), L.solve(a, b)),
                 (np.array([[2, 1], [1, 3]]), np.array([1, 2]))),
    "complex": (lambda L, a, b: (L.solve(a, b), L.inv(a), L.det(a), L.slogdet(a)[0],
                                 L.eigvalsh(b), L.cholesky(b), L.svd(a, compute_uv=False),
                                 L.norm(a, 2)), (C, HERMITIAN)),
}


def _outputs(value):
    return value if isinstance(value, tuple) else (value,)


def _check(got, want, rtol):
    for g, w in zip(_outputs(got), _outputs(want), strict=True):
        assert_same(g, np.asarray(w), rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_matches_numpy_under_jit_and_eagerly(name):
    fn, args = CASES[name]
    want = fn(np.linalg, *args)
    if name == "eigvals":       # inside jit always complex, as in JAX
        want = np.asarray(want, np.complex128)
        want = want[np.lexsort((want.imag, want.real))]
        got = arrjit.jit(lambda *a: fn(anp.linalg, *a))(*args)
        got = got[np.lexsort((got.imag, got.real))]
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        return
    _check(arrjit.jit(lambda *a: fn(anp.linalg, *a))(*args), want, 1e-10)
    _check(fn(anp.linalg, *args), want, 1e-15)


def test_float32_stays_float32():
    a = SPD.astype(np.float32)
    out = arrjit.jit(lambda a: (anp.linalg.inv(a), anp.linalg.eigh(a)[0], anp.linalg.det(a),
                                anp.linalg.norm(a, 2)))(a)
    ref = (np.linalg.inv(a), np.linalg.eigh(a)[0], np.linalg.det(a), np.linalg.norm(a, 2))
    for o, r in zip(out, ref):
        assert o.dtype == np.float32
        np.testing.assert_allclose(o, r, rtol=1e-5)


def test_results_are_numpys_named_tuples():
    w, v = arrjit.jit(anp.linalg.eigh)(SPD)
    result = arrjit.jit(anp.linalg.eigh)(SPD)
    assert type(result).__name__ == "EighResult" and result.eigenvalues is not None
    assert np.allclose(SPD @ v, v * w)
    assert type(arrjit.jit(anp.linalg.svd)(TALL)).__name__ == "SVDResult"
    assert type(arrjit.jit(anp.linalg.qr)(TALL)).__name__ == "QRResult"
    assert type(arrjit.jit(anp.linalg.slogdet)(A)).__name__ == "SlogdetResult"


def test_a_factorization_is_one_library_step_between_fused_kernels():
    f = arrjit.jit(lambda a, b: anp.exp(anp.linalg.solve(a * 2.0, b) + 1.0).sum())
    plan = f.lower(A, VEC)._entry.plan
    library = [s for s in plan.steps if hasattr(s, "node") and not hasattr(s, "body")]
    assert [s.node.op.value for s in library] == ["solve"]
    assert len(plan.kernels) == 2          # a * 2 before; exp, add and sum after
    w_v = arrjit.jit(anp.linalg.eigh).lower(SPD)._entry.plan
    (step,) = [s for s in w_v.steps if hasattr(s, "out_slots")]
    assert len(step.out_slots) == 2        # one LAPACK call, both results


def test_singular_and_non_square_matrices_raise_numpys_errors():
    singular = np.ones((3, 3))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        arrjit.jit(anp.linalg.inv)(singular)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        arrjit.jit(anp.linalg.det)(TALL)
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        arrjit.jit(anp.linalg.inv)(VEC)
    with pytest.raises(np.linalg.LinAlgError):
        arrjit.jit(anp.linalg.cholesky)(-SPD)
    assert anp.linalg.LinAlgError is np.linalg.LinAlgError


def test_vmap_batches_over_a_leading_axis():
    a, b = RNG.standard_normal((5, 3, 3)), RNG.standard_normal((5, 3))
    for in_axes, args, ref in [
        (0, (a, b), np.linalg.solve(a, b[..., None])[..., 0]),
        ((None, 0), (a[0], b), np.linalg.solve(a[0], b.T).T),
        ((0, None), (a, b[0]), np.linalg.solve(a, b[0])),
    ]:
        np.testing.assert_allclose(arrjit.vmap(anp.linalg.solve, in_axes=in_axes)(*args), ref,
                                   rtol=1e-12)
        np.testing.assert_allclose(arrjit.jit(arrjit.vmap(anp.linalg.solve,
                                                          in_axes=in_axes))(*args), ref,
                                   rtol=1e-12)
    np.testing.assert_allclose(arrjit.vmap(lambda m: anp.linalg.svd(m)[1])(a),
                               np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(arrjit.vmap(anp.linalg.det)(a), np.linalg.det(a), rtol=1e-12)
    stacks, rhs = RNG.standard_normal((2, 4, 3, 3)), RNG.standard_normal((4, 3, 2))
    np.testing.assert_allclose(arrjit.vmap(anp.linalg.solve, in_axes=(0, None))(stacks, rhs),
                               np.linalg.solve(stacks, rhs), rtol=1e-12)


# name -> (scalar function of (linalg namespace, numpy-like namespace, *args), args)
GRAD_CASES = {
    "solve": (lambda L, n, a, b: n.sum(L.solve(a, b) ** 2), (A, VEC)),
    "solve_batched": (lambda L, n, a, b: n.sum(L.solve(a, b) ** 2),
                      (STACK[0], RNG.standard_normal((3, 4, 2)))),
    "inv": (lambda L, n, a: n.sum(L.inv(a) * np.arange(16.0).reshape(4, 4)), (A,)),
    "det": (lambda L, n, a: n.sum(L.det(a)), (STACK,)),
    "slogdet": (lambda L, n, a: L.slogdet(a)[1], (A,)),
    "cholesky": (lambda L, n, a: n.sum(L.cholesky(a) * np.arange(16.0).reshape(4, 4)),
                 (SPD,)),
    "cholesky_upper": (lambda L, n, a: n.sum(L.cholesky(a, upper=True) ** 3), (SPD,)),
    "qr": (lambda L, n, a: n.sum(L.qr(a)[0] * np.arange(15.0).reshape(5, 3))
           + n.sum(L.qr(a)[1] ** 2), (TALL,)),
    "qr_r": (lambda L, n, a: n.sum(L.qr(a, mode="r") ** 3), (TALL,)),
    "eigh": (lambda L, n, a: n.sum(L.eigh(a)[0] * np.arange(4.0))
             + n.sum(L.eigh(a)[1][:, 0] ** 4), (SPD,)),
    "eigvalsh": (lambda L, n, a: n.sum(L.eigvalsh(a) ** 2), (SPD,)),
    "svd": (lambda L, n, a: n.sum(L.svd(a, full_matrices=False)[1] * np.arange(3.0))
            + n.sum(L.svd(a, full_matrices=False)[0] ** 4)
            + n.sum(L.svd(a, full_matrices=False)[2] ** 4), (TALL,)),
    "svd_wide": (lambda L, n, a: n.sum(L.svd(a, full_matrices=False)[0] ** 4)
                 + n.sum(L.svd(a, full_matrices=False)[2] ** 4), (WIDE,)),
    "svdvals": (lambda L, n, a: n.sum(L.svd(a, compute_uv=False) * np.arange(3.0)), (TALL,)),
    "eigvals": (lambda L, n, a: n.sum(n.real(L.eigvals(a)) ** 2), (A,)),
    "norm": (lambda L, n, a: L.norm(a, 2) + L.norm(a, "nuc") + L.norm(a) + L.norm(a[0], 3),
             (A,)),
    "pinv": (lambda L, n, a: n.sum(L.pinv(a) ** 2), (TALL,)),
    "lstsq": (lambda L, n, a, b: n.sum(L.lstsq(a, b)[0] ** 2), (TALL, RNG.standard_normal(5))),
    "matrix_power": (lambda L, n, a: n.sum(L.matrix_power(a, 5)), (A,)),
    "complex_solve": (lambda L, n, a, b: n.sum(n.abs(L.solve(a, b))), (C, VEC + 1j)),
    "complex_inv": (lambda L, n, a: n.sum(n.real(L.inv(a))), (C,)),
    "complex_slogdet": (lambda L, n, a: L.slogdet(a)[1], (C,)),
    "complex_cholesky": (lambda L, n, a: n.sum(n.abs(L.cholesky(a))), (HERMITIAN,)),
    "complex_eigh": (lambda L, n, a: n.sum(L.eigh(a)[0] * np.arange(4.0)), (HERMITIAN,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_jax(name):
    fn, args = GRAD_CASES[name]
    argnums = tuple(range(len(args)))
    want = jax.grad(lambda *a: fn(jnp.linalg, jnp, *a), argnums)(*args)
    f = lambda *a: fn(anp.linalg, anp, *a)     # noqa: E731
    for got in (arrjit.grad(f, argnums)(*args), arrjit.jit(arrjit.grad(f, argnums))(*args)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-7, atol=1e-9)


def test_forward_mode_and_second_order_match_jax():
    t = RNG.standard_normal((4, 4))
    for name in ("solve", "inv", "det", "cholesky", "eigh", "svd"):
        fn = {"solve": lambda L, a: L.solve(a, VEC), "inv": lambda L, a: L.inv(a),
              "det": lambda L, a: L.det(a), "cholesky": lambda L, a: L.cholesky(a @ a.T),
              "eigh": lambda L, a: L.eigh(a + a.T)[0],
              "svd": lambda L, a: L.svd(a)[1]}[name]
        _, got = arrjit.jvp(lambda a: fn(anp.linalg, a), (SPD,), (t,))
        _, want = jax.jvp(lambda a: fn(jnp.linalg, a), (SPD,), (t,))
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    hess = arrjit.hessian(lambda a: anp.linalg.slogdet(a)[1])(SPD)
    np.testing.assert_allclose(hess, jax.hessian(lambda a: jnp.linalg.slogdet(a)[1])(SPD),
                               rtol=1e-8, atol=1e-10)


def test_derivatives_jax_does_not_define_are_refused_with_a_reason():
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        arrjit.grad(lambda a: anp.sum(anp.linalg.svd(a)[0]))(TALL)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        arrjit.grad(lambda a: anp.sum(anp.real(anp.linalg.eig(a)[1])))(A)
    with pytest.raises(NotImplementedError, match="rows"):
        arrjit.grad(lambda a: anp.sum(anp.linalg.qr(a)[1]))(WIDE)


def test_anp_linalg_is_the_array_api_extension():
    """Array-API-generic code probes ``xp.linalg`` and calls the standard's functions."""
    import array_api_strict as xps

    def generic(x):
        xp = x.__array_namespace__()
        return (xp.linalg.vector_norm(x, axis=-1), xp.linalg.matrix_norm(x),
                xp.linalg.det(x), xp.linalg.inv(x), xp.linalg.svdvals(x), xp.linalg.cholesky(
                    xp.matmul(x, xp.linalg.matrix_transpose(x)) + 4 * xp.eye(4)),
                xp.linalg.trace(x), xp.linalg.diagonal(x), xp.linalg.slogdet(x).logabsdet,
                xp.linalg.solve(x, x), xp.linalg.pinv(x), xp.linalg.matrix_rank(x),
                xp.linalg.eigvalsh(xp.matmul(x, xp.linalg.matrix_transpose(x))),
                xp.linalg.qr(x).R, xp.linalg.svd(x).S, xp.linalg.tensordot(x[0, ...], x[1, ...], axes=2),
                xp.linalg.vecdot(x, x), xp.linalg.outer(x[0, 0, ...], x[0, 1, ...]),
                xp.linalg.cross(x[..., :3], x[..., 1:]), xp.linalg.matrix_power(x, 2))

    x = STACK[0]
    got = arrjit.jit(generic)(x)
    want = generic(xps.asarray(x))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-10)
    assert hasattr(anp, "linalg") and anp.linalg.solve is not np.linalg.solve
