"""complex64 and complex128 end to end: every ufunc NumPy defines for complex values over a
grid of special values (signed zeros, infinities, NaNs, huge and tiny parts), promotion with
real arrays and Python scalars, reductions, contractions, casts, sorting, the interpreter,
vmap, loops and donation, each against NumPy."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from arrjit.core.ir import BINARY, UNARY

from helpers import assert_same, numpy_or_none

COMPLEX = ["complex64", "complex128"]
# relative to the magnitude of NumPy's value (complex functions are not correctly rounded;
# NumPy's and numba's formulas differ in the last bits)
RTOL = {"complex64": 4e-6, "complex128": 4e-15}


def special_values(dtype):
    """Every pair of special parts as one complex array."""
    real = np.dtype(dtype).type(0).real.dtype
    big = 1e30 if real == np.float32 else 1e300
    parts = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, big, -big, np.inf, -np.inf, np.nan], real)
    re, im = np.meshgrid(parts, parts)
    out = np.empty(re.size, dtype)
    out.real, out.imag = re.ravel(), im.ravel()
    return out


def assert_complex_close(out, ref, rtol):
    """Same dtype and shape; per part, the same NaNs and infinities, and finite parts within
    ``rtol`` of the value's magnitude (a part that is 0 in NumPy may be 1e-17 here)."""
    out, ref = np.atleast_1d(out), np.atleast_1d(ref)
    assert out.dtype == ref.dtype and out.shape == ref.shape, (out.dtype, ref.dtype)
    if ref.dtype.kind != "c":
        return assert_same(out, ref, rtol=rtol)
    magnitude = np.where(np.isfinite(ref), np.abs(ref), 0).astype(np.float64)
    for part in ("real", "imag"):
        o, r = getattr(out, part), getattr(ref, part)
        bad = np.isnan(o) != np.isnan(r)
        bad |= np.isinf(r) & (o != r)
        finite = np.isfinite(r)
        with np.errstate(invalid="ignore"):
            bad |= finite & ~(np.abs(o.astype(np.float64) - r) <= rtol * magnitude
                              + np.finfo(r.dtype).tiny)
        assert not bad.any(), (part, list(zip(ref[bad.ravel()][:6], out[bad.ravel()][:6])))


def _supported(names, *args):
    out = []
    for name in sorted(names):
        ref = numpy_or_none(name, *args)
        if ref is not None:
            out.append(name)
    return out


@pytest.mark.parametrize("dtype", COMPLEX)
def test_every_unary_ufunc_matches_numpy_on_special_values(dtype):
    z = special_values(dtype)
    names = _supported([op.value for op in UNARY], z)
    assert {"exp", "log", "sqrt", "sin", "arctanh", "tanh", "conjugate", "sign"} <= set(names)
    for start in range(0, len(names), 12):    # a dozen outputs per kernel
        group = names[start:start + 12]
        outs = arrjit.jit(lambda z: tuple(getattr(anp, n)(z) for n in group))(z)
        for name, out in zip(group, outs):
            try:
                assert_complex_close(out, numpy_or_none(name, z), RTOL[dtype])
            except AssertionError as err:
                raise AssertionError(f"{name}: {err}") from None


@pytest.mark.parametrize("dtype", COMPLEX)
def test_every_binary_ufunc_matches_numpy_on_special_values(dtype):
    z = special_values(dtype)
    x, y = (a.ravel() for a in np.meshgrid(z, z))
    names = _supported([op.value for op in BINARY], x, y)
    assert {"add", "multiply", "true_divide", "power", "maximum", "less", "equal"} <= set(names)
    outs = arrjit.jit(lambda x, y: tuple(getattr(anp, n)(x, y) for n in names))(x, y)
    for name, out in zip(names, outs):
        ref = numpy_or_none(name, x, y)
        if name == "power":
            # exp(y log x) with a phase past 1/eps has no significant bits of angle: the signs
            # of its infinite parts are noise (in NumPy's as in any); which parts are
            # infinite or NaN must still agree
            with np.errstate(all="ignore"):
                phase = np.abs((y.astype(np.complex128) * np.log(x.astype(np.complex128))).imag)
            noise = phase * np.finfo(out.real.dtype).eps > 1
            for part in ("real", "imag"):
                o, r = getattr(out[noise], part), getattr(ref[noise], part)
                np.testing.assert_array_equal(np.isnan(o), np.isnan(r))
                np.testing.assert_array_equal(np.isinf(o), np.isinf(r))
            out, ref = out[~noise], ref[~noise]
        try:
            assert_complex_close(out, ref, RTOL[dtype])
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None


def test_division_by_zero_and_products_of_infinities_follow_numpy_exactly():
    z = np.array([1 + 0j, 0j, np.inf + 1j, 1 + 2j], np.complex128)
    w = np.array([0j, 0j, 0j, 3 - 4j], np.complex128)
    out = arrjit.jit(lambda a, b: (a / b, a * b, a * a))(z, w)
    with np.errstate(all="ignore"):
        for got, ref in zip(out, (z / w, z * w, z * z)):
            np.testing.assert_array_equal(got, ref)


def test_powers_with_small_integer_and_zero_exponents_match_numpy():
    z = np.array([0j, 1 + 2j, -3 + 0.5j, 1e-3 - 1e3j], np.complex128)
    f = arrjit.jit(lambda z: (z ** 0, z ** 1, z ** 2, z ** 3, z ** -1, z ** 0.5, z ** (1 + 1j)))
    with np.errstate(all="ignore"):
        refs = (z ** 0, z ** 1, z ** 2, z ** 3, z ** -1, z ** 0.5, z ** (1 + 1j))
        for got, ref in zip(f(z), refs):
            assert_complex_close(got, ref, 1e-14)


@pytest.mark.parametrize("other", ["float32", "float64", "int8", "int64", "uint16", "bool",
                                   "complex64", "complex128", 2, 2.5, 1j, True])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_promotion_is_numpys(dtype, other):
    z = special_values(dtype)[:24]
    y = np.arange(24).astype(other) if isinstance(other, str) else other
    out = arrjit.jit(lambda a, b: (a + b, b * a, a - b))(z, y)
    with np.errstate(all="ignore"):
        refs = (z + y, y * z, z - y)
    for got, ref in zip(out, refs):
        assert_complex_close(got, ref, RTOL[dtype])


def test_python_complex_scalars_promote_real_arrays_as_numpy_does():
    x32, x64, i8 = np.ones(3, np.float32), np.ones(3), np.ones(3, np.int8)
    out = arrjit.jit(lambda a, b, c: (a * 1j, b + 2j, c - 1j, a + (1 + 0j)))(x32, x64, i8)
    refs = (x32 * 1j, x64 + 2j, i8 - 1j, x32 + (1 + 0j))
    for got, ref in zip(out, refs):
        assert_same(got, ref)


def _reductions(xp, z):
    return (z.sum(), z.sum(axis=0), z.prod(axis=1), z.mean(), z.mean(axis=1, keepdims=True),
            z.var(), z.std(axis=0), xp.max(z), xp.min(z, axis=1), xp.argmax(z),
            xp.argmin(z, axis=0), xp.cumsum(z, axis=1), xp.any(z, axis=0), xp.all(z),
            xp.count_nonzero(z), xp.nansum(z), xp.nanmax(z, axis=1), xp.nanmean(z))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_reductions_match_numpy(dtype):
    rng = np.random.default_rng(1)
    z = (rng.standard_normal((6, 9)) + 1j * rng.standard_normal((6, 9))).astype(dtype)
    z[0, :3] = [1 + 1j, 1 - 1j, 1 + 1j]              # ties on the real part
    z[2, 4] = 0
    outs = arrjit.jit(lambda z: _reductions(anp, z))(z)
    for k, (got, ref) in enumerate(zip(outs, _reductions(np, z))):
        assert_complex_close(got, ref, 50 * RTOL[dtype]), k


def test_extremes_and_nan_aware_reductions_follow_numpy_with_nans():
    z = np.array([[1 + 1j, complex(np.nan, 1), 3 - 1j], [2j, 2 + 0j, complex(1, np.nan)]])
    outs = arrjit.jit(lambda z: _reductions(anp, z)[7:11] + _reductions(anp, z)[15:])(z)
    with np.errstate(invalid="ignore"):
        refs = _reductions(np, z)[7:11] + _reductions(np, z)[15:]
    for got, ref in zip(outs, refs):
        assert_complex_close(got, ref, 1e-15)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_contractions_match_numpy(dtype):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))).astype(dtype)
    b = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(dtype)
    v = (rng.standard_normal(4) - 2j * rng.standard_normal(4)).astype(dtype)

    def f(xp, a, b, v):
        return (a @ b, xp.dot(a, v), xp.vdot(v, v[::-1]), xp.matmul(v, b), xp.outer(v, v),
                xp.vecdot(a, v), xp.tensordot(a, b, axes=1), xp.einsum("ij,j->i", a, v))

    outs = arrjit.jit(lambda a, b, v: f(anp, a, b, v))(a, b, v)
    for got, ref in zip(outs, f(np, a, b, v)):
        assert_complex_close(got, ref, 50 * RTOL[dtype])


def test_vecdot_conjugates_its_first_argument_as_the_standard_says():
    x = np.array([1 + 2j, 3 - 1j])
    assert arrjit.jit(anp.vecdot)(x, x) == np.vecdot(x, x) == 15


def test_parts_angle_magnitude_and_casts_match_numpy():
    z = special_values("complex128")

    def f(xp, z):
        return (xp.real(z), xp.imag(z), z.real, z.imag, xp.conj(z), xp.abs(z),
                xp.angle(z), xp.angle(z, deg=True), z.astype(np.complex64),
                z.astype(np.float64), z.astype(bool), xp.isnan(z), xp.isinf(z),
                xp.isfinite(z), xp.nan_to_num(z), xp.real(z.real), xp.imag(xp.ones(3)))

    outs = arrjit.jit(lambda z: f(anp, z))(z)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            refs = f(np, z)
    for got, ref in zip(outs, refs):
        assert_complex_close(got, ref, 1e-15)


def test_nan_to_num_keeps_signed_zero_parts():
    z = np.array([complex(-0.0, np.nan), complex(np.inf, -0.0)])
    out = arrjit.jit(anp.nan_to_num)(z)
    ref = np.nan_to_num(z)
    np.testing.assert_array_equal(np.signbit(out.real), np.signbit(ref.real))
    np.testing.assert_array_equal(np.signbit(out.imag), np.signbit(ref.imag))
    np.testing.assert_array_equal(out, ref)


def test_sorting_is_lexicographic_with_nans_last_as_in_numpy():
    z = np.array([2 + 1j, complex(np.nan, 0), 1 + 5j, 2 - 1j, complex(1, np.nan), -1 + 0j, 1 + 5j])
    out = arrjit.jit(lambda z: (anp.sort(z), anp.argsort(z), anp.sort(z, descending=True)))(z)
    np.testing.assert_array_equal(out[0], np.sort(z))
    np.testing.assert_array_equal(out[1], np.argsort(z, kind="stable"))
    np.testing.assert_array_equal(out[2][2:], np.sort(z)[::-1][2:])


def test_constructors_and_fills_take_complex_values():
    z = np.ones(3, np.complex64)
    outs = arrjit.jit(lambda z: (anp.full(3, 1 + 2j), anp.zeros_like(z) + 1j,
                                 anp.asarray([1j, 2]) * z[:2], anp.where(z.real > 0, z, 2j),
                                 anp.linspace(0, 1 + 1j, 4)))(z)
    refs = (np.full(3, 1 + 2j), np.zeros_like(z) + 1j, np.asarray([1j, 2]) * z[:2],
            np.where(z.real > 0, z, 2j), np.linspace(0, 1 + 1j, 4))
    for got, ref in zip(outs, refs):
        assert_same(got, ref)


def test_the_interpreter_agrees_with_the_compiler():
    z = special_values("complex128")
    f = arrjit.jit(lambda z: (anp.exp(z) * z - anp.conj(z) / 3, anp.abs(z).sum(),
                              anp.sort(z), z.astype(np.float32), anp.nan_to_num(z)))
    compiled = f(z)
    arrjit.config.update("disable_jit", True)
    try:
        interpreted = f(z)
    finally:
        arrjit.config.update("disable_jit", False)
    for got, ref in zip(compiled, interpreted):
        assert_complex_close(got, ref, 1e-15)


def test_vmap_loops_and_donation_carry_complex_values():
    z = np.array([[1 + 1j, 2 - 1j], [0.5j, -1 + 0j]])
    rotate = arrjit.jit(lambda z: lax.fori_loop(0, 4, lambda i, v: v * 1j, z))
    assert_same(rotate(z), z * 1j * 1j * 1j * 1j)
    norms = arrjit.jit(arrjit.vmap(lambda row: (row * anp.conj(row)).real.sum()))(z)
    assert_same(norms, (z * z.conj()).real.sum(axis=1))
    step = arrjit.jit(lambda z: z * (1 - 1j), donate_argnums=(0,))
    buffer = z.copy()
    out = step(buffer)
    assert_same(out, z * (1 - 1j))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_abs_of_complex_arrays_is_numpy_s_bit_for_bit(dtype):
    """NumPy's array loop (not the C library's hypot, which it uses for scalars): the ratio
    form with one FMA, an infinite part winning over NaN. It also vectorises."""
    rng = np.random.default_rng(3)
    scale = 10.0 ** rng.integers(-30, 30, (2, 5000))
    z = (rng.standard_normal(5000) * scale[0] + 1j * rng.standard_normal(5000) * scale[1])
    z = z.astype(dtype)
    z[:9] = [np.nan, np.inf, complex(np.inf, np.nan), complex(np.nan, -np.inf), 0,
             complex(0, -0.0), complex(3e38, 3e38), complex(-np.inf, 3), complex(2, np.nan)]
    got = arrjit.jit(lambda z: anp.abs(z))(z)
    want = np.abs(z)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
