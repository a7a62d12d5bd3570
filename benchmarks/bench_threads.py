"""Where threads start to pay: an arithmetic chain and a transcendental chain at sizes around
the crossover, on one thread and on all cores. ``arrjit.config.parallel_threshold`` (in units
of estimated work, ``backends.cpu.cost.work``) and ``cost.COSTLY_WEIGHT`` come from these runs; the
default ``spin_wait_us`` from ``ThreadHandover``."""
import time

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


class ThreadHandover:
    """A 1M-element float32 chain on all cores, called back to back or after 3 ms idle (the
    sleep is inside the timing), with helpers that spin for the next job or sleep at once."""
    params = [[0, 500], ["back_to_back", "after_idle"]]
    param_names = ["spin_wait_us", "calls"]

    def setup(self, spin_wait_us, calls):
        arrjit.config.update("spin_wait_us", spin_wait_us)
        arrjit.config.update("parallel_threshold", 1)
        rng = np.random.default_rng(0)
        self.inputs = tuple(rng.random(1 << 20, dtype=np.float32) for _ in range(3))
        self.f = arrjit.jit(CHAINS["a*b+c*d-e"])
        self.f(*self.inputs)

    def teardown(self, spin_wait_us, calls):
        for name in ("spin_wait_us", "parallel_threshold"):
            arrjit.config.update(name, OPTIONS[name].default)

    def time_call(self, spin_wait_us, calls):
        if calls == "after_idle":
            time.sleep(0.003)
        self.f(*self.inputs)
