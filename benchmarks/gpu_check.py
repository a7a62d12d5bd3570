"""The GPU check: on a machine with a CUDA GPU, the ``cuda`` tests run for real, then the
memory-bound chains, a sum, softmax and layernorm against CuPy (plain and ``cupy.fuse``) and
JAX on the GPU (each when importable), in GB/s against the device's measured copy bandwidth,
then the accuracy of the GPU's math (libdevice) against NumPy, as the largest error in ulps
per function and dtype.

    python benchmarks/gpu_check.py            # tests, then the table (exit 1 if tests fail)
    python benchmarks/gpu_check.py --no-tests

Also an asv suite (``GpuWorkloads``); without a GPU its setup reports it is not run.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

import arrjit
import arrjit.numpy as anp

ROOT = Path(__file__).resolve().parents[1]
N = 1 << 26                     # 64M float32 elements: 256 MiB per operand
ROWS, COLS = 8192, 4096


def gpu_present() -> bool:
    from arrjit.backends.cuda.device import simulated, unavailable_reason

    return unavailable_reason() is None and not simulated()


def _softmax(ns):
    return lambda x: ns.exp(x - x.max(axis=1, keepdims=True)) / ns.exp(
        x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)


def _layernorm(ns):
    return lambda x: (x - x.mean(axis=-1, keepdims=True)) / ns.sqrt(
        x.var(axis=-1, keepdims=True) + 1e-5)


# name: (function of a namespace, inputs, bytes moved per call as a multiple of one input)
WORKLOADS: dict[str, tuple[Callable, str, int]] = {
    "a*b+c*d-e": (lambda ns: (lambda a, b, c, d, e: a * b + c * d - e), "flat5", 6),
    "exp(-a*a)*tanh(b)+sqrt(c)": (lambda ns: (lambda a, b, c: ns.exp(-a * a) * ns.tanh(b)
                                              + ns.sqrt(c)), "flat3", 4),
    "(a*b).sum()": (lambda ns: (lambda a, b: (a * b).sum()), "flat2", 2),
    "softmax 8192x4096": (_softmax, "rows", 2),
    "layernorm 8192x4096": (_layernorm, "rows", 2),
}


def _inputs(kind: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    if kind == "rows":
        return [rng.standard_normal((ROWS, COLS), dtype=np.float32)]
    count = int(kind[-1])
    return [rng.random(N, dtype=np.float32) + 0.5 for _ in range(count)]


def _median_seconds(call: Callable, sync: Callable, repeat: int = 20) -> float:
    call()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def copy_bandwidth() -> float:
    """Device-to-device copy bandwidth in GB/s (bytes read + written)."""
    from numba import cuda

    src = cuda.to_device(np.ones(N, np.float32))
    dst = cuda.device_array_like(src)
    seconds = _median_seconds(lambda: dst.copy_to_device(src), cuda.synchronize)
    return 2 * src.nbytes / seconds / 1e9


def peers(name: str, kind: str, host: list[np.ndarray]) -> dict[str, Callable[[], object]]:
    """Zero-argument calls per implementation (inputs already on the device)."""
    make, _, _ = WORKLOADS[name]
    from numba import cuda

    dev = [cuda.to_device(x) for x in host]
    f = arrjit.jit(make(anp), device="cuda")
    calls: dict[str, Callable[[], object]] = {"arrjit": lambda: f(*dev)}
    try:
        import cupy

        cp_in = [cupy.asarray(x) for x in host]
        plain = make(cupy)
        calls["cupy"] = lambda: plain(*cp_in)
        if kind != "rows":
            fused = cupy.fuse(make(cupy))
            calls["cupy.fuse"] = lambda: fused(*cp_in)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        if any(d.platform == "gpu" for d in jax.devices()):
            jf = jax.jit(make(jnp))
            jx = [jax.device_put(x) for x in host]
            calls["jax"] = lambda: jf(*jx).block_until_ready()
    except ImportError:
        pass
    return calls


def table() -> list[dict]:
    from numba import cuda

    peak = copy_bandwidth()
    rows = []
    print(f"device copy bandwidth: {peak:.0f} GB/s")
    for name, (_, kind, moved) in WORKLOADS.items():
        host = _inputs(kind)
        nbytes = moved * host[0].nbytes
        for peer, call in peers(name, kind, host).items():
            seconds = _median_seconds(call, cuda.synchronize)
            gbs = nbytes / seconds / 1e9
            rows.append({"workload": name, "peer": peer, "ms": seconds * 1e3, "GB/s": gbs,
                         "of copy bandwidth": gbs / peak})
            print(f"{name:28s} {peer:10s} {seconds * 1e3:8.3f} ms {gbs:8.0f} GB/s "
                  f"{100 * gbs / peak:5.1f} %")
    return rows


MATH_UNARY = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "sin", "cos",
              "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan"]
MATH_BINARY = ["power", "arctan2", "hypot", "logaddexp"]


def _math_inputs(dtype: type, n: int = 1 << 20, seed: int = 0) -> np.ndarray:
    """Uniform in [-10, 10] and log-uniform magnitudes of both signs over most of the range."""
    rng = np.random.default_rng(seed)
    top = 30 if dtype == np.float32 else 300
    magnitudes = 10.0 ** rng.uniform(-top, top, n // 2)
    values = np.concatenate([rng.uniform(-10, 10, n // 2),
                             magnitudes * rng.choice([-1.0, 1.0], n // 2)])
    return values.astype(dtype)


def ulp_error(out: np.ndarray, ref: np.ndarray) -> tuple[float, int]:
    """(largest |out - ref| in ulps of ``ref`` where both are finite, count of elements whose
    class differs: NaN against a number, or infinities that differ)."""
    finite = np.isfinite(out) & np.isfinite(ref)
    spacing = np.spacing(np.abs(ref[finite]).astype(ref.dtype))
    err = np.abs(out[finite].astype(np.float64) - ref[finite]) / spacing
    same_class = (np.isnan(out) & np.isnan(ref)) | (out == ref) | finite
    return (float(err.max()) if err.size else 0.0), int((~same_class).sum())


def accuracy() -> list[dict]:
    """The GPU's math functions against NumPy's, in ulps (docs/guide/cuda.md: math)."""
    rows = []
    for dtype in (np.float32, np.float64):
        x, y = _math_inputs(dtype, seed=1), _math_inputs(dtype, seed=2)
        for name in MATH_UNARY + MATH_BINARY:
            binary = name in MATH_BINARY
            f = arrjit.jit((lambda a, b: getattr(anp, name)(a, b)) if binary else
                           (lambda a, b: getattr(anp, name)(a)), device="cuda")
            with np.errstate(all="ignore"):
                ref = getattr(np, name)(x, y) if binary else getattr(np, name)(x)
                worst, classes = ulp_error(arrjit.device_get(f(x, y)), ref)
            rows.append({"function": name, "dtype": np.dtype(dtype).name, "max ulp": worst,
                         "class mismatches": classes})
            print(f"{name:10s} {np.dtype(dtype).name:8s} max {worst:6.2f} ulp   "
                  f"{classes} NaN/inf mismatches")
    return rows


def main(argv: list[str]) -> int:
    if not gpu_present():
        print("no CUDA GPU in this process: the GPU check was not run")
        return 0
    if "--no-tests" not in argv:
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/cuda"], cwd=ROOT)
        if result.returncode != 0:
            return 1
    table()
    accuracy()
    return 0


class GpuWorkloads:
    """asv: the same workloads, arrjit on the GPU (peers in ``table``)."""

    params = [sorted(WORKLOADS)]
    param_names = ["workload"]

    def setup(self, workload):
        if not gpu_present():
            raise NotImplementedError("no CUDA GPU")
        from numba import cuda

        make, kind, _ = WORKLOADS[workload]
        self.sync = cuda.synchronize
        self.args = [cuda.to_device(x) for x in _inputs(kind)]
        self.f = arrjit.jit(make(anp), device="cuda")
        self.f(*self.args)
        self.sync()

    def time_arrjit(self, workload):
        self.f(*self.args)
        self.sync()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
