"""Updates at traced positions outside loops: ``y.at[i].set(v)`` and ``dynamic_update_slice``
of a value the program computed, then used. arrjit against ``jax.jit`` of the same code and
NumPy written by hand (``y = 2 * x; y[i] = v; y + 1``). Run as a script to print the table:
``python benchmarks/bench_updates.py``.
"""
import os
import statistics
import sys
import time

import numpy as np

import arrjit
from arrjit import lax

sys.path.insert(0, os.path.dirname(__file__))
from bench_loops import jax_peer  # noqa: E402


def row_set(ns, lx, x, v, i):
    return (x * 2.0).at[i].set(v) + 1.0


def column_add(ns, lx, x, v, i):
    return (x * 2.0).at[:, i].add(v) * 3.0


def window_set(ns, lx, x, v, i):
    return lx.dynamic_update_slice(x * 2.0, ns.reshape(v[:32], (4, 8)), (i, i)) - 1.0


def _row_set_numpy(x, v, i):
    y = x * 2.0
    y[i] = v
    y += 1.0
    return y


def _column_add_numpy(x, v, i):
    y = x * 2.0
    y[:, i] += v
    y *= 3.0
    return y


def _window_set_numpy(x, v, i):
    y = x * 2.0
    r, c = (min(max(i, 0), n - m) for n, m in ((x.shape[0], 4), (x.shape[1], 8)))
    y[r:r + 4, c:c + 8] = v[:32].reshape(4, 8)
    y -= 1.0
    return y


PROGRAMS = {"row_set": (row_set, _row_set_numpy),
            "column_add": (column_add, _column_add_numpy),
            "window_set": (window_set, _window_set_numpy)}
PEERS = ["arrjit", "jax", "numpy"]
SIZES = [64, 1000]


def make_runner(program: str, peer: str, n: int):
    """``(run, args)``: a call of ``program`` on ``peer`` for an ``n`` x ``n`` value."""
    fn, by_hand = PROGRAMS[program]
    rng = np.random.default_rng(0)
    args = (rng.random((n, n)), rng.random(n), 3)
    if peer == "arrjit":
        import arrjit.numpy as anp
        run = arrjit.jit(lambda *a: fn(anp, lax, *a))
    elif peer == "numpy":
        run = by_hand
    else:
        run, args = jax_peer(fn, args)
    run(*args)
    return run, args


class UpdatesAtPositions:
    params = [list(PROGRAMS), PEERS, SIZES]
    param_names = ["program", "peer", "n"]

    def setup(self, program, peer, n):
        self.run, self.args = make_runner(program, peer, n)

    def time_call(self, program, peer, n):
        self.run(*self.args)


def _median_us(run, args, calls: int, repeats: int = 15) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run(*args)
        times.append((time.perf_counter() - start) / calls)
    return 1e6 * statistics.median(times)


def main() -> None:
    """Each program's warm time per call on every peer and the ratios (peer / arrjit), after
    checking that the peers give arrjit's answer."""
    print("| program | n | arrjit us | JAX us | NumPy us | JAX/arrjit | NumPy/arrjit |")
    print("|---|---|---|---|---|---|---|")
    for program in PROGRAMS:
        for n in SIZES:
            runs = {}
            for peer in PEERS:
                try:
                    runs[peer] = make_runner(program, peer, n)
                except NotImplementedError:
                    continue
            ours = np.asarray(runs["arrjit"][0](*runs["arrjit"][1]))
            for peer, (run, args) in runs.items():
                np.testing.assert_allclose(np.asarray(run(*args)), ours, rtol=1e-15)
            calls = 400 if n < 256 else 20
            us = {peer: _median_us(run, args, calls) for peer, (run, args) in runs.items()}
            cells = [f"{us[p]:.1f}" if p in us else "-" for p in PEERS]
            ratios = [f"{us[p] / us['arrjit']:.2f}" if p in us else "-" for p in PEERS[1:]]
            print(f"| {program} | {n} | " + " | ".join(cells + ratios) + " |")


if __name__ == "__main__":
    main()
