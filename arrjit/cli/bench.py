"""Side-by-side benchmarks: ``python -m arrjit bench [--quick] [--plot FILE] [--json FILE]``.

Each workload is written once against a namespace (``numpy`` or ``arrjit.numpy``) and run by
every peer that is installed: NumPy, numexpr, a hand-written numba loop, JAX on the CPU. Peers
are timed interleaved (one round of every peer, repeated), and the table reports medians as
ratios ``peer time / arrjit time`` (above 1: arrjit is faster) with arrjit's achieved GB/s
against this machine's copy bandwidth measured in the same run. The asv suite in
``benchmarks/`` imports the same workloads.
"""
from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import arrjit
import arrjit.numpy as anp
from .. import lax
from ..runtime import background

PEERS = ("numpy", "numexpr", "numba", "jax")


@dataclass
class Workload:
    name: str
    make: Callable[[int, np.dtype], tuple]         # (size, dtype) -> inputs
    fn: Callable                                   # fn(ns, *inputs), ns = numpy-like namespace
    nbytes: Callable[[tuple], int]                 # bytes read + written by one call
    numexpr: str | None = None
    numba: Callable | None = None                  # builds the hand-written numba function
    dtypes: tuple = ("float64",)
    full_size: int = 1 << 22
    quick_size: int = 1 << 18
    kernels: int | None = None                     # the expected kernel count
    extras: dict = field(default_factory=dict)


def _vectors(k):
    def make(n, dtype):
        rng = np.random.default_rng(0)
        return tuple(rng.random(n).astype(dtype) + 0.5 for _ in range(k))
    return make


def _rows(cols):
    def make(n, dtype):
        return (np.random.default_rng(0).standard_normal((max(n // cols, 1), cols)).astype(dtype),)
    return make


def _bytes_of(extra_out=1):
    def count(inputs):
        return sum(x.nbytes for x in inputs) + extra_out * inputs[0].nbytes
    return count


def _numba_chain():
    from numba import njit, prange

    @njit(parallel=True, fastmath=False, nogil=True)
    def chain(a, b, c, d, e):
        out = np.empty_like(a)
        for i in prange(a.shape[0]):
            out[i] = a[i] * b[i] + c[i] * d[i] - e[i]
        return out
    return chain


def _numba_transcendental():
    from numba import njit, prange

    @njit(parallel=True, nogil=True)
    def trans(a, b, c):
        out = np.empty_like(a)
        for i in prange(a.shape[0]):
            out[i] = np.exp(-a[i] * a[i]) * np.tanh(b[i]) + np.sqrt(c[i])
        return out
    return trans


def _numba_dot():
    from numba import njit, prange

    @njit(parallel=True, nogil=True, fastmath={"reassoc"})
    def dot(a, b):
        acc = 0.0
        for i in prange(a.shape[0]):
            acc += a[i] * b[i]
        return acc
    return dot


def _numba_sum_exp():
    from numba import njit, prange

    @njit(parallel=True, nogil=True, fastmath={"reassoc"})
    def sum_exp(a):
        acc = 0.0
        for i in prange(a.shape[0]):
            acc += np.exp(a[i])
        return acc
    return sum_exp


def softmax(ns, x):
    e = ns.exp(x - ns.max(x, axis=-1, keepdims=True))
    return e / ns.sum(e, axis=-1, keepdims=True)


def layernorm(ns, x):
    mean = ns.mean(x, axis=-1, keepdims=True)
    var = ns.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / ns.sqrt(var + 1e-5)


def logsumexp(ns, x):
    m = ns.max(x, axis=-1, keepdims=True)
    return ns.log(ns.sum(ns.exp(x - m), axis=-1)) + m[..., 0]


def dense_relu(ns, x, w, b):
    return ns.maximum(x @ w + b, 0)


def kmeans_assign(ns, points, centroids):
    d = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(-1)
    return ns.argmin(d, axis=1)


def heat_stencil(ns, u):
    loop = lax.fori_loop if ns is anp else _python_fori

    def body(i, u):
        interior = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        if ns is anp:
            return u.at[1:-1].set(interior)
        u = u.copy()
        u[1:-1] = interior
        return u
    return loop(0, 100, body, u)


def _python_fori(lo, hi, body, val):
    for i in range(lo, hi):
        val = body(i, val)
    return val


WORKLOADS = [
    Workload("a*b + c*d - e", _vectors(5), lambda ns, a, b, c, d, e: a * b + c * d - e,
             _bytes_of(), numexpr="a * b + c * d - e", numba=_numba_chain,
             dtypes=("float64", "float32"), kernels=1),
    Workload("exp(-a*a)*tanh(b)+sqrt(c)", _vectors(3),
             lambda ns, a, b, c: ns.exp(-a * a) * ns.tanh(b) + ns.sqrt(c), _bytes_of(),
             numexpr="exp(-a * a) * tanh(b) + sqrt(c)", numba=_numba_transcendental,
             dtypes=("float64", "float32"), kernels=1),
    Workload("(a*b).sum()", _vectors(2), lambda ns, a, b: (a * b).sum(), _bytes_of(0),
             numexpr=None, numba=_numba_dot, kernels=1),
    Workload("exp(a).sum()", _vectors(1), lambda ns, a: ns.exp(a).sum(), _bytes_of(0),
             numba=_numba_sum_exp, kernels=1),
    Workload("softmax rows (n/1024 x 1024)", _rows(1024), softmax, _bytes_of(),
             dtypes=("float32",), kernels=1),
    Workload("layernorm rows (n/512 x 512)", _rows(512), layernorm, _bytes_of(),
             full_size=4096 * 512, kernels=1),
    Workload("logsumexp rows (n/1024 x 1024)", _rows(1024), logsumexp, _bytes_of(0),
             kernels=1),
    Workload("relu(x @ w + b) (n/256 x 256)",
             lambda n, dt: (np.random.default_rng(0).random((max(n // 256, 1), 256)).astype(dt),
                            np.random.default_rng(1).random((256, 256)).astype(dt),
                            np.random.default_rng(2).random(256).astype(dt)),
             dense_relu, _bytes_of()),
    Workload("x @ w.T (n/256 x 256, transposed operand)",
             lambda n, dt: (np.random.default_rng(0).random((max(n // 256, 1), 256)).astype(dt),
                            np.random.default_rng(1).random((256, 256)).astype(dt)),
             lambda ns, x, w: ns.dot(x, w.T), _bytes_of(), kernels=0),
    Workload("kmeans assign (n/16 points, 16 dims, 32 centroids)",
             lambda n, dt: (np.random.default_rng(0).random((max(n // 16, 1), 16)).astype(dt),
                            np.random.default_rng(1).random((32, 16)).astype(dt)),
             kmeans_assign, lambda inputs: inputs[0].nbytes, full_size=1 << 20,
             quick_size=1 << 16),
    Workload("heat stencil, 100 fori_loop steps", lambda n, dt: (
        np.random.default_rng(0).random(n).astype(dt),), heat_stencil,
        lambda inputs: 100 * 3 * inputs[0].nbytes, full_size=1 << 18, quick_size=1 << 14),
]


def _jax():
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        return jax
    except ImportError:
        return None


def implementations(w: Workload, inputs: tuple, only: str | None = None
                    ) -> dict[str, Callable]:
    """Callables for arrjit and every installed peer (or just ``only``, plus arrjit), each
    already compiled and warmed."""
    impls: dict[str, Callable] = {}
    compiled = arrjit.jit(lambda *xs: w.fn(anp, *xs))
    impls["arrjit"] = lambda: compiled(*inputs)
    impls["numpy"] = lambda: w.fn(np, *inputs)
    if w.numexpr and only in (None, "numexpr"):
        try:
            import numexpr
            names = dict(zip("abcde", inputs))
            impls["numexpr"] = lambda: numexpr.evaluate(w.numexpr, local_dict=names)
        except ImportError:
            pass
    if w.numba and only in (None, "numba"):
        try:
            fn = w.numba()
            impls["numba"] = lambda: fn(*inputs)
        except ImportError:
            pass
    jax = _jax() if only in (None, "jax") else None
    if jax is not None and w.fn is not heat_stencil:
        import jax.numpy as jnp
        jf = jax.jit(lambda *xs: w.fn(jnp, *xs))
        jinputs = [jnp.asarray(x) for x in inputs]
        impls["jax"] = lambda: jf(*jinputs).block_until_ready()
    elif jax is not None:
        import jax.numpy as jnp

        def jax_heat(u):
            def body(i, u):
                return u.at[1:-1].set(u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2]))
            return jax.lax.fori_loop(0, 100, body, u)
        jf = jax.jit(jax_heat)
        ju = jnp.asarray(inputs[0])
        impls["jax"] = lambda: jf(ju).block_until_ready()
    for f in impls.values():
        f()
    background.wait()   # arrjit's thread workers compile after a kernel's first call
    impls["_compiled"] = compiled
    return impls


def copy_bandwidth(nbytes: int = 1 << 27) -> float:
    """Bytes per second of ``np.copyto`` (read + write counted), median of several runs."""
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return 2 * src.nbytes / statistics.median(times)


def _time_once(fn: Callable, min_time: float = 0.005) -> float:
    number, elapsed = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time or number >= 1 << 16:
            return elapsed / number
        number *= 4


def _progress(done: int, total: int, label: str) -> None:
    width = 28
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label[:40]:40s}")
    sys.stderr.flush()
    if done == total:
        sys.stderr.write("\n")


def run(quick: bool = False, rounds: int = 7) -> dict:
    """Run every workload (each dtype) with all peers, interleaved; returns the results."""
    cases = [(w, dt) for w in WORKLOADS for dt in w.dtypes]
    bandwidth = copy_bandwidth(1 << 25 if quick else 1 << 28)
    results = []
    for k, (w, dt) in enumerate(cases):
        _progress(k, len(cases), f"compiling {w.name} {dt}")
        inputs = w.make(w.quick_size if quick else w.full_size, np.dtype(dt))
        impls = implementations(w, inputs)
        compiled = impls.pop("_compiled")
        samples: dict[str, list[float]] = {name: [] for name in impls}
        for fn in impls.values():   # warm-up: the first calls on fresh memory are erratic here
            for _ in range(1 if quick else 3):
                _time_once(fn)
        for _ in range(3 if quick else rounds):
            for name, fn in impls.items():
                # a discarded run first: the previous peer's idle threads may still be
                # spinning (OpenMP spins for milliseconds after a parallel region) and would
                # steal this peer's cores
                _time_once(fn)
                samples[name].append(_time_once(fn))
        medians = {name: statistics.median(v) for name, v in samples.items()}
        t = medians["arrjit"]
        results.append({
            "workload": w.name, "dtype": dt, "elements": int(inputs[0].size),
            "arrjit_seconds": t,
            "ratios": {p: medians[p] / t for p in PEERS if p in medians},
            "gb_per_s": w.nbytes(inputs) / t / 1e9,
            "kernels": len(compiled.lower(*inputs).kernels),
        })
    _progress(len(cases), len(cases), "done")
    import platform
    import os
    return {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                       f"Python {platform.python_version()}, NumPy {np.__version__}",
            "copy_gb_per_s": bandwidth / 1e9, "quick": quick, "results": results}


def table(report: dict) -> str:
    head = (f"{'workload':52s} {'dtype':8s} {'arrjit':>10s} " +
            " ".join(f"{p:>8s}" for p in PEERS) + f" {'GB/s':>6s} {'kern':>4s}")
    lines = [f"machine: {report['machine']}; copy bandwidth {report['copy_gb_per_s']:.1f} GB/s",
             "ratios are peer time / arrjit time (above 1: arrjit faster)", head,
             "-" * len(head)]
    for r in report["results"]:
        t = r["arrjit_seconds"]
        shown = f"{t * 1e3:8.3f}ms" if t >= 1e-4 else f"{t * 1e6:8.1f}us"
        ratios = " ".join(f"{r['ratios'][p]:8.2f}" if p in r["ratios"] else f"{'-':>8s}"
                          for p in PEERS)
        lines.append(f"{r['workload'][:52]:52s} {r['dtype']:8s} {shown:>10s} {ratios} "
                     f"{r['gb_per_s']:6.1f} {r['kernels']:4d}")
    return "\n".join(lines)


def plot(report: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["results"]
    labels = [f"{r['workload'][:28]}\n{r['dtype']}" for r in rows]
    x = np.arange(len(rows))
    width = 0.8 / len(PEERS)
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(rows)), 5))
    for k, peer in enumerate(PEERS):
        values = [r["ratios"].get(peer, np.nan) for r in rows]
        ax.bar(x + (k - (len(PEERS) - 1) / 2) * width, values, width, label=f"vs {peer}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("speed-up of arrjit (peer time / arrjit time)")
    ax.set_xticks(x, labels, fontsize=7, rotation=30, ha="right")
    ax.set_title(f"arrjit vs peers - {report['machine']}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


FIRST_CALL_CHILD = """
import sys, time
t0 = time.perf_counter()
import numpy as np
peer, name = sys.argv[1], sys.argv[2]
if peer == "jax":
    import jax, jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    jax.devices()                                     # backend start-up
else:
    import arrjit, arrjit.numpy as anp
    from arrjit.runtime.compile import prepare_numba
    from numba import njit
    prepare_numba()                                   # as arrjit starts numba
    njit(lambda: 0)()                                 # numba start-up (target, LLVM)
    import arrjit.backends.cpu.mathlib
startup = time.perf_counter() - t0
from arrjit.cli import bench
import gc
gc.collect()   # the first call's figure must not depend on when the collector last ran
w = next(w for w in bench.WORKLOADS if w.name == name)
inputs = w.make(1 << 16, np.dtype(w.dtypes[0]))
if peer == "jax":
    fn = jax.jit(lambda *xs: w.fn(jnp, *xs))
    run = lambda: fn(*inputs).block_until_ready()
else:
    fn = arrjit.jit(lambda *xs: w.fn(anp, *xs))
    run = lambda: fn(*inputs)
t0 = time.perf_counter()
run()
print(time.perf_counter() - t0, startup)
"""

FIRST_CALL_WORKLOADS = ("a*b + c*d - e", "exp(-a*a)*tanh(b)+sqrt(c)",
                        "softmax rows (n/1024 x 1024)", "layernorm rows (n/512 x 512)")


def first_calls(repeats: int = 3) -> list[dict]:
    """First-call latency in fresh processes: arrjit with an empty disk cache (trace +
    codegen + numba compile), arrjit from its disk cache, and JAX; each after its library's
    start-up (imports and backend initialisation: numba's LLVM target, XLA's CPU client),
    which is reported on its own. Medians of ``repeats`` processes per case."""
    import os
    import shutil
    import subprocess
    import tempfile

    rows = []
    for name in FIRST_CALL_WORKLOADS:
        row: dict = {"workload": name}
        with tempfile.TemporaryDirectory() as cache_dir:
            env = dict(os.environ, ARRJIT_CACHE_DIR=cache_dir)
            for label, peer, fresh in (("arrjit cold", "arrjit", True),
                                       ("arrjit disk", "arrjit", False),
                                       ("jax", "jax", True)):
                if peer == "jax" and _jax() is None:
                    continue
                times, startups = [], []
                for _ in range(repeats):
                    if fresh and peer == "arrjit":
                        for entry in os.listdir(cache_dir):
                            shutil.rmtree(os.path.join(cache_dir, entry), ignore_errors=True)
                    out = subprocess.run([sys.executable, "-c", FIRST_CALL_CHILD, peer, name],
                                         env=env, capture_output=True, text=True, check=True)
                    first, startup = map(float, out.stdout.split()[-2:])
                    times.append(first)
                    startups.append(startup)
                row[label] = statistics.median(times)   # cold runs leave the cache filled
                row[peer + " start-up"] = statistics.median(startups)
        rows.append(row)
    return rows


def first_call_table(rows: list[dict]) -> str:
    labels = ("arrjit cold", "arrjit disk", "jax", "arrjit start-up", "jax start-up")
    head = f"{'first call (fresh process)':40s} " + " ".join(f"{c:>16s}" for c in labels)
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = " ".join(f"{r[c] * 1e3:14.0f}ms" if c in r else f"{'-':>16s}" for c in labels)
        lines.append(f"{r['workload'][:40]:40s} {cells}")
    return "\n".join(lines)


def main(quick: bool, plot_path: str | None, json_path: str | None,
         first_call: bool = False) -> None:
    if first_call:
        print(first_call_table(first_calls()))
        return
    if plot_path and importlib.util.find_spec("matplotlib") is None:
        raise SystemExit("python -m arrjit bench: --plot needs matplotlib, which is not "
                         "installed; pip install matplotlib (or the [bench] extra), or drop "
                         "--plot and keep --json")
    report = run(quick=quick)
    print(table(report))
    if json_path:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=2)
    if plot_path:
        plot(report, plot_path)
        print(f"chart written to {plot_path}")
