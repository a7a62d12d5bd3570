"""Thread scaling: arrjit on 1, 2, 4, 8 threads and its default, against numba ``prange``
into a preallocated output, numexpr, JAX at its default threads, and the machine's measured
triad bandwidth.

``python benchmarks/bench_threads.py [--quick]`` prints the table (medians; milliseconds;
GB/s for the memory-bound chains). arrjit is called as ``y = f(...)`` in a loop, without
donation, so its time includes its outputs. asv runs ``ThreadScaling`` and ``Crossover``.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

import arrjit
import arrjit.numpy as anp
from arrjit.config import OPTIONS
from arrjit.runtime import background

ROW = 256   # the last axis of the two-dimensional workloads


@dataclass(frozen=True)
class Workload:
    name: str
    make: Callable[[int], tuple]          # n elements -> inputs
    arrjit: Callable                      # written against a NumPy-like namespace
    numexpr: str | None = None
    numba: Callable[[], Callable] | None = None   # -> f(*inputs, out)
    out: Callable[[tuple], np.ndarray] | None = None
    streams: int = 0                      # arrays read and written (memory-bound chains)


def _vectors(count: int) -> Callable[[int], tuple]:
    def make(n: int) -> tuple:
        rng = np.random.default_rng(n)
        return tuple(rng.random(n) + 0.5 for _ in range(count))
    return make


def _matrix(n: int) -> tuple:
    return (np.random.default_rng(n).standard_normal((max(n // ROW, 1), ROW)),)


def _softmax(ns, x):
    e = ns.exp(x - ns.max(x, axis=1, keepdims=True))
    return e / ns.sum(e, axis=1, keepdims=True)


def _layer_norm(ns, x):
    mean = ns.mean(x, axis=1, keepdims=True)
    var = ns.mean((x - mean) ** 2, axis=1, keepdims=True)
    return (x - mean) / ns.sqrt(var + 1e-5)


def _numba_axpb():
    from numba import njit, prange

    @njit(parallel=True, fastmath=False)
    def f(a, b, c, out):
        for i in prange(a.shape[0]):
            out[i] = a[i] * b[i] + c[i]
    return f


def _numba_chain():
    from numba import njit, prange

    @njit(parallel=True)
    def f(a, b, c, d, e, out):
        for i in prange(a.shape[0]):
            out[i] = a[i] * b[i] + c[i] * d[i] - e[i]
    return f


def _numba_transcendental():
    import math

    from numba import njit, prange

    @njit(parallel=True)
    def f(a, b, c, out):
        for i in prange(a.shape[0]):
            out[i] = math.exp(-a[i] * a[i]) * math.tanh(b[i]) + math.sqrt(c[i])
    return f


def _numba_sum():
    from numba import njit, prange

    @njit(parallel=True)
    def f(a, out):
        total = 0.0
        for i in prange(a.shape[0]):
            total += a[i]
        out[0] = total
    return f


def _numba_row_norms():
    import math

    from numba import njit, prange

    @njit(parallel=True)
    def f(x, out):
        for i in prange(x.shape[0]):
            total = 0.0
            for j in range(x.shape[1]):
                total += x[i, j] * x[i, j]
            out[i] = math.sqrt(total)
    return f


WORKLOADS = [
    Workload("a*b+c", _vectors(3), lambda ns, a, b, c: a * b + c, "a * b + c", _numba_axpb,
             lambda x: np.empty_like(x[0]), streams=4),
    Workload("a*b+c*d-e", _vectors(5), lambda ns, a, b, c, d, e: a * b + c * d - e,
             "a * b + c * d - e", _numba_chain, lambda x: np.empty_like(x[0]), streams=6),
    Workload("exp(-a*a)*tanh(b)+sqrt(c)", _vectors(3),
             lambda ns, a, b, c: ns.exp(-a * a) * ns.tanh(b) + ns.sqrt(c),
             "exp(-a * a) * tanh(b) + sqrt(c)", _numba_transcendental,
             lambda x: np.empty_like(x[0])),
    Workload("sum(a)", _vectors(1), lambda ns, a: ns.sum(a), "sum(a)", _numba_sum,
             lambda x: np.empty(1)),
    Workload("sqrt(sum(x*x, 1))", _matrix, lambda ns, x: ns.sqrt(ns.sum(x * x, axis=1)),
             None, _numba_row_norms, lambda x: np.empty(x[0].shape[0])),
    Workload("sum(x, 0)", _matrix, lambda ns, x: ns.sum(x, axis=0)),
    Workload("softmax", _matrix, _softmax),
    Workload("layer norm", _matrix, _layer_norm),
]
THREADS = [1, 2, 4, 8, 0]   # 0: arrjit's default (every core)


def _median_ms(run: Callable[[], object], budget_s: float = 0.4, most: int = 25) -> float:
    run()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (len(times) < most and time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def triad_gb_per_s(n: int = 1 << 24) -> float:
    """STREAM triad ``a = b + s * c`` (numba ``prange``, every core): bytes moved / time."""
    from numba import njit, prange

    @njit(parallel=True)
    def triad(a, b, c, s):
        for i in prange(a.shape[0]):
            a[i] = b[i] + s * c[i]

    a, b, c = np.empty(n), np.ones(n), np.ones(n)
    triad(a, b, c, 3.0)
    return 3 * 8 * n / (_median_ms(lambda: triad(a, b, c, 3.0)) * 1e-3) / 1e9


def _peers(w: Workload, inputs: tuple) -> dict[str, Callable[[], object]]:
    peers: dict[str, Callable[[], object]] = {}
    if w.numba is not None and w.out is not None:
        f, out = w.numba(), w.out(inputs)
        peers["numba prange"] = lambda: f(*inputs, out)
    if w.numexpr is not None:
        try:
            import numexpr
        except ImportError:
            pass
        else:
            names = dict(zip("abcde", inputs))
            peers["numexpr"] = lambda: numexpr.evaluate(w.numexpr, local_dict=names)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return peers
    jax.config.update("jax_enable_x64", True)
    jf = jax.jit(lambda *xs: w.arrjit(jnp, *xs))
    device = tuple(jnp.asarray(x) for x in inputs)
    peers["jax"] = lambda: jf(*device).block_until_ready()
    return peers


def table(sizes: list[int]) -> list[str]:
    """The scaling table's lines."""
    triad = triad_gb_per_s()
    lines = [f"machine: {platform.machine()}, {os.cpu_count()} cores; "
             f"{time.strftime('%Y-%m-%d')}; triad bandwidth {triad:.1f} GB/s",
             "times in ms (median); T = arrjit threads (default: all cores); "
             "GB/s and % of triad for the memory-bound chains at the default",
             "| workload | n | T=1 | T=2 | T=4 | T=8 | default | numba prange | numexpr | jax "
             "| default vs T=1 | GB/s (% triad) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for w in WORKLOADS:
        for n in sizes:
            inputs = w.make(n)
            f = arrjit.jit(lambda *xs, w=w: w.arrjit(anp, *xs))
            f(*inputs)   # compiled for every core; each run then takes T of them
            background.wait()   # the kernels' thread workers compile after the first call
            times = {}
            for t in THREADS:
                arrjit.config.update("num_threads", t)
                times[t] = _median_ms(lambda: f(*inputs))
            arrjit.config.update("num_threads", OPTIONS["num_threads"].default)
            peers = {name: _median_ms(run) for name, run in _peers(w, inputs).items()}
            row = [w.name, f"2^{n.bit_length() - 1}"]
            row += [f"{times[t]:.3f}" for t in THREADS]
            row += [f"{peers[p]:.3f}" if p in peers else "-"
                    for p in ("numba prange", "numexpr", "jax")]
            row.append(f"{times[1] / times[0]:.2f}x")
            if w.streams:
                rate = w.streams * 8 * n / (times[0] * 1e-3) / 1e9
                row.append(f"{rate:.1f} ({100 * rate / triad:.0f} %)")
            else:
                row.append("-")
            lines.append("| " + " | ".join(row) + " |")
            print(lines[-1], flush=True)
    return lines


class ThreadScaling:
    """asv: each workload at 2^20 and 2^24 elements on 1 thread and the default."""
    params = [[w.name for w in WORKLOADS], [1 << 20, 1 << 24], [1, 0]]
    param_names = ["workload", "n", "threads"]

    def setup(self, name, n, threads):
        (w,) = [w for w in WORKLOADS if w.name == name]
        self.inputs = w.make(n)
        self.f = arrjit.jit(lambda *xs: w.arrjit(anp, *xs))
        self.f(*self.inputs)
        background.wait()
        arrjit.config.update("num_threads", threads)

    def teardown(self, name, n, threads):
        arrjit.config.update("num_threads", OPTIONS["num_threads"].default)

    def time_call(self, name, n, threads):
        self.f(*self.inputs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes 2^16 and 2^20 only")
    args = parser.parse_args()
    sizes = [1 << 16, 1 << 20] if args.quick else [1 << k for k in range(14, 25, 2)]
    table(sizes)


if __name__ == "__main__":
    main()
