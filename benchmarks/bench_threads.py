"""Where threads start to pay: an arithmetic chain and a transcendental chain at sizes around
the crossover, on one thread and on all cores. ``arrjit.config.parallel_threshold`` (in units
of estimated work, ``Kernel.work``) and ``fuse.COSTLY_WEIGHT`` come from these runs."""
import numpy as np

import arrjit
import arrjit.numpy as anp
from arrjit.config import OPTIONS

CHAINS = {
    "a*b+c*d-e": lambda a, b, c: a * b + c * a - b,
    "exp(-a*a)*tanh(b)+sqrt(c)": lambda a, b, c: anp.exp(-a * a) * anp.tanh(b) + anp.sqrt(c),
}


class ThreadCrossover:
    params = [sorted(CHAINS), [1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22], [1, 0]]
    param_names = ["chain", "n", "threads"]   # threads 0: all cores

    def setup(self, chain, n, threads):
        arrjit.config.update("num_threads", threads)
        arrjit.config.update("parallel_threshold", 1)
        rng = np.random.default_rng(0)
        self.inputs = tuple(rng.random(n) + 0.5 for _ in range(3))
        self.f = arrjit.jit(CHAINS[chain])
        self.f(*self.inputs)

    def teardown(self, chain, n, threads):
        arrjit.config.update("num_threads", 0)
        arrjit.config.update("parallel_threshold", OPTIONS["parallel_threshold"].default)

    def time_chain(self, chain, n, threads):
        self.f(*self.inputs)
