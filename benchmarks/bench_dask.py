"""A 2 GB float64 elementwise + reduction computation on a local dask cluster: arrjit's
chunks (one compiled program per block, its partials combined by dask) against
``dask.array`` with NumPy chunks (one NumPy call per op and block, fused into one task per
block by dask's blockwise optimisation, with a temporary per op).

The data are generated on the workers and persisted first; compiling is in ``setup`` (the
second process loads from the disk cache). Run as a script for the side-by-side ratio and
the task count of each graph::

    python benchmarks/bench_dask.py [gigabytes]
"""
import statistics
import sys
import time

import numpy as np

CHUNK = 8_000_000            # elements per block (64 MB of float64)


def workload(x, xp):
    y = x * xp.exp(-x * x) + xp.tanh(x) * 0.5
    return y.sum(), (y * y).mean(), y.max()


def start(gigabytes: float = 2.0):
    import dask.array as da
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None)
    client = Client(cluster)
    n = int(gigabytes * 2**30 / 8)
    x = da.random.default_rng(0).random(n, chunks=CHUNK).persist()
    client.wait_for_workers(2)
    from distributed import wait

    wait(x)
    PERSISTED.clear()
    PERSISTED.update(dict(x.__dask_graph__()))
    return cluster, client, x


def graphs(x):
    import dask.array as da
    import arrjit
    import arrjit.numpy as anp

    jitted = arrjit.jit(lambda x: workload(x, anp))
    return {"arrjit": lambda: jitted(x), "dask": lambda: workload(x, da)}


def task_count(outputs) -> int:
    """Tasks in the graph dask runs (after its optimisation), the persisted data excluded."""
    import dask

    keys = set()
    for out in dask.optimize(*outputs):
        keys |= set(dict(out.__dask_graph__()))
    return len(keys) - len(PERSISTED)


PERSISTED: set = set()


class DaskCluster:
    """asv: the computation's wall time per peer, and each graph's task count."""

    params = ["arrjit", "dask"]
    param_names = ["peer"]
    timeout = 600
    repeat = 3
    number = 1

    def setup(self, peer):
        self.cluster, self.client, self.x = start()
        self.make = graphs(self.x)[peer]
        self.client.compute(list(self.make()), sync=True)       # compiles (or loads)

    def teardown(self, peer):
        self.client.close()
        self.cluster.close()

    def time_compute(self, peer):
        self.client.compute(list(self.make()), sync=True)

    def track_tasks(self, peer):
        return task_count(self.make())


def main(gigabytes: float) -> None:
    cluster, client, x = start(gigabytes)
    try:
        makers = graphs(x)
        results = {peer: client.compute(list(make()), sync=True)
                   for peer, make in makers.items()}          # warm: compiles, loads
        a, b = results["arrjit"], results["dask"]
        assert all(np.allclose(p, q, rtol=1e-9) for p, q in zip(a, b)), (a, b)
        times: dict[str, list[float]] = {peer: [] for peer in makers}
        for _ in range(5):
            for peer, make in makers.items():             # side by side, interleaved
                t0 = time.perf_counter()
                client.compute(list(make()), sync=True)
                times[peer].append(time.perf_counter() - t0)
        med = {peer: statistics.median(t) for peer, t in times.items()}
        print(f"{gigabytes:g} GB float64, {x.npartitions} blocks, 2 workers x 1 thread")
        for peer in makers:
            print(f"  {peer:7s} median {med[peer]:7.3f} s   tasks {task_count(makers[peer]()):5d}"
                  f"   runs {', '.join(f'{t:.2f}' for t in times[peer])}")
        print(f"  dask / arrjit time ratio: {med['dask'] / med['arrjit']:.2f}")
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
