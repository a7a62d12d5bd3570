"""Patterns that ported NumPy programs are written in, arrjit against NumPy (and JAX where it is
installed): a transposed matmul operand, a slice update of a fresh array, a periodic stencil
through ``roll``, a kernel with many outputs, and float64 ``sin``/``cos``. Compilation happens
in ``setup``; ``time_run`` measures the warm call; ``track_kernels`` counts arrjit's fused
loop nests (a copy would show up as one more)."""
import numpy as np

import arrjit
import arrjit.numpy as anp
from arrjit.cli.bench import _jax


def _dot_transposed(ns, a, b):
    return ns.dot(a, b.T)


def _slice_update(ns, v):
    if ns is np:
        y = np.zeros(v.size + 1)
        y[1:] = v
        return y
    return ns.zeros(v.size + 1).at[1:].set(v)


def _roll_stencil(ns, u):
    return ns.roll(u, 1, axis=0) + ns.roll(u, -1, axis=0) + ns.roll(u, 1, axis=1) \
        + ns.roll(u, -1, axis=1) - 4 * u


def _many_outputs(ns, x):
    return tuple(x * k + k for k in range(32))


def _sin_cos(ns, x):
    return ns.sin(x) + ns.cos(x)


def _rng(seed=0):
    return np.random.default_rng(seed)


CASES = {
    "dot(a, b.T) 300x300": (_dot_transposed, lambda: (_rng().random((300, 300)),
                                                      _rng(1).random((300, 300)))),
    "zeros(n).at[1:].set(v) 1M": (_slice_update, lambda: (_rng().random(1_000_000 - 1),)),
    "roll 5-point stencil 512x512": (_roll_stencil, lambda: (_rng().random((512, 512)),)),
    "32 outputs of x*k+k, 1M": (_many_outputs, lambda: (_rng().random(1_000_000),)),
    "sin(x)+cos(x) float64 1M": (_sin_cos, lambda: (_rng().random(1_000_000) * 10,)),
}


class Programs:
    params = [list(CASES), ["arrjit", "numpy", "jax"]]
    param_names = ["case", "peer"]
    timeout = 300

    def setup(self, case, peer):
        fn, make = CASES[case]
        inputs = make()
        if peer == "arrjit":
            jitted = arrjit.jit(lambda *xs: fn(anp, *xs))
            self.run = lambda: jitted(*inputs)
        elif peer == "numpy":
            self.run = lambda: fn(np, *inputs)
        else:
            jax = _jax()
            if jax is None:
                raise NotImplementedError("JAX is not installed")
            import jax.numpy as jnp
            jitted = jax.jit(lambda *xs: fn(jnp, *xs))
            jinputs = [jnp.asarray(x) for x in inputs]
            self.run = lambda: jax.block_until_ready(jitted(*jinputs))
        self.run()

    def time_run(self, case, peer):
        self.run()


class ProgramKernels:
    params = [list(CASES)]
    param_names = ["case"]
    timeout = 300

    def setup(self, case):
        fn, make = CASES[case]
        self.inputs = make()
        self.jitted = arrjit.jit(lambda *xs: fn(anp, *xs))

    def track_kernels(self, case):
        return len(self.jitted.lower(*self.inputs).kernels)


if __name__ == "__main__":   # a quick side-by-side table: python benchmarks/bench_programs.py
    import time

    def median_ms(run, repeats=15):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        return 1e3 * sorted(times)[repeats // 2]

    print(f"{'case':34} {'arrjit ms':>10} {'numpy ms':>10} {'jax ms':>10} {'numpy/arrjit':>13}")
    for case in CASES:
        row = {}
        for peer in ("arrjit", "numpy", "jax"):
            bench = Programs()
            try:
                bench.setup(case, peer)
            except NotImplementedError:
                continue
            row[peer] = median_ms(bench.run)
        jax_ms = f"{row['jax']:10.3f}" if "jax" in row else f"{'-':>10}"
        print(f"{case:34} {row['arrjit']:10.3f} {row['numpy']:10.3f} {jax_ms} "
              f"{row['numpy'] / row['arrjit']:13.2f}")
