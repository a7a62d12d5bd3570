"""A 2-D heat equation: a 5-point stencil iterated inside ``lax.fori_loop``.

The loop runs natively (no Python per step); the same computation in NumPy is the reference.

    python examples/heat_stencil.py
"""
import time

import numpy as np

import arrjit
from arrjit import lax


def stencil_step(u, rate):
    """One explicit step with fixed (zero) edges."""
    centre = u[1:-1, 1:-1]
    laplacian = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * centre
    return u.at[1:-1, 1:-1].set(centre + rate * laplacian)


@arrjit.jit(static_argnames=("steps",))
def diffuse(u, rate, steps):
    return lax.fori_loop(0, steps, lambda _, u: stencil_step(u, rate), u)


def diffuse_numpy(u, rate, steps):
    u = u.copy()
    for _ in range(steps):
        centre = u[1:-1, 1:-1]
        laplacian = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * centre
        u[1:-1, 1:-1] = centre + rate * laplacian
    return u


def main(n: int = 200, steps: int = 500) -> None:
    u = np.zeros((n, n))
    u[n // 2 - 5:n // 2 + 5, n // 2 - 5:n // 2 + 5] = 100.0
    diffuse(u, 0.2, steps)                           # compile
    t0 = time.perf_counter()
    got = diffuse(u, 0.2, steps)
    t_arrjit = time.perf_counter() - t0
    t0 = time.perf_counter()
    want = diffuse_numpy(u, 0.2, steps)
    t_numpy = time.perf_counter() - t0
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    print(f"{steps} steps on {n}x{n}: arrjit {t_arrjit * 1e3:.1f} ms, "
          f"NumPy {t_numpy * 1e3:.1f} ms; heat kept: {got.sum():.1f} of {u.sum():.1f}")


if __name__ == "__main__":
    main()
