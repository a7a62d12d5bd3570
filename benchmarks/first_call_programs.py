"""Realistic programs for the cold first call: each written once against a library adaptor
(``lib.np``, ``lib.grad``, ``lib.fori_loop``, ``lib.scan``) and run under ``lib.jit`` on
arrjit and on JAX, each in a fresh process with an empty compile cache.

``python benchmarks/first_call_programs.py [--repeats N] [NAME ...]`` prints, per program, the
median first call of arrjit and of JAX after each library's start-up (as ``python -m arrjit
bench --first-call`` defines it: imports, then numba's target and LLVM, or XLA's CPU client;
its median is printed at the end), their ratio, and the median and worst ratios over the set.
``OPENBLAS_NUM_THREADS=1``.

The figure is a new program's first call on an installation that has run arrjit before: the
program's kernels are cold, while arrjit's own modules that every program shares are compiled
once per installation and warm, as they are for a user's second program. The math library
lives in numba's cache beside the package; the helper threads' functions live in arrjit's
cache, so each fresh cache is first given them by a process that loads only those
(``PRIME_ARRJIT``).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import numpy as np


def lorenz_rk4(lib, y):
    """30 unrolled RK4 steps of a 3-variable ODE, the state stacked from scalars."""
    xp, h = lib.np, 0.01

    def rate(s):
        x, v, z = s[0], s[1], s[2]
        return xp.array([10.0 * (v - x), x * (28.0 - z) - v, x * v - 8.0 / 3.0 * z])

    for _ in range(30):
        k1 = rate(y)
        k2 = rate(y + h / 2 * k1)
        k3 = rate(y + h / 2 * k2)
        k4 = rate(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def trig_series(lib, x):
    """A 150-term elementwise series of powers and sines."""
    acc = 0.0 * x
    for k in range(150):
        acc = acc + ((k % 7) - 3.0) / (k + 1) * x ** (k % 5) * lib.np.sin(x * (k % 3))
    return acc


def state_equation(lib, t, p):
    """A 150-term polynomial in temperature and pressure, one expression."""
    acc = 0.0 * t
    for k in range(150):
        acc = acc + (0.5 + k / 300.0) * t ** (k % 4) * p ** (k % 3)
    return acc


def attention(lib, q, k, v):
    xp = lib.np
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = xp.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)) @ v


def mlp_gradient(lib, w1, w2, x, y):
    xp = lib.np

    def loss(w1, w2):
        hidden = xp.tanh(x @ w1)
        return xp.mean((hidden @ w2 - y) ** 2)

    return lib.grad(loss, argnums=(0, 1))(w1, w2)


def transformer_mlp(lib, x, w1, w2, gain):
    xp = lib.np
    mean = x.mean(axis=1, keepdims=True)
    normed = (x - mean) / xp.sqrt(x.var(axis=1, keepdims=True) + 1e-5) * gain
    h = normed @ w1
    gelu = 0.5 * h * (1 + xp.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
    return x + gelu @ w2


def transformer_stack(lib, x, weights):
    """Four pre-norm transformer blocks (single-head attention, a GELU MLP), each layer with
    weights of its own."""
    xp = lib.np
    for wq, wk, wv, w1, w2 in weights:
        h = (x - x.mean(axis=1, keepdims=True)) / xp.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
        scores = (h @ wq) @ (h @ wk).T / np.sqrt(wq.shape[1])
        att = xp.exp(scores - scores.max(axis=1, keepdims=True))
        x = x + (att / att.sum(axis=1, keepdims=True)) @ (h @ wv)
        h = (x - x.mean(axis=1, keepdims=True)) / xp.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
        u = h @ w1
        x = x + (0.5 * u * (1 + xp.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))) @ w2
    return x


def heat_steps(lib, u):
    """Eight unrolled explicit steps of the 2-D heat equation on the interior."""
    for _ in range(8):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        u = lib.np.pad(u[1:-1, 1:-1] + 0.1 * lap, 1)
    return u


def jacobi_solver(lib, u, f):
    """200 Jacobi sweeps of a 1-D Poisson problem in a ``fori_loop``."""
    xp = lib.np

    def sweep(i, u):
        inner = 0.5 * (u[:-2] + u[2:] + f[1:-1] * 1e-4)
        return xp.concatenate([u[:1], inner, u[-1:]])

    return lib.fori_loop(0, 200, sweep, u)


def logistic_descent(lib, x, y):
    """Twenty gradient-descent steps of logistic regression in a ``fori_loop``."""
    xp = lib.np

    def step(i, w):
        p = 1 / (1 + xp.exp(-(x @ w)))
        return w - 0.1 * x.T @ (p - y) / x.shape[0]

    return lib.fori_loop(0, 20, step, xp.zeros(x.shape[1]))


def kmeans_step(lib, points, centres):
    xp = lib.np
    d = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    nearest = xp.argmin(d, axis=1)
    onehot = (nearest[:, None] == xp.arange(centres.shape[0])[None, :]).astype(points.dtype)
    return (onehot.T @ points) / xp.maximum(onehot.sum(axis=0), 1)[:, None]


def option_prices(lib, s, k, t):
    """Black-Scholes calls and puts."""
    xp, r, vol = lib.np, 0.02, 0.3
    d1 = (xp.log(s / k) + (r + 0.5 * vol * vol) * t) / (vol * xp.sqrt(t))
    d2 = d1 - vol * xp.sqrt(t)
    cdf = lambda z: 0.5 * (1 + lib.erf(z / np.sqrt(2)))  # noqa: E731
    call = s * cdf(d1) - k * xp.exp(-r * t) * cdf(d2)
    return call, call - s + k * xp.exp(-r * t)


def rbf_kernel(lib, a, b):
    xp = lib.np
    sq = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2 * a @ b.T
    return xp.exp(-0.5 * xp.maximum(sq, 0.0))


def moving_average(lib, x):
    """An exponential moving average as a ``scan`` over rows."""
    def step(carry, row):
        carry = 0.9 * carry + 0.1 * row
        return carry, carry

    return lib.scan(step, x[0], x)[1]


def cross_entropy(lib, logits, labels):
    xp = lib.np
    top = logits.max(axis=1, keepdims=True)
    logz = top[:, 0] + xp.log(xp.exp(logits - top).sum(axis=1))
    picked = xp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return xp.mean(logz - picked)


def escape_counts(lib, cr, ci):
    """Thirty unrolled escape-time steps in real arithmetic."""
    xp = lib.np
    zr, zi, n = 0.0 * cr, 0.0 * ci, xp.zeros(cr.shape)
    for _ in range(30):
        inside = zr * zr + zi * zi < 4.0
        zr, zi = (xp.where(inside, zr * zr - zi * zi + cr, zr),
                  xp.where(inside, 2 * zr * zi + ci, zi))
        n = n + inside
    return n


def cosine_similarity(lib, a):
    xp = lib.np
    unit = a / xp.sqrt((a * a).sum(axis=1, keepdims=True))
    return unit @ unit.T


def wave_steps(lib, u, before):
    """Ten unrolled leapfrog steps of the 1-D wave equation with fixed ends."""
    xp = lib.np
    for _ in range(10):
        inner = 2 * u[1:-1] - before[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u, before = xp.concatenate([u[:1], inner, u[-1:]]), u
    return u


def _data():
    rng = np.random.default_rng(0)
    r = rng.standard_normal
    return {
        "lorenz_rk4": (lorenz_rk4, (np.array([1.0, 1.0, 1.0]),)),
        "trig_series": (trig_series, (np.linspace(0, 1, 10_000),)),
        "state_equation": (state_equation, (np.linspace(0, 1, 100_000),
                                             np.linspace(1, 2, 100_000))),
        "attention": (attention, (r((128, 64)), r((128, 64)), r((128, 64)))),
        "mlp_gradient": (mlp_gradient, (r((32, 64)) * 0.1, r((64, 1)) * 0.1, r((256, 32)),
                                        r((256, 1)))),
        "transformer_mlp": (transformer_mlp, (r((128, 64)), r((64, 256)) * 0.1,
                                              r((256, 64)) * 0.1, r(64))),
        "transformer_stack": (transformer_stack, (r((64, 32)), [
            tuple(r(shape) * 0.2 for shape in [(32, 32)] * 3 + [(32, 128), (128, 32)])
            for _ in range(4)])),
        "heat_steps": (heat_steps, (r((256, 256)),)),
        "jacobi_solver": (jacobi_solver, (np.zeros(1000), r(1000))),
        "logistic_descent": (logistic_descent, (r((500, 16)),
                                                (r(500) > 0).astype(np.float64))),
        "kmeans_step": (kmeans_step, (r((2000, 8)), r((16, 8)))),
        "option_prices": (option_prices, (np.linspace(50, 150, 100_000), np.full(100_000, 100.0),
                                          np.linspace(0.1, 2, 100_000))),
        "rbf_kernel": (rbf_kernel, (r((300, 16)), r((200, 16)))),
        "moving_average": (moving_average, (r((500, 64)),)),
        "cross_entropy": (cross_entropy, (r((1000, 32)), rng.integers(0, 32, 1000))),
        "escape_counts": (escape_counts, (np.linspace(-2, 1, 100_000),
                                          np.linspace(-1, 1, 100_000))),
        "cosine_similarity": (cosine_similarity, (r((400, 32)),)),
        "wave_steps": (wave_steps, (np.sin(np.linspace(0, 3, 2000)),
                                    np.sin(np.linspace(0, 3, 2000)))),
    }


PROGRAMS = tuple(_data())


def library(name: str) -> SimpleNamespace:
    """The adaptor for ``name`` ("arrjit" or "jax"), imported and started."""
    if name == "arrjit":
        from numba import njit

        import arrjit
        import arrjit.backends.cpu.mathlib  # noqa: F401
        import arrjit.numpy as anp
        from arrjit.runtime.compile import prepare_numba
        from arrjit.scipy.special import erf
        prepare_numba()                    # as arrjit starts numba
        njit(lambda: 0)()                  # numba's start-up: its target and LLVM
        return SimpleNamespace(np=anp, jit=arrjit.jit, grad=arrjit.grad, erf=erf,
                               fori_loop=arrjit.lax.fori_loop, scan=arrjit.lax.scan,
                               ready=lambda out: out)
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import erf
    jax.config.update("jax_enable_x64", True)
    jax.devices()
    return SimpleNamespace(np=jnp, jit=jax.jit, grad=jax.grad, erf=erf,
                           fori_loop=jax.lax.fori_loop, scan=jax.lax.scan,
                           ready=jax.block_until_ready)


def first_call(name: str, lib_name: str) -> tuple[float, float]:
    """Seconds of ``name``'s first call under ``lib_name``'s jit in this process, and of
    the library's start-up before it."""
    import time

    t0 = time.perf_counter()
    lib = library(lib_name)
    startup = time.perf_counter() - t0
    fn, args = _data()[name]
    jitted = lib.jit(lambda *a: fn(lib, *a))
    t0 = time.perf_counter()
    lib.ready(jitted(*args))
    return time.perf_counter() - t0, startup


# what every program's first call shares, compiled into arrjit's cache once per installation
PRIME_ARRJIT = "from arrjit.backends.cpu import threads; threads.native_functions()"


def in_fresh_process(name: str, lib_name: str) -> tuple[float, float]:
    """``first_call`` in a new interpreter with a fresh arrjit cache (holding only what
    ``PRIME_ARRJIT`` puts there)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               ARRJIT_CACHE_DIR=tempfile.mkdtemp(prefix="arrjit-first-call-"))
    env.setdefault("JAX_PLATFORMS", "cpu")
    if lib_name == "arrjit":
        subprocess.run([sys.executable, "-c", PRIME_ARRJIT], check=True, env=env)
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import first_call_programs as p; print(*p.first_call({name!r}, {lib_name!r}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout
    first, startup = map(float, out.split()[-2:])
    return first, startup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("names", nargs="*", default=list(PROGRAMS))
    opts = parser.parse_args()
    ratios: list[float] = []
    startups: dict[str, list[float]] = {"arrjit": [], "jax": []}

    def median_first_call(name: str, lib_name: str) -> float:
        runs = [in_fresh_process(name, lib_name) for _ in range(opts.repeats)]
        startups[lib_name] += [startup for _, startup in runs]
        return statistics.median(first for first, _ in runs)

    print(f"{'program':18s} {'arrjit':>9s} {'JAX':>9s} {'arrjit/JAX':>11s}")
    for name in opts.names:
        ours = median_first_call(name, "arrjit")
        try:
            theirs = median_first_call(name, "jax")
        except subprocess.CalledProcessError:
            print(f"{name:18s} {ours:8.2f}s {'-':>9s}")
            continue
        ratios.append(ours / theirs)
        print(f"{name:18s} {ours:8.2f}s {theirs:8.2f}s {ours / theirs:10.2f}x", flush=True)
    if ratios:
        print(f"median arrjit/JAX {statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x "
              f"over {len(ratios)} programs")
    print("start-up (not in the figures above): " + ", ".join(
        f"{lib} {statistics.median(times):.2f}s" for lib, times in startups.items() if times))


if __name__ == "__main__":
    main()
