"""The first call as a user meets it: a fresh process, imports included, against JAX; the
first call of 18 realistic programs after start-up (``first_call_programs``); and the first
call of the loop programs against their bodies without the loop (``loop_first_call``).

Two functions: the one-kernel ``tanh(x)*y + exp(-x*x)/(1+y*y)`` and the 6-kernel program of
``bench_tiers`` (256 rows). arrjit runs cold (an empty compile cache) and disk-warm (a cache
an earlier process filled); JAX runs cold (it has no persistent cache here). Everything from
``import`` to the first result is timed (asv's ``timeraw_`` with an empty setup).

``python benchmarks/bench_first_call.py`` prints medians of 5 fresh processes per case, with
``OPENBLAS_NUM_THREADS=1``.
"""
import os
import statistics
import subprocess
import sys
import tempfile

try:                       # asv imports the benchmarks as a package
    from .bench_tiers import PROGRAM_CODE
    from .first_call_programs import PROGRAMS, in_fresh_process
    from .loop_first_call import SOLVER_PROGRAMS, in_fresh_process as loop_in_fresh_process
except ImportError:        # python benchmarks/bench_first_call.py
    from bench_tiers import PROGRAM_CODE
    from first_call_programs import PROGRAMS, in_fresh_process
    from loop_first_call import SOLVER_PROGRAMS, in_fresh_process as loop_in_fresh_process

ONE_KERNEL = """
import numpy as np
x = np.linspace(0, 1, 1000); y = x[::-1].copy()
def one_kernel(xp, x, y):
    return xp.tanh(x) * y + xp.exp(-x * x) / (1 + y * y)
"""

ARRJIT_ONE = """
import arrjit, arrjit.numpy as anp
arrjit.jit(lambda x, y: one_kernel(anp, x, y))(x, y)
"""
JAX_ONE = """
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
jax.block_until_ready(jax.jit(lambda x, y: one_kernel(jnp, x, y))(x, y))
"""
ARRJIT_PROGRAM = """
import arrjit, arrjit.numpy as anp
arrjit.jit(lambda *a: program(anp, *a), compile="eager")(x, w1, w2, y)
"""
JAX_PROGRAM = """
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
jax.block_until_ready(jax.jit(lambda *a: program(jnp, *a))(x, w1, w2, y))
"""


def _program_prelude() -> str:
    # bench_tiers' prelude sets a fresh cache directory itself: keep only the data and program
    return PROGRAM_CODE.format(rows=256).split("import numpy as np", 1)[1]


CASES = {
    "one kernel": (ONE_KERNEL, ARRJIT_ONE, JAX_ONE),
    "6-kernel program": ("import numpy as np" + _program_prelude(), ARRJIT_PROGRAM, JAX_PROGRAM),
}


def _cache_line(cache_dir: str) -> str:
    return f"import os\nos.environ['ARRJIT_CACHE_DIR'] = {cache_dir!r}\n"


class FirstCallInFreshProcess:
    timeout = 300
    repeat = 5
    number = 1
    params = [list(CASES), ["arrjit_cold", "arrjit_disk_warm", "jax_cold"]]
    param_names = ["function", "case"]

    def setup(self, function, case):
        self.warm_dir = os.path.join(tempfile.gettempdir(), "arrjit-asv-first-call")
        prelude, arrjit_code, _ = CASES[function]
        subprocess.run([sys.executable, "-c", _cache_line(self.warm_dir) + prelude + arrjit_code],
                       check=True)

    def timeraw_first_call(self, function, case):
        prelude, arrjit_code, jax_code = CASES[function]
        if case == "jax_cold":
            return prelude + jax_code, ""
        cache = (os.path.join(tempfile.gettempdir(), "arrjit-asv-first-call")
                 if case == "arrjit_disk_warm" else tempfile.mkdtemp(prefix="arrjit-cold-"))
        return _cache_line(cache) + prelude + arrjit_code, ""


class ProgramFirstCall:
    """The 18 programs of ``first_call_programs`` (an unrolled ODE integrator, long
    polynomials, attention, an MLP gradient, stencils, solver loops, ...): the first call in
    a fresh process with an empty cache, after the library's start-up."""

    timeout = 600
    repeat = 1
    number = 1
    params = [list(PROGRAMS), ["arrjit", "jax"]]
    param_names = ["program", "library"]

    def track_first_call(self, program, library):
        return in_fresh_process(program, library)[0]

    track_first_call.unit = "seconds"


class LoopFirstCall:
    """The loop programs of ``bench_loops``: the first call of each as written over the first
    call of its body compiled without the loop (``loop_first_call``), fresh processes."""

    timeout = 600
    repeat = 1
    number = 1
    params = [list(SOLVER_PROGRAMS)]
    param_names = ["program"]

    def track_loop_over_body(self, program):
        return loop_in_fresh_process(program, False) / loop_in_fresh_process(program, True)

    track_loop_over_body.unit = "ratio"


def _timed(code: str) -> float:
    wrapped = "import time\n_t0 = time.perf_counter()\n" + code + \
        "\nprint(time.perf_counter() - _t0)\n"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", wrapped], check=True, capture_output=True,
                         text=True, env=env).stdout
    return float(out.strip().splitlines()[-1])


def main(repeats: int = 5) -> None:
    for function, (prelude, arrjit_code, jax_code) in CASES.items():
        warm = tempfile.mkdtemp(prefix="arrjit-first-call-warm-")
        _timed(_cache_line(warm) + prelude + arrjit_code)
        times: dict[str, list[float]] = {"arrjit cold": [], "arrjit disk-warm": [],
                                         "jax cold": []}
        for _ in range(repeats):
            cold = tempfile.mkdtemp(prefix="arrjit-first-call-cold-")
            times["arrjit cold"].append(_timed(_cache_line(cold) + prelude + arrjit_code))
            times["arrjit disk-warm"].append(_timed(_cache_line(warm) + prelude + arrjit_code))
            try:
                times["jax cold"].append(_timed(prelude + jax_code))
            except subprocess.CalledProcessError:
                pass
        med = {k: statistics.median(v) for k, v in times.items() if v}
        line = "  ".join(f"{k} {v * 1e3:7.0f} ms" for k, v in med.items())
        ratio = (f"  cold/jax {med['arrjit cold'] / med['jax cold']:.2f}x" if "jax cold" in med
                 else "")
        print(f"{function:17s} {line}{ratio}")


if __name__ == "__main__":
    main()
