"""Elementwise chains: arrjit against NumPy, numexpr and a hand-written numba loop.

Compilation happens in ``setup``; ``time_*`` measures the warm steady state.
"""
import numpy as np

import arrjit
import arrjit.numpy as anp

try:
    import numexpr
except ImportError:  # a missing peer is skipped, never faked
    numexpr = None


class ChainFloat64:
    params = [[1 << 12, 1 << 22]]
    param_names = ["n"]

    def setup(self, n):
        rng = np.random.default_rng(0)
        self.a, self.b, self.c, self.d, self.e = (rng.random(n) for _ in range(5))
        self.f = arrjit.jit(lambda a, b, c, d, e: a * b + c * d - e)
        self.f(self.a, self.b, self.c, self.d, self.e)

    def time_arrjit(self, n):
        self.f(self.a, self.b, self.c, self.d, self.e)

    def time_numpy(self, n):
        self.a * self.b + self.c * self.d - self.e

    def time_numexpr(self, n):
        if numexpr is None:
            raise NotImplementedError("numexpr is not installed")
        numexpr.evaluate("a * b + c * d - e", local_dict=dict(a=self.a, b=self.b, c=self.c,
                                                                d=self.d, e=self.e))


class WarmCallOverhead:
    """The hot path: a cached call on 3-element inputs."""

    def setup(self):
        self.x = np.ones(3)
        self.f = arrjit.jit(lambda x: x + 1)
        self.f(self.x)

    def time_cached_call(self):
        self.f(self.x)

    def track_kernel_count_softmax_free_chain(self):
        lowered = arrjit.jit(lambda x: anp.exp(x) * 2 + x).lower(self.x)
        return len(lowered.kernels)
