"""Shared test helpers: edge-case samples and NumPy comparisons."""

import numpy as np

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float32", "float64"]


def sample(dtype, n=23, seed=0):
    """Values that exercise edges: extremes and zero for integers, nan/inf/-0.0 for floats."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dt)
        vals[:3] = [info.min, info.max, 0]
        return vals
    vals = (rng.standard_normal(n) * 3).astype(dt)
    vals[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    return vals


def assert_same(out, ref, rtol=None, atol=0.0):
    """Equal dtype and shape; values equal (integers, bools) or close (floats), nan == nan."""
    out = np.asarray(out)
    ref = np.asarray(ref)
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    if ref.dtype.kind == "f":
        tol = rtol if rtol is not None else (3e-7 if ref.dtype == np.float32 else 1e-15)
        np.testing.assert_allclose(out, ref, rtol=tol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, ref)


def numpy_or_none(name, *args):
    """NumPy's ``name(*args)``, or None where NumPy rejects the operands or computes in
    float16 (which arrjit refuses)."""
    try:
        with np.errstate(all="ignore"):
            out = getattr(np, name)(*args)
    except (TypeError, ValueError):
        return None
    return None if out.dtype == np.float16 else out


def point_sweep(u, source):
    """One point-by-point Gauss-Seidel sweep of a 2-D grid in JAX's style: nested
    ``fori_loop``s, each step reading four neighbours at traced positions and setting one."""
    from arrjit import lax

    def row(i, u):
        def point(j, u):
            near = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
            return u.at[i, j].set(0.25 * (near - source[i, j]))
        return lax.fori_loop(1, u.shape[1] - 1, point, u)
    return lax.fori_loop(1, u.shape[0] - 1, row, u)


def numpy_point_sweep(u, source):
    """``point_sweep`` as NumPy loops on a copy of ``u``."""
    out = np.array(u)
    for i in range(1, out.shape[0] - 1):
        for j in range(1, out.shape[1] - 1):
            out[i, j] = 0.25 * (out[i - 1, j] + out[i + 1, j] + out[i, j - 1] + out[i, j + 1]
                                - source[i, j])
    return out
