"""The 32 numpy-benchmarks kernels (``examples/ported_kernels.py``) at the suite's sizes:
arrjit's warm call against NumPy running the same code and against ``jax.jit`` of it.

``python benchmarks/bench_ported.py [NAME ...]`` prints the table kernel | runs | correct |
compile | NumPy ratio | JAX ratio, where a ratio is the peer's time over arrjit's (above 1:
arrjit is faster) and compile is arrjit's first call with an empty compile cache. A kernel
that cannot be traced (its output shape depends on its values) says so and why.
"""
from __future__ import annotations

import copy
import functools
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _ported():
    path = Path(__file__).resolve().parents[1] / "examples" / "ported_kernels.py"
    spec = importlib.util.spec_from_file_location("ported_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ported_kernels", module)
    spec.loader.exec_module(module)
    return module


KERNELS = _ported().KERNELS


def arrjit_callable(name: str):
    import arrjit
    import arrjit.numpy as anp
    k = KERNELS[name]
    return arrjit.jit(functools.partial(k.fn, anp), static_argnums=k.static)


def jax_callable(name: str):
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    k = KERNELS[name]
    jitted = jax.jit(functools.partial(k.fn, jnp), static_argnums=k.static)

    def run(*args):
        args = [a if i in k.static or not isinstance(a, np.ndarray) else jnp.asarray(a)
                for i, a in enumerate(args)]
        return jax.block_until_ready(jitted(*args))
    return run


def numpy_callable(name: str):
    return functools.partial(KERNELS[name].fn, np)


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
        if not np.allclose(g, w, rtol=1e-7, atol=1e-9 * max(1.0, float(np.max(np.abs(w),
                                                                                initial=0))),
                           equal_nan=True):
            return False
    return True


def _median_time(fn, args, mutates: bool, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        call_args = copy.deepcopy(args) if mutates else args
        t0 = time.perf_counter()
        fn(*call_args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class PortedKernels:
    """Warm calls; compilation happens in ``setup``."""
    params = [sorted(KERNELS), ["arrjit", "numpy", "jax"]]
    param_names = ["kernel", "peer"]
    timeout = 600

    def setup(self, kernel, peer):
        make = {"arrjit": arrjit_callable, "numpy": numpy_callable, "jax": jax_callable}[peer]
        fn = make(kernel)
        if fn is None or (peer == "jax" and kernel in JAX_NOT_RUN):
            raise NotImplementedError("JAX is not installed or not run on this kernel")
        self.args = KERNELS[kernel].make_args()
        try:
            fn(*copy.deepcopy(self.args))
        except Exception as exc:          # a kernel the peer cannot trace is skipped by asv
            raise NotImplementedError(f"{peer} cannot run {kernel}: {exc}") from exc
        self.fn = fn

    def time_call(self, kernel, peer):
        self.fn(*self.args)


# Measured once and not repeated by the table: jax.jit of local_maxima (14400 unrolled scalar
# updates at the suite's size) was still compiling after 4 minutes, holding 6 GB.
JAX_NOT_RUN = {"local_maxima": "compile >4 min"}


def row(name: str, repeats: int = 7) -> dict:
    k = KERNELS[name]
    args = k.make_args()
    want = numpy_callable(name)(*copy.deepcopy(args))
    out = {"kernel": name, "runs": False, "correct": False}
    f = arrjit_callable(name)
    t0 = time.perf_counter()
    try:
        got = f(*copy.deepcopy(args))
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}"
        return out
    out.update(runs=True, compile=time.perf_counter() - t0, correct=matches(got, want))
    t_arrjit = _median_time(f, args, k.mutates, repeats)
    out["numpy"] = _median_time(numpy_callable(name), args, k.mutates, repeats) / t_arrjit
    jf = jax_callable(name)
    if name in JAX_NOT_RUN:
        out["jax_error"] = JAX_NOT_RUN[name]
    elif jf is not None:
        try:
            jf(*copy.deepcopy(args))
            out["jax"] = _median_time(jf, args, k.mutates, repeats) / t_arrjit
        except Exception as exc:
            out["jax_error"] = type(exc).__name__
    return out


def main(names: list[str]) -> None:
    import arrjit
    arrjit.jit(lambda x: x + 1)(np.ones(3))            # numba's start-up, paid once
    print(f"{'kernel':26s} {'runs':5s} {'correct':8s} {'compile':>8s} {'NumPy':>7s} {'JAX':>7s}")
    for name in names or sorted(KERNELS):
        r = row(name)
        if not r["runs"]:
            print(f"{name:26s} no    -        {'-':>8s}  {r['error']}")
            continue
        jax_text = f"{r['jax']:6.2f}x" if "jax" in r else r.get("jax_error", "-")
        print(f"{name:26s} yes   {'yes' if r['correct'] else 'NO':8s} {r['compile']:7.2f}s "
              f"{r['numpy']:6.2f}x {jax_text:>7s}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("ARRJIT_CACHE_DIR", tempfile.mkdtemp(prefix="arrjit-ported-"))
    main(sys.argv[1:])
