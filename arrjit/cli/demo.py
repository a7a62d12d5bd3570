"""``python -m arrjit demo``: the jit tutorial story, then a small speed table against NumPy."""
from __future__ import annotations

import statistics
import time
from typing import Callable

import numpy as np


def median_time(fn: Callable[[], object], repeat: int = 7, min_time: float = 0.02) -> float:
    """Median seconds per call over ``repeat`` batches, each at least ``min_time`` long."""
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 >= min_time or number >= 1 << 20:
            break
        number *= 2
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def run(out=print) -> None:
    import arrjit
    import arrjit.numpy as anp

    out("arrjit demo: JAX-style jit, compiled by Numba\n")

    def add_one(x):
        return x + 1

    jitted = arrjit.jit(add_one)
    x = anp.array([1.0, 2.0, 3.0])
    t0 = time.perf_counter()
    first = jitted(x)
    t1 = time.perf_counter()
    second = jitted(x)
    t2 = time.perf_counter()
    out(f"1. jit(add_one)(x) = {first}   first call {_fmt(t1 - t0)} (trace + compile)")
    out(f"   again             = {second}   cached call {_fmt(t2 - t1)}; "
        f"steady state {_fmt(median_time(lambda: jitted(x)))}")

    def conditional_negate(x, flag):
        return -x if flag else x

    try:
        arrjit.jit(conditional_negate)(x, True)
    except arrjit.errors.TracerBoolConversionError as err:
        out(f"2. branching on a traced flag fails clearly:\n   {str(err)[:160]}...")
    static = arrjit.jit(conditional_negate, static_argnames=("flag",))
    out(f"   with static_argnames=('flag',): {static(x, True)} and {static(x, flag=False)}")

    def scaled_sin(x):
        return anp.sin(x) * 2.0 + 1.0

    g = arrjit.jit(scaled_sin)
    g(anp.ones(3))
    g(anp.ones(1000))
    info = g.cache_info()
    out(f"3. new shape (3,) -> (1000,): traces={info.traces}, compiles={info.compiles} "
        f"(a new size re-traces but reuses the machine code)")

    inplace = arrjit.jit(add_one, donate_argnums=(0,))
    buf = anp.zeros(4)
    res = inplace(buf)
    out(f"4. donate_argnums=(0,): result {res} shares the input buffer: "
        f"{np.shares_memory(res, buf)}")

    out("\n5. speed against NumPy (median of 7 timed batches each, this machine):")
    n = 1 << 21
    rng = np.random.default_rng(0)
    a, b, c, d, e = (rng.random(n) for _ in range(5))
    rows = [
        ("a*b + c*d - e", lambda a, b, c, d, e: a * b + c * d - e),
        ("exp(-a*a)*tanh(b)+sqrt(c)",
         lambda a, b, c, d, e: anp.exp(-a * a) * anp.tanh(b) + anp.sqrt(c)),
        ("where(a > b, c, d) * 2", lambda a, b, c, d, e: anp.where(a > b, c, d) * 2),
    ]
    out(f"   {'workload (2M float64)':32s} {'NumPy':>11s} {'arrjit':>11s} {'speed-up':>9s}")
    for name, fn in rows:
        compiled = arrjit.jit(fn)
        compiled(a, b, c, d, e)
        np_fn = {0: lambda: a * b + c * d - e,
                 1: lambda: np.exp(-a * a) * np.tanh(b) + np.sqrt(c),
                 2: lambda: np.where(a > b, c, d) * 2}[rows.index((name, fn))]
        t_np = median_time(np_fn)
        t_aj = median_time(lambda: compiled(a, b, c, d, e))
        out(f"   {name:32s} {_fmt(t_np)} {_fmt(t_aj)} {t_np / t_aj:8.2f}x")
