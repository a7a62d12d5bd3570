"""Thirty-two small scientific workloads, written once and run on NumPy, arrjit and JAX.

Each workload is a function ``program(xp, *args)`` where ``xp`` is an :class:`Arrays`: an
array namespace (``numpy``, ``arrjit.numpy`` or ``jax.numpy``) plus the three things NumPy
code and JAX-style code spell differently:

- ``xp.set(x, index, value)`` and ``xp.add(x, index, value)`` write in place on NumPy and
  return ``x.at[index].set(value)`` / ``.add(value)`` on a traced namespace;
- ``xp.fori(start, stop, body, carry)`` is a Python loop on NumPy and ``lax.fori_loop``
  otherwise.

So NumPy's time is NumPy's own idiom, and the traced namespaces see the functional form JAX
asks for. The computations and sizes are those of the public numpy-benchmarks collection
(great-circle distances, Gray-Scott, Harris corners, ...), each written here from its
formula; ``SUITE`` maps a name to its :class:`Workload`. ``tests/test_science_suite.py`` runs
every workload at a small size against NumPy, ``python benchmarks/bench_science.py`` prints the
table of the docs' performance page.

>>> import numpy as np
>>> import arrjit, arrjit.numpy as anp
>>> w = SUITE["rosenbrock"]
>>> args = w.make_test_args()
>>> fast = arrjit.jit(w.bind(arrjit_arrays()), static_argnums=w.static)
>>> bool(np.isclose(fast(*args), w.program(NUMPY, *args)))
True
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


class Arrays:
    """An array namespace with NumPy's and JAX's spellings of updates and loops unified."""

    def __init__(self, namespace: Any, lax: Any = None):
        self._namespace = namespace
        self._lax = lax

    def __getattr__(self, name: str) -> Any:
        return getattr(self._namespace, name)

    def set(self, x, index, value):
        if self._lax is None:
            x[index] = value
            return x
        return x.at[index].set(value)

    def add(self, x, index, value):
        if self._lax is None:
            x[index] += value
            return x
        return x.at[index].add(value)

    def fori(self, start: int, stop, body: Callable, carry):
        if self._lax is None:
            for i in range(start, stop):
                carry = body(i, carry)
            return carry
        return self._lax.fori_loop(start, stop, body, carry)


NUMPY = Arrays(np)


def arrjit_arrays() -> Arrays:
    import arrjit.numpy as anp
    from arrjit import lax
    return Arrays(anp, lax)


def jax_arrays() -> Arrays:
    import jax
    import jax.numpy as jnp
    return Arrays(jnp, jax.lax)


@dataclass(frozen=True)
class Workload:
    """A program, its arguments at the benchmark's size and at a test size, the positions
    of its static arguments, and whether NumPy's run writes into its arguments (then the
    benchmark hands each call a fresh copy)."""

    program: Callable[..., Any]
    make_args: Callable[[], tuple]
    make_test_args: Callable[[], tuple]
    static: tuple[int, ...] = ()
    writes_arguments: bool = False

    def bind(self, xp: Arrays) -> Callable[..., Any]:
        return functools.partial(self.program, xp)


SUITE: dict[str, Workload] = {}


def workload(make_args, make_test_args=None, static=(), writes_arguments=False):
    def register(program):
        SUITE[program.__name__] = Workload(program, make_args, make_test_args or make_args,
                                           tuple(static), writes_arguments)
        return program
    return register


def _random(seed: int = 7) -> np.random.Generator:
    return np.random.default_rng(seed)


def _normals(count: int, n: int) -> tuple:
    rng = _random()
    return tuple(rng.standard_normal(n) for _ in range(count))


def _uniforms(count: int, shape) -> tuple:
    rng = _random()
    return tuple(rng.random(shape) for _ in range(count))


# --- elementwise formulas ----------------------------------------------------------------

@workload(lambda: _normals(4, 10_000), lambda: _normals(4, 100))
def great_circle(xp, lat_a, lon_a, lat_b, lon_b):
    """Central angle between two points on a sphere (the haversine formula)."""
    half_dlat = (lat_b - lat_a) / 2
    half_dlon = (lon_b - lon_a) / 2
    h = xp.sin(half_dlat) ** 2 + xp.cos(lat_a) * xp.cos(lat_b) * xp.sin(half_dlon) ** 2
    return 2 * xp.arctan2(xp.sqrt(h), xp.sqrt(1 - h))


@workload(lambda: _uniforms(3, 100_000), lambda: _uniforms(3, 100))
def vibrational_weights(xp, harmonic, anharmonic, level):
    """Boltzmann-like weights of an anharmonic oscillator's levels."""
    return xp.exp(-level * (harmonic + anharmonic * level))


@workload(lambda: (_random().random(100_000), 0.1, 1.1),
          lambda: (_random().random(100), 0.1, 1.1))
def normal_log_likelihood(xp, samples, mean, sigma):
    """Sum of the log of a normal density at each sample (density first, then its log)."""
    z = (samples - mean) ** 2 / (2 * sigma ** 2)
    density = xp.exp(-z) / (xp.sqrt(2 * np.pi) * sigma)
    return xp.sum(xp.log(density))


def _complex_samples(n: int) -> tuple:
    rng = _random()
    return (rng.random(n) + 1j * rng.random(n),)


@workload(lambda: _complex_samples(10_000), lambda: _complex_samples(100))
def shift_scale_complex(xp, z):
    """Move complex samples to the first quadrant's corner and scale them into the unit disc."""
    shifted = z - (xp.min(z.real) + 1j * xp.min(z.imag))
    return shifted / xp.max(xp.abs(shifted))


# --- reductions --------------------------------------------------------------------------

@workload(lambda: (_random().random((1000, 1000)),), lambda: (_random().random((20, 30)),))
def row_norms(xp, x):
    """Euclidean norm of every row."""
    return xp.sqrt(xp.sum(xp.abs(x) ** 2, axis=1))


@workload(lambda: (_random().random((600, 600)),), lambda: (_random().random((30, 20)),))
def cronbach_alpha(xp, scores):
    """Cronbach's alpha of a test: items along axis 0, respondents along axis 1."""
    items = scores.shape[0]
    item_variance = xp.sum(xp.var(scores, axis=1, ddof=1))
    total_variance = xp.var(xp.sum(scores, axis=0), ddof=1)
    return items / (items - 1) * (1 - item_variance / total_variance)


@workload(lambda: _uniforms(2, 500_000), lambda: _uniforms(2, 100))
def line_fit(xp, x, y):
    """Least-squares slope and intercept of y against x."""
    mean_x, mean_y = xp.mean(x), xp.mean(y)
    dx = x - mean_x
    slope = xp.sum(dx * (y - mean_y)) / xp.sum(dx * dx)
    return slope, mean_y - slope * mean_x


@workload(lambda: (np.arange(1_000_000, dtype=float),), lambda: (np.arange(100, dtype=float),))
def rosenbrock(xp, x):
    """The Rosenbrock function in many dimensions."""
    head, tail = x[:-1], x[1:]
    return xp.sum(100 * (tail - head * head) ** 2 + (1 - head) ** 2)


@workload(lambda: (_random().random(1_000_000),), lambda: (_random().random(100),))
def suffix_sums(xp, x):
    """Sum of each element and everything after it."""
    return xp.flip(xp.cumsum(xp.flip(x)))


@workload(lambda: (_random().random((100, 100)),), lambda: (_random().random((8, 6)),))
def row_deviation_sums(xp, a):
    """Row r of the result: the column sums of ``a - a[r]``, one update per row."""
    result = xp.zeros(a.shape)
    for r in range(a.shape[0]):
        result = xp.set(result, r, xp.sum(a - a[r], axis=0))
    return result


# --- distances ---------------------------------------------------------------------------

def _points_and_queries(n: int) -> tuple:
    rng = _random()
    return rng.random((1, 512)), rng.random((n, 512))


@workload(lambda: _points_and_queries(10_000), lambda: _points_and_queries(50))
def squared_distances(xp, a, b):
    """Squared Euclidean distances between the rows of ``a`` and of ``b``, through a product."""
    return -2 * xp.dot(a, b.T) + xp.sum(a * a, axis=1)[:, None] + xp.sum(b * b, axis=1)


@workload(lambda: _uniforms(2, (80, 80)), lambda: _uniforms(2, (12, 12)))
def manhattan_distances(xp, a, b):
    """L1 distance between every row of ``a`` and every row of ``b``."""
    return xp.sum(xp.abs(a[:, None, :] - b[None, :, :]), axis=2)


@workload(lambda: (np.linspace(0, 10, 20000).reshape(200, 100),),
          lambda: (np.linspace(0, 10, 300).reshape(20, 15),))
def point_distances(xp, points):
    """Euclidean distance between every pair of points."""
    diff = points[:, None, :] - points[None, :, :]
    return xp.sqrt(xp.sum(diff * diff, axis=-1))


def _lattice(n: int) -> tuple:
    axis = np.arange(0.0, n, 0.1)
    return axis, axis, axis, 4, True, True, True


@workload(lambda: _lattice(20), lambda: _lattice(2), static=(4, 5, 6))
def minimum_image(xp, x, y, z, box, wrap_x, wrap_y, wrap_z):
    """Pair separations in a periodic box (the nearest image of each particle), their
    lengths, and -1 where two particles coincide."""
    def separations(c, wrap):
        d = c[None, :] - c[:, None]
        if wrap:
            d = xp.where(d > box / 2, d - box, d)
            d = xp.where(d < -box / 2, d + box, d)
        return d
    dx, dy, dz = separations(x, wrap_x), separations(y, wrap_y), separations(z, wrap_z)
    distance = xp.sqrt(dx * dx + dy * dy + dz * dz)
    return xp.where(distance == 0, -1, distance), dx, dy, dz


def _weighted_args(n: int) -> tuple:
    return _uniforms(3, (n, n))


@workload(lambda: _weighted_args(70), lambda: _weighted_args(6))
def weighted_distances(xp, a, b, weights):
    """``out[i, j]``: the weighted distance between column i of ``a`` and column j of ``b``,
    one pair per step of two nested loops."""
    rows, cols = a.shape[1], b.shape[1]

    def row(i, out):
        def cell(j, out):
            r = (a[:, i] - b[:, j]) / weights[:, i]
            return xp.set(out, (i, j), xp.sqrt(xp.sum(r * r)))
        return xp.fori(0, cols, cell, out)
    return xp.fori(0, rows, row, xp.zeros((rows, cols)))


# --- stencils and images -----------------------------------------------------------------

@workload(lambda: (_random().standard_normal((512, 512)),),
          lambda: (_random().standard_normal((20, 24)),))
def harris_response(xp, image):
    """Harris corner response from one-sided image gradients, k = 0.05."""
    gx = (image[1:, :] - image[:-1, :])[:, 1:]
    gy = (image[:, 1:] - image[:, :-1])[1:, :]
    a, b, c = gx * gx, gy * gy, gx * gy
    return a * b - c * c - 0.05 * (a + b) ** 2


@workload(lambda: (_random().standard_normal((500, 500, 3)),),
          lambda: (_random().standard_normal((20, 16, 3)),))
def edge_strength(xp, image):
    """Magnitude of the 5-point Laplacian of an RGB image, scaled by its peak (at least 1)."""
    centre = image[1:-1, 1:-1]
    laplacian = xp.abs(4 * centre - image[:-2, 1:-1] - image[2:, 1:-1]
                       - image[1:-1, :-2] - image[1:-1, 2:])
    return laplacian / (xp.maximum(1.0, xp.max(laplacian)) + 1e-9)


@workload(lambda: (np.arange(1_000_000, dtype=np.uint32).reshape(1000, 1000),),
          lambda: (np.arange(400, dtype=np.uint32).reshape(20, 20),))
def box_minus_centre(xp, a):
    """The 3x3 box sum around each interior pixel, minus nine times the pixel (uint32)."""
    rows = a[:-2] + a[1:-1] + a[2:]
    box = rows[:, :-2] + rows[:, 1:-1] + rows[:, 2:]
    return box - 9 * a[1:-1, 1:-1]


def _square_patch(n: int) -> tuple:
    field = np.zeros((n, n))
    field[int(n * 0.4):int(n * 0.5), int(n * 0.4):int(n * 0.5)] = 0.005
    return field, 0.1


@workload(lambda: _square_patch(512), lambda: _square_patch(20))
def periodic_heat_step(xp, field, dt):
    """One explicit diffusion step on a torus (neighbours through ``roll``)."""
    neighbours = (xp.roll(field, 1, 0) + xp.roll(field, -1, 0)
                  + xp.roll(field, 1, 1) + xp.roll(field, -1, 1))
    return field + dt * (neighbours - 4 * field)


def _hot_spot(n: int, steps: int) -> tuple:
    u = np.zeros((n, n))
    u[n // 2, n // 2] = 1000.0
    return u, steps


@workload(lambda: _hot_spot(128, 100), lambda: _hot_spot(16, 5), static=(1,),
          writes_arguments=True)
def heat_diffusion(xp, u, steps):
    """Explicit heat equation with fixed zero edges, ``steps`` unrolled updates."""
    inner = (slice(1, -1), slice(1, -1))
    for _ in range(steps):
        centre = u[1:-1, 1:-1]
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * centre
        u = xp.set(u, inner, centre + 0.1 * laplacian)
    return u


def _gray_scott_args(n: int, steps: int) -> tuple:
    rng = _random()
    return steps, 0.16, 0.08, 0.04, 0.06, rng.random((n, n)), rng.random((n, n))


@workload(lambda: _gray_scott_args(280, 40), lambda: _gray_scott_args(24, 3), static=(0,))
def gray_scott(xp, steps, diffuse_u, diffuse_v, feed, kill, noise_u, noise_v):
    """Gray-Scott reaction-diffusion in float32 on a zero-padded grid; returns V."""
    n = noise_u.shape[0]
    inner = (slice(1, -1), slice(1, -1))
    half = n // 14
    seed = (slice(n // 2 - half, n // 2 + half),) * 2
    u = xp.set(xp.zeros((n + 2, n + 2), dtype=np.float32), inner, 1.0)
    v = xp.zeros((n + 2, n + 2), dtype=np.float32)
    u, v = xp.set(u, seed, 0.5), xp.set(v, seed, 0.25)
    u, v = xp.add(u, inner, 0.15 * noise_u), xp.add(v, inner, 0.15 * noise_v)

    def laplacian(f):
        return f[:-2, 1:-1] + f[2:, 1:-1] + f[1:-1, :-2] + f[1:-1, 2:] - 4 * f[1:-1, 1:-1]
    for _ in range(steps):
        uc, vc = u[1:-1, 1:-1], v[1:-1, 1:-1]
        reaction = uc * vc * vc
        du = diffuse_u * laplacian(u) - reaction + feed * (1 - uc)
        dv = diffuse_v * laplacian(v) + reaction - (feed + kill) * vc
        u, v = xp.add(u, inner, du), xp.add(v, inner, dv)
    return v


@workload(lambda: (np.arange(120, dtype=np.float64).reshape(5, 4, 3, 2),),
          lambda: (np.arange(12, dtype=np.float64).reshape(3, 2, 2, 1),))
def wrapped_maxima(xp, data):
    """True where an element is at least every element of its window, the window being the
    whole array centred on it with periodic wrap: one shifted comparison per offset."""
    axes = tuple(range(data.ndim))
    result = xp.ones(data.shape, dtype=bool)
    for offset in np.ndindex(data.shape):
        shift = tuple(size // 2 - o for o, size in zip(offset, data.shape))
        result = result & (xp.roll(data, shift, axis=axes) <= data)
    return result


@workload(lambda: (0.0, 100.0, 0.0, 100.0, 100, 100, 100, 50.0),
          lambda: (0.0, 10.0, 0.0, 10.0, 12, 9, 6, 50.0), static=(0, 1, 2, 3, 4, 5, 6))
def escape_time(xp, x_lo, x_hi, y_lo, y_hi, nx, ny, iterations, radius):
    """Escape-time iteration of z -> z^2 + c over a grid, ``iterations`` unrolled steps."""
    c = xp.linspace(x_lo, x_hi, nx)[None, :] + 1j * xp.linspace(y_lo, y_hi, ny)[:, None]
    z = xp.zeros(c.shape, dtype=np.complex128)
    count = xp.zeros(c.shape, dtype=np.int64)
    for step in range(iterations):
        inside = xp.abs(z) < radius
        count = xp.where(inside, step, count)
        z = xp.where(inside, z * z + c, z)
    return z, xp.where(count == iterations - 1, 0, count)


# --- building arrays ---------------------------------------------------------------------

@workload(lambda: (np.arange(0, 1, 1 / 800),), lambda: (np.arange(0, 1, 1 / 30),))
def grid_points(xp, axis):
    """Every (x, y, 0) point of the square grid over ``axis``, one point per row."""
    n = axis.shape[0]
    xs = xp.broadcast_to(axis[:, None], (n, n))
    ys = xp.broadcast_to(axis[None, :], (n, n))
    return xp.stack([xs, ys, xp.zeros((n, n))], axis=-1).reshape(n * n, 3)


@workload(lambda: (_random().random(10_000), 20), lambda: (_random().random(30), 4),
          static=(1,))
def tiled_repeat(xp, x, copies):
    """``x`` followed by each of its elements repeated ``copies`` times."""
    return xp.concatenate([x, xp.repeat(x, copies)])


def _food_chain_args() -> tuple:
    rng = _random()
    return (rng.random(3), *rng.random(7))


@workload(_food_chain_args)
def food_chain_rates(xp, y, t, a1, a2, b1, b2, d1, d2):
    """Right-hand side of the Hastings-Powell three-species food chain."""
    prey, middle, top = y[0], y[1], y[2]
    grazing = a1 * prey / (1 + b1 * prey)
    predation = a2 * middle / (1 + b2 * middle)
    return xp.stack([prey * (1 - prey) - grazing * middle,
                     grazing * middle - predation * top - d1 * middle,
                     predation * top - d2 * top])


def _partials_args(d: int, r: int) -> tuple:
    rng = _random()
    return (d, r, rng.random((2 * d, d + 1, r)), rng.random((d, d + 1, r)),
            rng.random((d, 2 * d)), rng.random((d, 2 * d)), rng.random((d + 1, r, d)))


@workload(lambda: _partials_args(10, 5), lambda: _partials_args(3, 2), static=(0, 1))
def outer_partials(xp, d, r, pre_d, pre_w, srw, rsw, yxv):
    """A backpropagation tensor: ``out[a, b, k, i] = tanh'(pre_d[k, a, b]) *
    tanh'(pre_w[i, a, b]) * (srw[i, k] + rsw[i, k]) * yxv[a, b, i]``."""
    def dtanh(v):
        return 1 - xp.tanh(v) ** 2
    gd = xp.moveaxis(dtanh(pre_d), 0, -1)[..., :, None]
    gw = xp.moveaxis(dtanh(pre_w), 0, -1)[..., None, :]
    return gd * gw * (srw + rsw).T * yxv[..., None, :]


def _sorted_labels(n: int) -> tuple:
    labels = _random().integers(0, 3298, size=n).astype(np.uint32)
    labels.sort()
    return (labels,)


@workload(lambda: _sorted_labels(500_000), lambda: _sorted_labels(200))
def run_lengths(xp, labels):
    """Distinct values of a sorted array and how often each occurs. The result's length
    depends on the values, so it runs eagerly (``jit`` refuses it, as JAX does)."""
    starts = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), labels[1:] != labels[:-1]]))
    ends = xp.concatenate([starts[1:], xp.asarray([labels.shape[0]])])
    return labels[starts], ends - starts


# --- loops over data ---------------------------------------------------------------------

def _flag_table(n: int) -> tuple:
    return (_random().integers(0, 2, size=(n, 4)).astype(bool),)


@workload(lambda: _flag_table(1000), lambda: _flag_table(20))
def flagged_rows(xp, table):
    """Rows whose first flag is set and whose other flags include the pattern 1, 0, 1; one
    row per loop step."""
    pattern = xp.asarray([True, False, True])

    def visit(r, found):
        row = table[r]
        return xp.set(found, r, row[0] & xp.all(row[1:] | ~pattern))
    return xp.fori(0, table.shape[0], visit, xp.zeros(table.shape[0], dtype=bool))


def _symbols(n: int) -> tuple:
    rng = _random()
    samples = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    return samples, rng.choice(samples, 32)


@workload(lambda: _symbols(2 ** 12), lambda: _symbols(40))
def nearest_symbol(xp, samples, alphabet):
    """Hard decisions: each received sample replaced by the nearest symbol of the alphabet."""
    def decide(i, out):
        d = samples[i] - alphabet
        return xp.set(out, i, alphabet[xp.argmin(d.real ** 2 + d.imag ** 2)])
    return xp.fori(0, samples.shape[0], decide, xp.zeros(samples.shape[0], dtype=samples.dtype))


def _equaliser_args(symbols: int) -> tuple:
    signal = np.ones((2, 3 * symbols), dtype=np.complex128)
    taps = np.zeros((2, 2, 21), dtype=np.complex128)
    taps[0, 0, 10] = taps[1, 1, 10] = 1
    return signal, taps, 1e-3, 1.0, 2


@workload(lambda: _equaliser_args(1000), lambda: _equaliser_args(50), static=(4,),
          writes_arguments=True)
def cma_equaliser(xp, signal, taps, step_size, radius, oversampling):
    """Constant-modulus blind equaliser of a two-polarisation signal: per polarisation, a loop
    over symbols that filters a window and nudges that polarisation's taps."""
    polarisations, length = signal.shape
    width = taps.shape[-1]
    symbols = (length // oversampling // width - 1) * width
    window = np.arange(width)
    errors = xp.zeros((polarisations, length), dtype=np.complex128)
    for p in range(polarisations):
        def adapt(i, state, p=p):
            errors, taps = state
            block = signal[:, i * oversampling + window]
            estimate = xp.sum(block * xp.conj(taps[p]))
            error = (radius - xp.abs(estimate) ** 2) * estimate
            return (xp.set(errors, (p, i), error),
                    xp.add(taps, p, step_size * xp.conj(error) * block))
        errors, taps = xp.fori(0, symbols, adapt, (errors, taps))
    return errors, taps


@workload(lambda: (4000,), lambda: (30,), static=(0,))
def string_wave(xp, count):
    """One Verlet step of a plucked string of ``count`` masses joined by springs: positions
    built by a loop, spring forces accumulated by a loop over the springs."""
    stiffness, damping, mass = 2.1e6, 1e-4, 0.01
    dt = 1.0 / (300 * 60)
    spacing = 1200.0 / count

    xs = xp.fori(1, count, lambda i, xs: xp.set(xs, i, xs[i - 1] + spacing), xp.zeros(count))
    position = xp.stack([xs, xp.full(count, 200.0)], axis=1)

    def spring(i, force):
        delta = position[i] - position[i - 1]
        length = xp.sqrt(xp.sum(delta * delta))
        pull = -stiffness * length * (delta / length)
        return xp.add(xp.add(force, i - 1, -pull), i, pull)
    force = xp.fori(1, count, spring, xp.zeros((count, 2)))
    force = xp.set(xp.set(force, 0, 0.0), count - 1, 0.0)
    force = xp.add(force, (count // 2, 1), 15.0)
    moved = (2 - damping) * position - (1 - damping) * position + force / mass * dt ** 2
    return xp.stack([moved, position])
