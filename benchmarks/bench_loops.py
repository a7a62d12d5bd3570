"""Loop programs: arrjit's native loops against JAX and hand-written serial numba.

``ForiLoop``: ``fori_loop`` of 10,000 steps of ``x = x * 0.999 + 0.001`` on 1,000 elements
against a Python loop over NumPy and JAX's ``lax.fori_loop`` (when installed).
``SolverLoops``: seven programs in JAX's style (solvers, a bit-level checksum, an ODE
integrator under ``scan``), each also written as a serial numba loop. Run as a script to
print the table: ``python benchmarks/bench_loops.py``.
"""
import statistics
import time

import numpy as np

import arrjit
from arrjit import lax

try:
    import jax
    from jax import lax as jax_lax
except ImportError:  # a missing peer is skipped, never faked
    jax = None

STEPS, N = 10_000, 1_000


def body(i, x):
    return x * 0.999 + 0.001


class ForiLoop:
    def setup(self):
        self.x = np.random.default_rng(0).random(N)
        self.f = arrjit.jit(lambda x, n: lax.fori_loop(0, n, body, x))
        self.f(self.x, STEPS)
        if jax is not None:
            self.jx = jax.numpy.asarray(self.x)
            self.jf = jax.jit(lambda x: jax_lax.fori_loop(0, STEPS, body, x))
            self.jf(self.jx).block_until_ready()

    def time_arrjit(self):
        self.f(self.x, STEPS)

    def time_numpy_python_loop(self):
        x = self.x
        for _ in range(STEPS):
            x = x * 0.999 + 0.001

    def time_jax(self):
        if jax is None:
            raise NotImplementedError("jax is not installed")
        self.jf(self.jx).block_until_ready()

    def track_native_loop(self):
        from arrjit.backends.cpu.loops import LoopRun

        segments = self.f.lower(self.x, STEPS)._entry.rendered.runs
        return int(any(isinstance(s, LoopRun) and s.native is not None for s in segments))


def forward_substitution(ns, loops, lower, rhs):
    """Solve ``lower @ x = rhs`` one row per step, the matrix carried through unchanged."""
    def row(i, carry):
        lower, x = carry
        return lower, x.at[i].set((rhs[i] - ns.dot(lower[i], x)) / lower[i, i])
    return loops.fori_loop(0, rhs.shape[0], row, (lower, ns.zeros_like(rhs)))[1]


def forward_substitution_closed(ns, loops, lower, rhs):
    """The same with the matrix closed over instead of carried."""
    def row(i, x):
        return x.at[i].set((rhs[i] - ns.dot(lower[i], x)) / lower[i, i])
    return loops.fori_loop(0, rhs.shape[0], row, ns.zeros_like(rhs))


def gauss_seidel_rows(ns, loops, u, source):
    """One Gauss-Seidel sweep over the rows: a 3-row window read and a row written back at
    the loop's position (``dynamic_slice`` / ``dynamic_update_index_in_dim``)."""
    cols = u.shape[1]

    def row(i, u):
        w = loops.dynamic_slice(u, (i - 1, 0), (3, cols))
        inner = 0.25 * (w[0, 1:-1] + w[2, 1:-1] + w[1, :-2] + w[1, 2:] - source[i, 1:-1])
        line = loops.dynamic_index_in_dim(u, i, 0, keepdims=False)
        return loops.dynamic_update_index_in_dim(u, line.at[1:-1].set(inner), i, 0)
    return loops.fori_loop(1, u.shape[0] - 1, row, u)


def gauss_seidel_points(ns, loops, u, source):
    """One point-by-point Gauss-Seidel sweep of a 2-D Poisson grid: nested loops over rows
    and columns, each step reading four neighbours and writing one point."""
    def row(i, u):
        def point(j, u):
            near = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
            return u.at[i, j].set(0.25 * (near - source[i, j]))
        return loops.fori_loop(1, u.shape[1] - 1, point, u)
    return loops.fori_loop(1, u.shape[0] - 1, row, u)


def column_cholesky(ns, loops, a):
    """Cholesky factor column by column: each step a matrix-vector product and a column
    written at the loop's position."""
    n = a.shape[0]
    rows = ns.arange(n)

    def column(j, low):
        s = a[:, j] - low @ ns.where(rows < j, low[j], 0.0)
        return low.at[:, j].set(ns.where(rows >= j, s / ns.sqrt(s[j]), 0.0))
    return loops.fori_loop(0, n, column, ns.zeros_like(a))


def crc32_bytes(ns, loops, data):
    """CRC-32 (the reflected 0xEDB88320 polynomial) of a uint8 array: a loop over the bytes
    with a nested loop over each byte's 8 bits on a uint32 carry."""
    poly, one = np.uint32(0xEDB88320), np.uint32(1)

    def byte(i, crc):
        def bit(_, c):
            return ns.where((c & one) != 0, (c >> one) ^ poly, c >> one)
        return loops.fori_loop(0, 8, bit, crc ^ data[i].astype(np.uint32))
    return ~loops.fori_loop(0, data.shape[0], byte, np.uint32(0xFFFFFFFF))


RK4_STEPS, RK4_DT = 2000, 0.005


def rk4_trajectory(ns, loops, start):
    """A trajectory of the Lorenz system by classical Runge-Kutta: ``scan`` over the steps
    with the 3-vector state as the carry and every state stacked as the output."""
    def rates(v):
        x, y, z = v[0], v[1], v[2]
        return ns.stack([10.0 * (y - x), x * (28.0 - z) - y, x * y - (8.0 / 3.0) * z])

    def step(v, _):
        k1 = rates(v)
        k2 = rates(v + 0.5 * RK4_DT * k1)
        k3 = rates(v + 0.5 * RK4_DT * k2)
        k4 = rates(v + RK4_DT * k3)
        nxt = v + (RK4_DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return nxt, nxt
    return loops.scan(step, start, None, length=RK4_STEPS)[1]


def _triangular_system(rng):
    return np.tril(rng.random((1000, 1000))) + 1000 * np.eye(1000), rng.random(1000)


def _spd_matrix(rng):
    m = rng.random((300, 300))
    return (m @ m.T + 300 * np.eye(300),)


# program -> (the program, its arguments from a random generator)
SOLVER_PROGRAMS = {
    "forward_substitution": (forward_substitution, _triangular_system),
    "forward_substitution_closed": (forward_substitution_closed, _triangular_system),
    "gauss_seidel_rows": (gauss_seidel_rows,
                          lambda rng: (rng.random((200, 200)), rng.random((200, 200)))),
    "gauss_seidel_points": (gauss_seidel_points,
                            lambda rng: (rng.random((100, 100)), rng.random((100, 100)))),
    "column_cholesky": (column_cholesky, _spd_matrix),
    "crc32_bytes": (crc32_bytes, lambda rng: (rng.integers(0, 256, 4096).astype(np.uint8),)),
    "rk4_trajectory": (rk4_trajectory, lambda rng: (np.array([1.0, 1.0, 1.0]),)),
}


def _numba_programs() -> dict:
    """The same programs as serial numba loops, written the way one writes them by hand
    (in place, scalars in locals); each returns what the JAX-style program returns."""
    from numba import njit

    @njit(cache=True)
    def forward(lower, rhs):
        x = np.zeros_like(rhs)
        for i in range(rhs.shape[0]):
            s = 0.0
            for k in range(i):
                s += lower[i, k] * x[k]
            x[i] = (rhs[i] - s) / lower[i, i]
        return x

    @njit(cache=True)
    def rows(u, source):
        u = u.copy()
        for i in range(1, u.shape[0] - 1):
            for j in range(1, u.shape[1] - 1):
                u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
                                  - source[i, j])
        return u

    @njit(cache=True)
    def rows_vectorised(u, source):
        u = u.copy()
        for i in range(1, u.shape[0] - 1):
            line = u[i].copy()
            for j in range(1, u.shape[1] - 1):
                line[j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
                                  - source[i, j])
            u[i] = line
        return u

    @njit(cache=True)
    def cholesky(a):
        n = a.shape[0]
        low = np.zeros_like(a)
        for j in range(n):
            s = a[j, j]
            for k in range(j):
                s -= low[j, k] * low[j, k]
            d = np.sqrt(s)
            low[j, j] = d
            for i in range(j + 1, n):
                t = a[i, j]
                for k in range(j):
                    t -= low[i, k] * low[j, k]
                low[i, j] = t / d
        return low

    @njit(cache=True)
    def crc32(data):
        crc = np.uint32(0xFFFFFFFF)
        poly, one = np.uint32(0xEDB88320), np.uint32(1)
        for i in range(data.shape[0]):
            crc ^= np.uint32(data[i])
            for _ in range(8):
                crc = (crc >> one) ^ poly if crc & one else crc >> one
        return crc ^ np.uint32(0xFFFFFFFF)

    @njit(cache=True)
    def rk4(start):
        out = np.empty((RK4_STEPS, 3))
        x, y, z = start[0], start[1], start[2]
        h = RK4_DT
        for n in range(RK4_STEPS):
            ax, ay, az = 10.0 * (y - x), x * (28.0 - z) - y, x * y - (8.0 / 3.0) * z
            x2, y2, z2 = x + 0.5 * h * ax, y + 0.5 * h * ay, z + 0.5 * h * az
            bx, by, bz = 10.0 * (y2 - x2), x2 * (28.0 - z2) - y2, x2 * y2 - (8.0 / 3.0) * z2
            x3, y3, z3 = x + 0.5 * h * bx, y + 0.5 * h * by, z + 0.5 * h * bz
            cx, cy, cz = 10.0 * (y3 - x3), x3 * (28.0 - z3) - y3, x3 * y3 - (8.0 / 3.0) * z3
            x4, y4, z4 = x + h * cx, y + h * cy, z + h * cz
            dx, dy, dz = 10.0 * (y4 - x4), x4 * (28.0 - z4) - y4, x4 * y4 - (8.0 / 3.0) * z4
            x = x + (h / 6.0) * (ax + 2.0 * bx + 2.0 * cx + dx)
            y = y + (h / 6.0) * (ay + 2.0 * by + 2.0 * cy + dy)
            z = z + (h / 6.0) * (az + 2.0 * bz + 2.0 * cz + dz)
            out[n, 0], out[n, 1], out[n, 2] = x, y, z
        return out

    return {"forward_substitution": forward, "forward_substitution_closed": forward,
            "gauss_seidel_rows": rows_vectorised, "gauss_seidel_points": rows,
            "column_cholesky": cholesky, "crc32_bytes": crc32, "rk4_trajectory": rk4}


PEERS = ["arrjit", "jax", "numba"]


def make_runner(program: str, peer: str):
    """``(run, args)``: a call of ``program`` on ``peer`` and its arguments, warmed up."""
    fn, make_args = SOLVER_PROGRAMS[program]
    args = make_args(np.random.default_rng(0))
    if peer == "arrjit":
        import arrjit.numpy as anp
        run = arrjit.jit(lambda *a: fn(anp, lax, *a))
    elif peer == "numba":
        run = _numba_programs()[program]
    else:
        run, args = jax_peer(fn, args)
    run(*args)
    return run, args


def jax_peer(fn, args: tuple) -> tuple:
    """``(run, args)``: ``fn(jax.numpy, jax.lax, *args)`` under ``jax.jit`` on the CPU with
    x64, each call waiting for its result, and ``args`` with the arrays as JAX's."""
    if jax is None:
        raise NotImplementedError("jax is not installed")
    jax.config.update("jax_enable_x64", True)
    jitted = jax.jit(lambda *a: fn(jax.numpy, jax_lax, *a))
    return ((lambda *a: jitted(*a).block_until_ready()),
            tuple(jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args))


class SolverLoops:
    """Loop programs in JAX's style: arrjit against ``jax.jit`` of the same code and a
    hand-written serial numba loop."""
    params = [list(SOLVER_PROGRAMS), PEERS]
    param_names = ["program", "peer"]

    def setup(self, program, peer):
        self.run, self.args = make_runner(program, peer)

    def time_call(self, program, peer):
        self.run(*self.args)


def _median_ms(runners: dict, repeats: int) -> dict[str, float]:
    """Each peer's median time per warm call in ms. The peers take turns, round after round
    (so a slow spell of a shared machine falls on all of them); in its turn a peer is called
    once untimed (its data back in the caches the other peers used) and once timed."""
    times: dict[str, list[float]] = {peer: [] for peer in runners}
    for _ in range(repeats):
        for peer, (run, args) in runners.items():
            run(*args)
            start = time.perf_counter()
            run(*args)
            times[peer].append(time.perf_counter() - start)
    return {peer: 1e3 * statistics.median(t) for peer, t in times.items()}


def main(repeats: int = 51) -> None:
    """Print each program's warm time on every peer and the ratios (peer time / arrjit's),
    after checking that the three give the same answer."""
    print("| program | arrjit ms | JAX ms | numba ms | JAX/arrjit | numba/arrjit |")
    print("|---|---|---|---|---|---|")
    for program in SOLVER_PROGRAMS:
        runners, answers = {}, {}
        for peer in PEERS:
            try:
                run, args = make_runner(program, peer)
            except NotImplementedError:
                continue
            runners[peer] = run, args
            answers[peer] = np.asarray(run(*args))
        for peer, answer in answers.items():
            np.testing.assert_allclose(answer, answers["arrjit"], rtol=1e-9, atol=1e-12,
                                       err_msg=f"{program} on {peer}")
        times = _median_ms(runners, repeats)
        cells = [f"{times[p]:.3f}" if p in times else "-" for p in PEERS]
        ratios = [f"{times[p] / times['arrjit']:.2f}" if p in times else "-"
                  for p in ("jax", "numba")]
        print(f"| {program} | {' | '.join(cells)} | {' | '.join(ratios)} |")


if __name__ == "__main__":
    main()
