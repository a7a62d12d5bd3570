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
