"""The first call of a loop program against the first call of its body compiled without the
loop: each program of ``bench_loops.SOLVER_PROGRAMS`` once as written, once with every loop
replaced by one pass of its body (``_once``: ``fori_loop`` calls the body at the lower bound,
``scan`` takes the first step, ``while_loop`` one iteration), so both compile the same
kernels and only the first compiles the loop drivers around them. Fresh processes, empty
compile cache, after arrjit's start-up (as ``first_call_programs``).

``python benchmarks/loop_first_call.py [--repeats N] [NAME ...]`` prints, per program, both
first calls and their ratio.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_loops import SOLVER_PROGRAMS  # noqa: E402


def _once(loops, zero):
    """``loops`` (``arrjit.lax``) with each loop replaced by one pass of its body. A
    ``fori_loop``'s counter is a run-time value (``zero``, a traced 0, plus the lower bound)
    known to lie between the bounds, as the loop's counter is: the body's positions are
    checked where the loop's are, and not where a constant would let them go unchecked."""
    import arrjit.numpy as anp
    from arrjit.tree_util import tree_map

    def fori_loop(lower, upper, body, init):
        return body(anp.clip(zero + lower, lower, upper - 1), init)

    def while_loop(cond, body, init):
        return body(init)

    def scan(f, init, xs=None, length=None):
        x = None if xs is None else tree_map(lambda a: a[0], xs)
        carry, y = f(init, x)
        return carry, tree_map(lambda a: anp.expand_dims(a, 0), y)

    names = {n: getattr(loops, n) for n in dir(loops) if not n.startswith("_")}
    return SimpleNamespace(**{**names, "fori_loop": fori_loop, "while_loop": while_loop,
                              "scan": scan})


def first_call(program: str, once: bool) -> float:
    """Seconds of the first call of ``program`` (its body once, with ``once``) in this
    process, after arrjit's start-up."""
    import time

    from numba import njit

    import arrjit
    import arrjit.backends.cpu.mathlib  # noqa: F401
    import arrjit.numpy as anp
    from arrjit.runtime.compile import prepare_numba
    prepare_numba()
    njit(lambda: 0)()
    fn, make_args = SOLVER_PROGRAMS[program]
    args = make_args(np.random.default_rng(0))
    if once:
        jitted = arrjit.jit(lambda zero, *a: fn(anp, _once(arrjit.lax, zero), *a))
        args = (np.int64(0), *args)
    else:
        jitted = arrjit.jit(lambda *a: fn(anp, arrjit.lax, *a))
    t0 = time.perf_counter()
    jitted(*args)
    return time.perf_counter() - t0


def in_fresh_process(program: str, once: bool) -> float:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               ARRJIT_CACHE_DIR=tempfile.mkdtemp(prefix="arrjit-loop-first-call-"))
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import loop_first_call as p; print(p.first_call({program!r}, {once!r}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout
    return float(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("names", nargs="*", default=list(SOLVER_PROGRAMS))
    opts = parser.parse_args()
    print("| program | loop first call s | body once s | loop/body |")
    print("|---|---|---|---|")
    ratios = []
    for name in opts.names:
        loop = statistics.median(in_fresh_process(name, False) for _ in range(opts.repeats))
        body = statistics.median(in_fresh_process(name, True) for _ in range(opts.repeats))
        ratios.append(loop / body)
        print(f"| {name} | {loop:.2f} | {body:.2f} | {loop / body:.2f} |", flush=True)
    print(f"median loop/body {statistics.median(ratios):.2f}, worst {max(ratios):.2f}")


if __name__ == "__main__":
    main()
