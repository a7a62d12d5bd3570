"""The 32 workloads of ``examples/science_suite.py`` at their benchmark sizes: arrjit's warm
call against NumPy running the same program and against ``jax.jit`` of it.

``python benchmarks/bench_science.py [NAME ...]`` prints the table workload | runs | correct |
compile | NumPy ratio | JAX ratio, where a ratio is the peer's time over arrjit's (above 1:
arrjit is faster) and compile is arrjit's first call with an empty compile cache. A workload
that cannot be traced (its output shape depends on its values) says so and why.
"""
from __future__ import annotations

import copy
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _load_suite():
    path = Path(__file__).resolve().parents[1] / "examples" / "science_suite.py"
    spec = importlib.util.spec_from_file_location("science_suite", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("science_suite", module)
    spec.loader.exec_module(module)
    return module


suite = _load_suite()
SUITE = suite.SUITE


def arrjit_callable(name: str):
    import arrjit
    w = SUITE[name]
    return arrjit.jit(w.bind(suite.arrjit_arrays()), static_argnums=w.static)


def jax_callable(name: str):
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    w = SUITE[name]
    jitted = jax.jit(w.bind(suite.jax_arrays()), static_argnums=w.static)

    def run(*args):
        args = [a if i in w.static or not isinstance(a, np.ndarray) else jax.numpy.asarray(a)
                for i, a in enumerate(args)]
        return jax.block_until_ready(jitted(*args))
    return run


def numpy_callable(name: str):
    return SUITE[name].bind(suite.NUMPY)


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


def matches(got, want) -> bool:
    """NumPy's answer to float64 rounding (sums may be ordered differently)."""
    got, want = _leaves(got), _leaves(want)
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        scale = max(1.0, float(np.max(np.abs(w), initial=0)))
        if not np.allclose(g, w, rtol=1e-7, atol=1e-9 * scale, equal_nan=True):
            return False
    return True


def _median_time(fn, args, writes_arguments: bool, repeats: int) -> float:
    """The median over ``repeats`` samples of one call's time, after two warm-up calls. A
    sample times a batch of calls lasting at least ``SAMPLE_SECONDS`` (one call each where
    the program writes into its arguments: those get fresh copies per call)."""
    def once() -> float:
        call_args = copy.deepcopy(args) if writes_arguments else args
        t0 = time.perf_counter()
        fn(*call_args)
        return time.perf_counter() - t0

    first = min(once(), once())
    batch = 1 if writes_arguments else max(1, min(1000, int(SAMPLE_SECONDS / max(first, 1e-7))))
    times = []
    for _ in range(repeats):
        if batch == 1:
            times.append(once())
            continue
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(*args)
        times.append((time.perf_counter() - t0) / batch)
    return statistics.median(times)


SAMPLE_SECONDS = 2e-3


class ScienceSuite:
    """Warm calls; compilation happens in ``setup``."""
    params = [sorted(SUITE), ["arrjit", "numpy", "jax"]]
    param_names = ["workload", "peer"]
    timeout = 600

    def setup(self, workload, peer):
        make = {"arrjit": arrjit_callable, "numpy": numpy_callable, "jax": jax_callable}[peer]
        fn = make(workload)
        if fn is None:
            raise NotImplementedError("JAX is not installed")
        self.args = SUITE[workload].make_args()
        try:
            fn(*copy.deepcopy(self.args))
        except Exception as exc:          # a workload the peer cannot trace is skipped by asv
            raise NotImplementedError(f"{peer} cannot run {workload}: {exc}") from exc
        from arrjit.runtime import background
        background.wait()
        self.fn = fn

    def time_call(self, workload, peer):
        self.fn(*self.args)


def row(name: str, repeats: int = 7) -> dict:
    w = SUITE[name]
    args = w.make_args()
    want = numpy_callable(name)(*copy.deepcopy(args))
    out = {"workload": name, "runs": False, "correct": False}
    f = arrjit_callable(name)
    t0 = time.perf_counter()
    try:
        got = f(*copy.deepcopy(args))
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}"
        return out
    out.update(runs=True, compile=time.perf_counter() - t0, correct=matches(got, want))
    from arrjit.runtime import background
    background.wait()   # the thread workers that compile after the first call
    t_arrjit = _median_time(f, args, w.writes_arguments, repeats)
    out["numpy"] = _median_time(numpy_callable(name), args, w.writes_arguments,
                                repeats) / t_arrjit
    jf = jax_callable(name)
    if jf is not None:
        try:
            jf(*copy.deepcopy(args))
            out["jax"] = _median_time(jf, args, w.writes_arguments, repeats) / t_arrjit
        except Exception as exc:
            out["jax_error"] = type(exc).__name__
    return out


def main(names: list[str]) -> None:
    import arrjit
    arrjit.jit(lambda x: x + 1)(np.ones(3))            # numba's start-up, paid once
    print("| workload | runs | correct | compile | NumPy | JAX |\n|---|---|---|---|---|---|")
    for name in names or sorted(SUITE):
        r = row(name)
        if not r["runs"]:
            print(f"| {name} | no | - | - | - | {r['error']} |", flush=True)
            continue
        jax_text = f"{r['jax']:.2f}x" if "jax" in r else r.get("jax_error", "-")
        print(f"| {name} | yes | {'yes' if r['correct'] else 'NO'} | {r['compile']:.2f} s "
              f"| {r['numpy']:.2f}x | {jax_text} |", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("ARRJIT_CACHE_DIR", tempfile.mkdtemp(prefix="arrjit-science-"))
    main(sys.argv[1:])
