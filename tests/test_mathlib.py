"""The vectorisable math library against NumPy: ULP error over each function's domain (dense
uniform and log-uniform sampling plus edge regions), special values bit for bit, and proof
that a loop calling each function vectorises."""
import numpy as np
import pytest
from numba import njit, types

import arrjit
import arrjit.numpy as anp
from arrjit.backends.cpu import mathlib as M

# name -> (NumPy function, domain low, domain high, ULP bound)
UNARY = {
    "exp": (np.exp, -800.0, 800.0, 3),
    "expm1_": (np.expm1, -800.0, 800.0, 2),
    "log": (np.log, 0.0, np.inf, 2),
    "log1p": (np.log1p, -1.0, np.inf, 2),
    "log2_": (np.log2, 0.0, np.inf, 3),
    "log10_": (np.log10, 0.0, np.inf, 3),
    "tanh": (np.tanh, -30.0, 30.0, 3),
    "sinh": (np.sinh, -720.0, 720.0, 2),
    "cosh": (np.cosh, -720.0, 720.0, 3),
    "arctan": (np.arctan, -np.inf, np.inf, 1),
    "sin": (np.sin, -1e7, 1e7, 1),
    "cos": (np.cos, -1e7, 1e7, 1),
    "tan": (np.tan, -1e7, 1e7, 3),
}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, 10.0, 100.0, 5e-324,
            -5e-324, 1e-310, 2.2250738585072014e-308, 1.401298464324817e-45, 1.1754943508e-38,
            3.4028234663852886e38, 1.7976931348623157e308, 88.72283935546875, 88.8, -87.3,
            -103.9, -104.0, 709.782712893384, 709.79, 710.4758600739439, -745.1332191019411,
            -745.2, 22.0, 9.0, 1e-8, 1e-20, np.pi, np.pi / 2, np.pi / 4, 1647098.0, 1647100.0,
            1e300, -1e300]


def ulps(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place; NaN vs NaN is 0, NaN vs number is huge."""
    itype = np.int64 if ours.dtype == np.float64 else np.int32
    lowest = np.iinfo(itype).min

    def ordered(a):
        i = a.view(itype).astype(np.int64)
        return np.where(i < 0, lowest - i, i)
    d = np.abs(ordered(ours) - ordered(ref))
    d = np.where(np.isnan(ours) & np.isnan(ref), 0, d)
    return np.where(np.isnan(ours) != np.isnan(ref), 1 << 60, d)


def sample(dtype, lo: float, hi: float, n: int = 200_000) -> np.ndarray:
    rng = np.random.default_rng(7)
    info = np.finfo(dtype)
    top = float(min(max(abs(lo), abs(hi)), info.max))
    half = float(info.max) / 2   # numpy's uniform needs hi - lo to be finite
    uniform = rng.uniform(max(lo, -half), min(hi, half), n)
    tiny = float(info.smallest_subnormal)
    magnitudes = np.exp(rng.uniform(np.log(tiny), np.log(top), n))
    signed = magnitudes * rng.choice([-1.0, 1.0], n)
    near_one = 1.0 + rng.uniform(-1e-3, 1e-3, n // 10)
    with np.errstate(over="ignore"):
        values = np.concatenate([uniform, signed, near_one, SPECIALS]).astype(dtype)
    keep = ((values >= lo) & (values <= hi)) | ~np.isfinite(values)
    return np.concatenate([values[keep], np.asarray(SPECIALS, dtype)])


def _loop(fn):
    @njit(error_model="numpy")
    def apply(a, out):
        for i in range(a.size):
            out[i] = fn(a[i])
    return apply


def _loop2(fn):
    @njit(error_model="numpy")
    def apply(a, b, out):
        for i in range(a.size):
            out[i] = fn(a[i], b[i])
    return apply


def _specials_identical(ours, ref, x):
    special = ~np.isfinite(ref) | (ref == 0) | ~np.isfinite(x) | (x == 0)
    same = (ours[special].view(ours.dtype.str.replace("f", "u")) ==
            ref[special].view(ref.dtype.str.replace("f", "u"))) | (
        np.isnan(ours[special]) & np.isnan(ref[special]))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, [(x[special][k], ours[special][k], ref[special][k]) for k in bad[:5]]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_accuracy_and_special_values(name, dtype):
    ref_fn, lo, hi, bound = UNARY[name]
    fn = getattr(M, name + ("64" if dtype == np.float64 else "32"))
    x = sample(dtype, lo, hi)
    ours = np.empty_like(x)
    _loop(fn)(x, ours)
    with np.errstate(all="ignore"):
        ref = ref_fn(x)
    d = ulps(ours, ref)
    worst = int(np.argmax(d))
    assert d[worst] <= bound, (x[worst], ours[worst], ref[worst], d[worst])
    _specials_identical(ours, ref, x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_unary_outside_domain_matches_numpy(dtype):
    """Arguments outside a function's domain give NumPy's answer (NaN, -inf, inf)."""
    x = np.asarray([-1.0, -np.inf, -1e-300, -2.0, -1.0000001, np.nan], dtype)
    for name in ("log", "log1p", "log2_", "log10_"):
        fn = getattr(M, name + ("64" if dtype == np.float64 else "32"))
        ours = np.empty_like(x)
        _loop(fn)(x, ours)
        with np.errstate(all="ignore"):
            ref = UNARY[name][0](x)
        _specials_identical(ours, ref, x)
        assert (ulps(ours, ref) == 0).all(), (name, ours, ref)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_arctan2_all_quadrants_and_special_values(dtype):
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000),
                             SPECIALS, np.negative(SPECIALS)])
    y, x = np.meshgrid(values[::97], values[::89])
    y = np.concatenate([y.ravel(), rng.standard_normal(100_000)]).astype(dtype)
    x = np.concatenate([x.ravel(), rng.standard_normal(100_000)]).astype(dtype)
    fn = M.arctan2_64 if dtype == np.float64 else M.arctan2_32
    ours = np.empty_like(x)
    _loop2(fn)(y, x, ours)
    ref = np.arctan2(y, x)
    d = ulps(ours, ref)
    worst = int(np.argmax(d))
    assert d[worst] <= 3, (y[worst], x[worst], ours[worst], ref[worst])
    _specials_identical(ours, ref, x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_power_matches_numpy_including_c99_special_cases(dtype):
    rng = np.random.default_rng(5)
    base = np.concatenate([rng.uniform(0, 10, 50_000), rng.uniform(-10, 0, 5_000),
                           np.exp(rng.uniform(-700, 700, 20_000)),
                           1.0 + rng.uniform(-1e-6, 1e-6, 10_000),
                           [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5]])
    expo = np.concatenate([rng.uniform(-300, 300, 50_000), rng.integers(-20, 20, 5_000),
                           rng.uniform(-1.01, 1.01, 20_000), rng.uniform(-1e8, 1e8, 10_000),
                           [0.0, -0.0, 3.0, -3.0, 2.0, -2.0, 0.5, -0.5, np.inf, -np.inf,
                            np.nan]])
    xb, yb = np.meshgrid(base[-10:], expo[-11:])
    with np.errstate(over="ignore"):
        x = np.concatenate([base[:-10], xb.ravel()]).astype(dtype)
        y = np.concatenate([expo[:-11], yb.ravel()]).astype(dtype)
    ours = np.empty_like(x)
    _kernel_like_loop("power64" if dtype == np.float64 else "power32", 2)(ours, x, y)
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    d = ulps(ours, ref)
    worst = int(np.argmax(d))
    assert d[worst] <= 1, (x[worst], y[worst], ours[worst], ref[worst])
    _specials_identical(ours, ref, x)
    # exponents so large that the product's low part is huge too (it gave -inf for 0)
    xb, yb = np.meshgrid([2.0, 0.5, 1.5, 1e-300, 1e300, -2.0, -0.5, 0.999],
                         [1e300, -1e300, 1e20, -1e20, 2.0 ** 60, -(2.0 ** 60), 1e308])
    x, y = xb.ravel().astype(dtype), yb.ravel().astype(dtype)
    ours = np.empty_like(x)
    _kernel_like_loop("power64" if dtype == np.float64 else "power32", 2)(ours, x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ours, np.power(x, y))


def _kernel_like_loop(name: str, arity: int):
    """A loop calling ``_M.<name>`` by module attribute, as generated kernels do (numba then
    inlines the functions marked ``inline="always"``)."""
    namespace = {"_M": M, "njit": njit}
    args = ", ".join(f"x{k}[i]" for k in range(arity))
    exec(f"@njit(error_model='numpy')\ndef apply(out, x0, x1):\n"
         f"    for i in range(out.size):\n        out[i] = _M.{name}({args})\n", namespace)
    return namespace["apply"]


VECTORISED = [(n + suffix, 1) for n, v in UNARY.items() for suffix in ("64", "32")] + [
    ("arctan2_64", 2), ("arctan2_32", 2), ("power64", 2), ("power32", 2)]


@pytest.mark.parametrize("name,arity", VECTORISED)
def test_loops_calling_the_math_library_vectorise(name, arity):
    dtype = np.float32 if name.endswith("32") else np.float64
    apply = _kernel_like_loop(name, arity)
    x = np.ones(16, dtype)
    apply(np.empty_like(x), x, x)
    ir = apply.inspect_llvm(apply.signatures[0])
    element = "double" if dtype == np.float64 else "float"
    assert f"x {element}>" in ir, f"{name}: no vector instructions"


def test_jitted_code_uses_the_math_library_and_matches_numpy():
    def f(a, b, c):
        return (anp.exp(-a * a) * anp.tanh(b) + anp.sqrt(c), anp.log2(c), anp.log10(c),
                anp.arctan2(a, b - 0.5), a ** b)
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        a, b, c = (rng.random(1000).astype(dtype) for _ in range(3))
        source = arrjit.jit(f).lower(a, b, c).as_text()
        assert "_M.exp" in source and "_M.tanh" in source and "_M.log2_" in source
        expected = (np.exp(-a * a) * np.tanh(b) + np.sqrt(c), np.log2(c), np.log10(c),
                    np.arctan2(a, b - 0.5), a ** b)
        for ours, ref in zip(arrjit.jit(f)(a, b, c), expected):
            assert ours.dtype == ref.dtype
            assert ulps(ours, ref).max() <= 4


def test_the_large_functions_are_linked_and_inlined_by_llvm_not_by_numba():
    """sin64 (forceinline: LLVM's alwaysinline) is compiled once as a function of its own and
    inlined by LLVM; numba's IR inlining typed and lowered its body again in every kernel
    (a kernel with sin compiled in 330 ms instead of 68). The loop still vectorises
    (``test_loops_calling_the_math_library_vectorise``)."""
    x = np.linspace(-3.0, 3.0, 11)
    out = arrjit.jit(lambda x: anp.sin(x) * 2.5)(x)
    assert ulps(out, np.sin(x) * 2.5).max() <= 2
    assert M.sin64.targetoptions.get("forceinline")
    assert (types.float64,) in M.sin64.overloads
