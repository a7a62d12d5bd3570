"""The first call of a small realistic program in a fresh process: arrjit compiling on the
call (``compile="eager"``), arrjit answering with the interpreter while it compiles in the
background (``compile="background"``), JAX's first call (trace + XLA compile), and NumPy
running the same code eagerly. Imports are untimed (asv's ``timeraw_`` setup); each process
starts with an empty compile cache.

The program: ``tanh(x @ w1)``, row normalisation, ``@ w2``, softmax, cross-entropy mean,
accuracy by argmax, two column reductions (6 kernels, as in the compile-latency issue).
``python benchmarks/bench_tiers.py`` prints medians of 5 fresh processes per case, for a
small batch (256 rows) and a large one (65536 rows)."""
import os
import statistics
import subprocess
import sys

PROGRAM_CODE = """
import os, tempfile, time
os.environ["ARRJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="arrjit-tiers-")
import numpy as np
rows = {rows}
rng = np.random.default_rng(0)
x = rng.standard_normal((rows, 64)); w1 = rng.standard_normal((64, 128)) * 0.1
w2 = rng.standard_normal((128, 10)) * 0.1; y = np.eye(10)[rng.integers(0, 10, rows)]

def program(xp, x, w1, w2, y):
    h = xp.tanh(x @ w1)
    h = (h - h.mean(axis=1, keepdims=True)) / (h.std(axis=1, keepdims=True) + 1e-5)
    logits = h @ w2
    z = logits - logits.max(axis=1, keepdims=True)
    p = xp.exp(z) / xp.sum(xp.exp(z), axis=1, keepdims=True)
    loss = -xp.mean(xp.log(xp.sum(p * y, axis=1)))
    acc = xp.mean(xp.argmax(logits, axis=1) == xp.argmax(y, axis=1))
    return loss, acc, h.sum(axis=0), p.max(axis=0)
"""

CASES = {
    "arrjit_eager": ("import arrjit, arrjit.numpy as anp\n"
                     "from arrjit.runtime.compile import prepare_numba\nprepare_numba()\n"
                     "from numba.core.registry import cpu_target\n"
                     "cpu_target.target_context.refresh()\n"
                     "f = arrjit.jit(lambda *a: program(anp, *a))",
                     "f(x, w1, w2, y)"),
    "arrjit_background": ("import arrjit, arrjit.numpy as anp\n"
                          "from arrjit.runtime.compile import prepare_numba\nprepare_numba()\n"
                          "from numba.core.registry import cpu_target\n"
                          "cpu_target.target_context.refresh()\n"
                          "f = arrjit.jit(lambda *a: program(anp, *a), compile='background')",
                          "f(x, w1, w2, y)"),
    "jax": ("import jax, jax.numpy as jnp\njax.config.update('jax_enable_x64', True)\n"
            "f = jax.jit(lambda *a: program(jnp, *a))\n"
            "args = [jnp.asarray(a) for a in (x, w1, w2, y)]",
            "jax.block_until_ready(f(*args))"),
    "numpy": ("", "program(np, x, w1, w2, y)"),
}


def _timed(case: str, rows: int) -> float:
    prepare, call = CASES[case]
    code = (PROGRAM_CODE.format(rows=rows) + prepare + "\nt0 = time.perf_counter()\n" + call
            + "\nprint(time.perf_counter() - t0)\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout
    return float(out.strip().splitlines()[-1])


class FirstCallTiers:
    timeout = 300
    repeat = 5
    number = 1
    params = ["arrjit_eager", "arrjit_background", "jax", "numpy"]
    param_names = ["case"]

    def timeraw_first_call(self, case):
        prepare, call = CASES[case]
        return call, PROGRAM_CODE.format(rows=256) + prepare


def main(repeats: int = 5) -> None:
    for rows in (256, 65536):
        medians = {}
        for _ in range(repeats):
            for case in CASES:
                try:
                    medians.setdefault(case, []).append(_timed(case, rows))
                except subprocess.CalledProcessError:
                    medians.pop(case, None)      # a missing peer (jax) is left out
        med = {k: statistics.median(v) for k, v in medians.items() if len(v) == repeats}
        line = "  ".join(f"{k} {v * 1e3:8.1f} ms" for k, v in med.items())
        ratios = ""
        if "jax" in med:
            ratios = "  ".join(f"{k}/jax {med[k] / med['jax']:.2f}x" for k in
                               ("arrjit_eager", "arrjit_background"))
        print(f"rows {rows:6d}: {line}\n             {ratios}  "
              f"background/numpy {med['arrjit_background'] / med['numpy']:.2f}x")


if __name__ == "__main__":
    main()
