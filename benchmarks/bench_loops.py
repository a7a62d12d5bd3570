"""``fori_loop`` of 10,000 steps of ``x = x * 0.999 + 0.001`` on 1,000 elements: arrjit's
native loop against a Python loop over NumPy and JAX's ``lax.fori_loop`` (when installed)."""
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
        from arrjit.backends.cpu.loops import LoopSegment

        segments = self.f.lower(self.x, STEPS)._entry.executable.segments
        return int(any(isinstance(s, LoopSegment) and s.native is not None for s in segments))


def forward_substitution(ns, loops, lower, rhs):
    """Solve ``lower @ x = rhs`` one row per step, the matrix carried through unchanged."""
    def row(i, carry):
        lower, x = carry
        return lower, x.at[i].set((rhs[i] - ns.dot(lower[i], x)) / lower[i, i])
    return loops.fori_loop(0, rhs.shape[0], row, (lower, ns.zeros_like(rhs)))[1]


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


def _triangular_system(rng):
    return np.tril(rng.random((1000, 1000))) + 1000 * np.eye(1000), rng.random(1000)


def _spd_matrix(rng):
    m = rng.random((300, 300))
    return (m @ m.T + 300 * np.eye(300),)


# program -> (the program, its arguments from a random generator)
SOLVER_PROGRAMS = {
    "forward_substitution": (forward_substitution, _triangular_system),
    "gauss_seidel_rows": (gauss_seidel_rows,
                          lambda rng: (rng.random((200, 200)), rng.random((200, 200)))),
    "column_cholesky": (column_cholesky, _spd_matrix),
    "crc32_bytes": (crc32_bytes, lambda rng: (rng.integers(0, 256, 4096).astype(np.uint8),)),
}


class SolverLoops:
    """Loop programs in JAX's style: arrjit against ``jax.jit`` of the same code."""
    params = [list(SOLVER_PROGRAMS), ["arrjit", "jax"]]
    param_names = ["program", "peer"]

    def setup(self, program, peer):
        fn, make_args = SOLVER_PROGRAMS[program]
        args = make_args(np.random.default_rng(0))
        if peer == "arrjit":
            import arrjit.numpy as anp
            self.run = arrjit.jit(lambda *a: fn(anp, lax, *a))
            self.args = args
        else:
            if jax is None:
                raise NotImplementedError("jax is not installed")
            jax.config.update("jax_enable_x64", True)
            jitted = jax.jit(lambda *a: fn(jax.numpy, jax_lax, *a))
            self.run = lambda *a: jitted(*a).block_until_ready()
            self.args = tuple(jax.numpy.asarray(a) for a in args)
        self.run(*self.args)

    def time_call(self, program, peer):
        self.run(*self.args)
