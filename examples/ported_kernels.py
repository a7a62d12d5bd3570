"""The 32 kernels of the public numpy-benchmarks suite, ported to arrjit by hand.

Each port is written once against a namespace ``xp`` (``numpy``, ``arrjit.numpy`` or
``jax.numpy``) and keeps the algorithm of the program it ports. The only changes are the ones
JAX's model asks for, and each is named in the kernel's ``changes``:

- an in-place write ``x[i] = v`` becomes ``x = put(xp, x, i, v)`` (``x.at[i].set(v)`` for a
  traced namespace, the in-place write itself for NumPy, so NumPy's figure is its own);
- a write through a boolean mask becomes ``where``;
- Python ``if``/``max``/``assert`` on a value becomes ``where``/``maximum``/nothing;
- a Python loop over the rows of the data (hundreds to thousands of iterations) becomes
  ``fori_loop``; loops over a static count of time steps stay Python loops (they unroll).

``KERNELS`` maps a name to its port, the arguments of the benchmark's size, smaller arguments
for the tests, and the names of its static arguments. Run ``python benchmarks/bench_ported.py``
for the table of runs / correct / compile / NumPy / JAX.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


def put(xp, x, index, value):
    """``x[index] = value``: in place for NumPy, ``x.at[index].set(value)`` otherwise."""
    if xp is np:
        x[index] = value
        return x
    return x.at[index].set(value)


def add_at(xp, x, index, value):
    """``x[index] += value``: in place for NumPy, ``x.at[index].add(value)`` otherwise."""
    if xp is np:
        x[index] += value
        return x
    return x.at[index].add(value)


def fori_loop(xp, lower, upper, body, init):
    """``lax.fori_loop`` of the namespace's library (a Python loop for NumPy)."""
    if xp is np:
        value = init
        for i in range(lower, upper):
            value = body(i, value)
        return value
    return _lax_of(xp).fori_loop(lower, upper, body, init)


def _lax_of(xp):
    if xp.__name__.startswith("arrjit"):
        from arrjit import lax
        return lax
    from jax import lax
    return lax


@dataclass(frozen=True)
class Kernel:
    """One ported program: ``fn(xp, *args)``, its arguments at the benchmark's size and at a
    test size, and the positions of its static (Python-value) arguments."""

    fn: Callable[..., Any]
    make_args: Callable[[], tuple]
    make_small_args: Callable[[], tuple]
    static: tuple[int, ...] = ()
    changes: str = "none"
    mutates: bool = field(default=False)


KERNELS: dict[str, Kernel] = {}


def kernel(make_args, make_small_args=None, static=(), changes="none", mutates=False):
    def register(fn):
        KERNELS[fn.__name__] = Kernel(fn, make_args, make_small_args or make_args,
                                      tuple(static), changes, mutates)
        return fn
    return register


def _rng():
    return np.random.RandomState(0)


# --- the kernels, in the suite's alphabetical order --------------------------------------

def _arc_args(n):
    r = _rng()
    return tuple(r.randn(n) for _ in range(4))


@kernel(lambda: _arc_args(10_000), lambda: _arc_args(100))
def arc_distance(xp, theta_1, phi_1, theta_2, phi_2):
    temp = xp.sin((theta_2 - theta_1) / 2) ** 2 \
        + xp.cos(theta_1) * xp.cos(theta_2) * xp.sin((phi_2 - phi_1) / 2) ** 2
    return 2 * xp.arctan2(xp.sqrt(temp), xp.sqrt(1 - temp))


def _mask_args(n):
    return (np.array(_rng().randint(2, size=(n, 4)), dtype=bool),)


@kernel(lambda: _mask_args(1000), lambda: _mask_args(20),
        changes="row loop -> fori_loop; `if` on values -> where")
def check_mask(xp, db, mask=(1, 0, 1)):
    def row(idx, out):
        line = db[idx]
        target, vector = line[0], line[1:]
        hit = (xp.asarray(mask) == xp.bitwise_and(xp.asarray(mask), vector)).all() \
            & (target == 1)
        return put(xp, out, idx, xp.where(hit, True, out[idx]))
    return fori_loop(xp, 0, db.shape[0], row, xp.zeros(db.shape[0], dtype=bool))


def _cma_args(length):
    s3 = np.ones((2, 3 * length), dtype=np.complex128)
    wxy0 = np.zeros((2, 2, 21), dtype=np.complex128)
    wxy0[0][0][21 // 2] = wxy0[1][1][21 // 2] = 1
    return s3, wxy0, 1e-3, 1.0, 2


@kernel(lambda: _cma_args(10 ** 3), lambda: _cma_args(50), static=(4,),
        changes="sample loop -> fori_loop; slice at a loop index -> gather of an arange",
        mutates=True)
def cma_pt(xp, E, wxy, mu, R, os):
    pols, L = E.shape
    ntaps = wxy.shape[-1]
    N = (L // os // ntaps - 1) * ntaps
    err = xp.zeros((pols, L), dtype=np.complex128)
    taps = np.arange(ntaps)
    for k in range(pols):
        def step(i, state):
            err, wxy = state
            X = E[:, i * os + taps]
            Xest = xp.sum(X * xp.conj(wxy[k]))
            err = put(xp, err, (k, i), (R - abs(Xest) ** 2) * Xest)
            wxy = add_at(xp, wxy, k, mu * xp.conj(err[k, i]) * X)
            return err, wxy
        err, wxy = fori_loop(xp, 0, N, step, (err, wxy))
    return err, wxy


def _grid_args(n):
    return (np.arange(0, 1, 1.0 / n),)


@kernel(lambda: _grid_args(800), lambda: _grid_args(30))
def create_grid(xp, x):
    N = x.shape[0]
    z = xp.zeros((N, N, 3))
    z = put(xp, z, (slice(None), slice(None), 0), x.reshape(-1, 1))
    z = put(xp, z, (slice(None), slice(None), 1), x)
    return z.reshape(N * N, 3)


@kernel(lambda: (_rng().rand(600, 600),), lambda: (_rng().rand(30, 20),))
def cronbach(xp, itemscores):
    itemvars = itemscores.var(axis=1, ddof=1)
    tscores = itemscores.sum(axis=0)
    nitems = len(itemscores)
    return nitems / (nitems - 1) * (1 - itemvars.sum() / tscores.var(ddof=1))


def _diffusion_args(n, steps):
    u = np.zeros([n, n], dtype=np.double)
    u[n // 2, n // 2] = 1000.0
    return u, np.zeros([n, n], dtype=np.double), steps


@kernel(lambda: _diffusion_args(2 ** 7, 100), lambda: _diffusion_args(16, 5), static=(2,),
        mutates=True)
def diffusion(xp, u, tempU, iterNum):
    mu = .1
    inner = (slice(1, -1), slice(1, -1))
    everything = (slice(None), slice(None))
    for _ in range(iterNum):
        tempU = put(xp, tempU, inner, u[1:-1, 1:-1] + mu * (
            u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[0:-2, 1:-1] +
            u[1:-1, 2:] - 2 * u[1:-1, 1:-1] + u[1:-1, 0:-2]))
        u = put(xp, u, everything, tempU[:, :])
        tempU = put(xp, tempU, everything, 0.0)
    return u, tempU


def _eds_args(n):
    r = _rng()
    return r.random_sample((1, 512)), r.random_sample((n, 512))


@kernel(lambda: _eds_args(10_000), lambda: _eds_args(50))
def euclidean_distance_square(xp, x1, x2):
    return -2 * xp.dot(x1, x2.T) + xp.sum(xp.square(x1), axis=1)[:, np.newaxis] \
        + xp.sum(xp.square(x2), axis=1)


def _evolve_args(n):
    grid = np.zeros((n, n))
    low, high = int(n * .4), int(n * .5)
    grid[low:high, low:high] = 0.005
    return grid, 0.1


def _laplacian(xp, grid):
    return xp.roll(grid, +1, 0) + xp.roll(grid, -1, 0) + xp.roll(grid, +1, 1) \
        + xp.roll(grid, -1, 1) - 4 * grid


@kernel(lambda: _evolve_args(512), lambda: _evolve_args(20))
def evolve(xp, grid, dt, D=1):
    return grid + dt * D * _laplacian(xp, grid)


def _grayscott_args(n, counts):
    r = _rng()
    return counts, 0.16, 0.08, 0.04, 0.06, r.random_sample((n, n)), r.random_sample((n, n))


@kernel(lambda: _grayscott_args(280, 40), lambda: _grayscott_args(24, 3), static=(0,),
        changes="writes through the views u, v of U, V -> writes to U[1:-1, 1:-1]")
def grayscott(xp, counts, Du, Dv, F, k, ru, rv):
    n = ru.shape[0]
    inner = (slice(1, -1), slice(1, -1))
    U = xp.zeros((n + 2, n + 2), dtype=np.float32)
    V = xp.zeros((n + 2, n + 2), dtype=np.float32)
    r = n // 14
    centre = (slice(n // 2 - r, n // 2 + r), slice(n // 2 - r, n // 2 + r))
    U = put(xp, U, inner, 1.0)
    U = put(xp, U, centre, 0.50)
    V = put(xp, V, centre, 0.25)
    U = add_at(xp, U, inner, 0.15 * ru)
    V = add_at(xp, V, inner, 0.15 * rv)
    for _ in range(counts):
        u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
        Lu = (U[0:-2, 1:-1] + U[1:-1, 0:-2] - 4 * U[1:-1, 1:-1] + U[1:-1, 2:] + U[2:, 1:-1])
        Lv = (V[0:-2, 1:-1] + V[1:-1, 0:-2] - 4 * V[1:-1, 1:-1] + V[1:-1, 2:] + V[2:, 1:-1])
        uvv = u * v * v
        U = add_at(xp, U, inner, Du * Lu - uvv + F * (1 - u))
        V = add_at(xp, V, inner, Dv * Lv + uvv - (F + k) * v)
    return V


def _grouping_args(n):
    values = np.array(_rng().randint(0, 3298, size=n), dtype="u4")
    values.sort()
    return (values,)


@kernel(lambda: _grouping_args(500_000), lambda: _grouping_args(200))
def grouping(xp, values):
    diff = xp.concatenate((xp.asarray([1], dtype=values.dtype), xp.diff(values)))
    idx = xp.concatenate((xp.where(diff)[0], xp.asarray([len(values)])))
    return values[idx[:-1]], xp.diff(idx)


@kernel(lambda: (_rng().randn(512, 512),), lambda: (_rng().randn(20, 24),))
def harris(xp, I):
    m, n = I.shape
    dx = (I[1:, :] - I[:m - 1, :])[:, 1:]
    dy = (I[:, 1:] - I[:, :n - 1])[1:, :]
    A = dx * dx
    B = dy * dy
    C = dx * dy
    tr = A + B
    det = A * B - C * C
    k = 0.05
    return det - k * tr * tr


def _hasting_args():
    r = _rng()
    return (r.rand(3), *r.rand(7))


@kernel(_hasting_args)
def hasting(xp, y, t, a1, a2, b1, b2, d1, d2):
    yprime = xp.empty((3,))
    yprime = put(xp, yprime, 0, y[0] * (1. - y[0]) - a1 * y[0] * y[1] / (1. + b1 * y[0]))
    yprime = put(xp, yprime, 1, a1 * y[0] * y[1] / (1. + b1 * y[0])
                 - a2 * y[1] * y[2] / (1. + b2 * y[1]) - d1 * y[1])
    yprime = put(xp, yprime, 2, a2 * y[1] * y[2] / (1. + b2 * y[1]) - d2 * y[2])
    return yprime


def _two(shape):
    r = _rng()
    return r.rand(*shape), r.rand(*shape)


@kernel(lambda: _two((80, 80)), lambda: _two((12, 12)))
def l1norm(xp, x, y):
    return xp.sum(xp.abs(x[:, None, :] - y), axis=-1)


@kernel(lambda: (_rng().rand(1000, 1000),), lambda: (_rng().rand(20, 30),))
def l2norm(xp, x):
    return xp.sqrt(xp.sum(xp.abs(x) ** 2, 1))


@kernel(lambda: (_rng().randn(500, 500, 3),), lambda: (_rng().randn(20, 16, 3),),
        changes="Python max of a value -> maximum; /= -> /")
def laplacien(xp, image):
    out_image = xp.abs(4 * image[1:-1, 1:-1] - image[0:-2, 1:-1] - image[2:, 1:-1]
                       - image[1:-1, 0:-2] - image[1:-1, 2:])
    valmax = xp.max(out_image)
    valmax = xp.maximum(1., valmax) + 1.E-9
    return out_image / valmax


def _wrap(pos, offset, bound):
    return (pos + offset) % bound


@kernel(lambda: (np.arange(120, dtype=np.float64).reshape(5, 4, 3, 2),),
        lambda: (np.arange(12, dtype=np.float64).reshape(3, 2, 2, 1),),
        changes="&= on an element -> put of the conjunction")
def local_maxima(xp, data):
    wsize = data.shape
    result = xp.ones(data.shape, bool)
    for pos in np.ndindex(data.shape):
        myval = data[pos]
        for offset in np.ndindex(wsize):
            neighbor_idx = tuple(_wrap(p, o - w // 2, w) for (p, o, w) in zip(pos, offset, wsize))
            result = put(xp, result, pos, result[pos] & (data[neighbor_idx] <= myval))
    return result


def _loglik_args(n):
    return _rng().random_sample(n), 0.1, 1.1


@kernel(lambda: _loglik_args(100_000), lambda: _loglik_args(100), changes="/= -> /")
def log_likelihood(xp, data, mean, sigma):
    s = (data - mean) ** 2 / (2 * (sigma ** 2))
    pdfs = xp.exp(- s)
    pdfs = pdfs / (xp.sqrt(2 * np.pi) * sigma)
    return xp.log(pdfs).sum()


@kernel(lambda: _two((500_000,)), lambda: _two((100,)))
def lstsqr(xp, x, y):
    x_avg = xp.average(x)
    y_avg = xp.average(y)
    dx = x - x_avg
    dy = y - y_avg
    var_x = xp.sum(dx ** 2)
    cov_xy = xp.sum(dx * dy)
    slope = cov_xy / var_x
    y_interc = y_avg - slope * x_avg
    return (slope, y_interc)


def _decision_args(n):
    r = _rng()
    s = r.randn(n) + r.randn(n) * 1.j
    return s, r.choice(s, 32)


@kernel(lambda: _decision_args(2 ** 12), lambda: _decision_args(40),
        changes="sample loop -> fori_loop")
def make_decision(xp, E, symbols):
    L = E.shape[0]

    def decide(i, syms_out):
        im = xp.argmin(abs(E[i] - symbols) ** 2)
        return put(xp, syms_out, i, symbols[im])
    return fori_loop(xp, 0, L, decide, xp.zeros(L, dtype=E.dtype))


@kernel(lambda: (0., 100., 0., 100., 100., 100., 100, 50.),
        lambda: (0., 10., 0., 10., 12., 9., 6, 50.), static=(0, 1, 2, 3, 4, 5, 6),
        changes="writes through a boolean mask -> where")
def mandelbrot(xp, xmin, xmax, ymin, ymax, xn, yn, maxiter, horizon):
    X = xp.linspace(xmin, xmax, int(xn))
    Y = xp.linspace(ymin, ymax, int(yn))
    C = X + Y[:, None] * 1j
    N = xp.zeros(C.shape, dtype=np.int64)
    Z = xp.zeros(C.shape, np.complex128)
    for n in range(maxiter):
        I = xp.less(xp.abs(Z), horizon)
        N = xp.where(I, n, N)
        Z = xp.where(I, Z ** 2 + C, Z)
    N = xp.where(N == maxiter - 1, 0, N)
    return Z, N


@kernel(lambda: (_rng().rand(100, 100),), lambda: (_rng().rand(8, 6),))
def multiple_sum(xp, array):
    rows = array.shape[0]
    cols = array.shape[1]
    out = xp.zeros((rows, cols))
    for row in range(0, rows):
        out = put(xp, out, (row, slice(None)), xp.sum(array - array[row, :], 0))
    return out


def _complex_args(n):
    r = _rng()
    return (r.random_sample(n) + 1j * r.random_sample(n),)


@kernel(lambda: _complex_args(10_000), lambda: _complex_args(100))
def normalize_complex_arr(xp, a):
    a_oo = a - a.real.min() - 1j * a.imag.min()
    return a_oo / xp.abs(a_oo).max()


@kernel(lambda: (np.linspace(0, 10, 20000).reshape(200, 100),),
        lambda: (np.linspace(0, 10, 300).reshape(20, 15),))
def pairwise(xp, pts):
    return xp.sum((pts[None, :] - pts[:, None]) ** 2, -1) ** 0.5


def _periodic_args(n):
    x = np.arange(0., n, 0.1)
    return x, x, x, 4, True, True, True


@kernel(lambda: _periodic_args(20), lambda: _periodic_args(2), static=(4, 5, 6),
        changes="writes through a boolean mask -> where")
def periodic_dist(xp, x, y, z, L, periodicX, periodicY, periodicZ):
    N = len(x)
    xtemp = xp.tile(x, (N, 1))
    dx = xtemp - xtemp.T
    ytemp = xp.tile(y, (N, 1))
    dy = ytemp - ytemp.T
    ztemp = xp.tile(z, (N, 1))
    dz = ztemp - ztemp.T
    if periodicX:
        dx = xp.where(dx > L / 2, dx - L, dx)
        dx = xp.where(dx < -L / 2, dx + L, dx)
    if periodicY:
        dy = xp.where(dy > L / 2, dy - L, dy)
        dy = xp.where(dy < -L / 2, dy + L, dy)
    if periodicZ:
        dz = xp.where(dz > L / 2, dz - L, dz)
        dz = xp.where(dz < -L / 2, dz + L, dz)
    d = xp.sqrt(dx ** 2 + dy ** 2 + dz ** 2)
    d = xp.where(d == 0, -1, d)
    return d, dx, dy, dz


@kernel(lambda: (_rng().rand(10_000), 20), lambda: (_rng().rand(30), 4), static=(1,))
def repeating(xp, x, nvar_y):
    nvar_x = x.shape[0]
    y = xp.empty(nvar_x * (1 + nvar_y))
    y = put(xp, y, slice(0, nvar_x), x[0:nvar_x])
    y = put(xp, y, slice(nvar_x, None), xp.repeat(x, nvar_y))
    return y


@kernel(lambda: (_rng().rand(1_000_000),), lambda: (_rng().rand(100),))
def reverse_cumsum(xp, x):
    return xp.cumsum(x[::-1])[::-1]


@kernel(lambda: (np.arange(1_000_000, dtype=float),), lambda: (np.arange(100, dtype=float),))
def rosen(xp, x):
    t0 = 100 * (x[1:] - x[:-1] ** 2) ** 2
    t1 = (1 - x[:-1]) ** 2
    return xp.sum(t0 + t1)


def _slowparts_args(d, re):
    return (d, re, np.ones((2 * d, d + 1, re)), np.ones((d, d + 1, re)), np.ones((d, 2 * d)),
            np.ones((d, 2 * d)), np.ones((d + 1, re, d)), np.ones((d + 1, re, d)), 1)


@kernel(lambda: _slowparts_args(10, 5), lambda: _slowparts_args(3, 2), static=(0, 1))
def slowparts(xp, d, re, preDz, preWz, SRW, RSW, yxV, xyU, resid):
    def fprime(x):
        return 1 - xp.power(xp.tanh(x), 2)
    partialDU = xp.zeros((d + 1, re, 2 * d, d))
    for k in range(2 * d):
        for i in range(d):
            partialDU = put(xp, partialDU, (slice(None), slice(None), k, i),
                            fprime(preDz[k]) * fprime(preWz[i]) * (SRW[i, k] + RSW[i, k])
                            * yxV[:, :, i])
    return partialDU


@kernel(lambda: (np.arange(100 * 10000, dtype=np.uint32).reshape(1000, 1000),),
        lambda: (np.arange(400, dtype=np.uint32).reshape(20, 20),))
def specialconvolve(xp, a):
    rowconvol = a[1:-1, :] + a[:-2, :] + a[2:, :]
    colconvol = rowconvol[:, 1:-1] + rowconvol[:, :-2] + rowconvol[:, 2:] - 9 * a[1:-1, 1:-1]
    return colconvol


def _three(n):
    r = _rng()
    return r.rand(n), r.rand(n), r.rand(n)


@kernel(lambda: _three(100_000), lambda: _three(100))
def vibr_energy(xp, harmonic, anharmonic, i):
    return xp.exp(-harmonic * i - anharmonic * (i ** 2))


def _physics(xp, masspoints, dt, plunk, which):
    ppos = masspoints[1]
    cpos = masspoints[0]
    N = cpos.shape[0]
    HOOKE_K = 2100000.
    DAMPING = 0.0001
    MASS = .01

    def spring(i, force):
        dx, dy = cpos[i] - cpos[i - 1]
        dist = xp.sqrt(dx ** 2 + dy ** 2)
        fmag = -HOOKE_K * dist
        cosine = dx / dist
        sine = dy / dist
        fvec = xp.array([fmag * cosine, fmag * sine])
        force = add_at(xp, force, i - 1, -fvec)
        return add_at(xp, force, i, fvec)
    force = fori_loop(xp, 1, N, spring, xp.zeros((N, 2)))
    force = put(xp, force, 0, 0)
    force = put(xp, force, -1, 0)
    force = add_at(xp, force, (which, 1), plunk)
    accel = force / MASS
    npos = (2 - DAMPING) * cpos - (1 - DAMPING) * ppos + accel * (dt ** 2)
    masspoints = put(xp, masspoints, 1, cpos)
    return put(xp, masspoints, 0, npos)


@kernel(lambda: (4000,), lambda: (30,), static=(0,),
        changes="particle loops -> fori_loop; `assert dist != 0` on a value dropped")
def wave(xp, PARTICLE_COUNT):
    SUBDIVISION = 300
    FRAMERATE = 60
    count = PARTICLE_COUNT
    width, height = 1200, 400
    masspoints = xp.empty((2, count, 2), np.float64)

    def place(i, initpos):
        return put(xp, initpos, i, initpos[i - 1] + float(width) / count)
    initpos = fori_loop(xp, 1, count, place, xp.zeros(count, np.float64))
    masspoints = put(xp, masspoints, (slice(None), slice(None), 0), initpos)
    masspoints = put(xp, masspoints, (slice(None), slice(None), 1), height / 2)
    f = 15
    plunk_pos = count // 2
    return _physics(xp, masspoints, 1. / (SUBDIVISION * FRAMERATE), f, plunk_pos)


def _wdist_args(n):
    r = _rng()
    return r.rand(n, n), r.rand(n, n), r.rand(n, n)


@kernel(lambda: _wdist_args(70), lambda: _wdist_args(6), changes="pair loops -> fori_loop")
def wdist(xp, A, B, W):
    k, m = A.shape
    _, n = B.shape

    def column(ii, D):
        def entry(jj, D):
            wdiff = (A[:, ii] - B[:, jj]) / W[:, ii]
            return put(xp, D, (ii, jj), xp.sqrt((wdiff ** 2).sum()))
        return fori_loop(xp, 0, n, entry, D)
    return fori_loop(xp, 0, m, column, xp.zeros((m, n)))

