"""The workloads of ``python -m arrjit bench`` as asv benchmarks: one class per workload,
parametrised over the peer (arrjit, NumPy, numexpr, a hand-written numba loop, JAX) and the
dtype. A peer that is not installed, or has no version of the workload, is skipped (setup
raises NotImplementedError), never faked. Compilation happens in ``setup``; ``time_run``
measures the warm steady state."""
import numpy as np

from arrjit.cli import bench

PEERS = ["arrjit", "numpy", "numexpr", "numba", "jax"]


def _make_classes(workload):
    class Workload:
        params = [PEERS, list(workload.dtypes)]
        param_names = ["peer", "dtype"]
        timeout = 300

        def setup(self, peer, dtype):
            inputs = workload.make(workload.quick_size * 4, np.dtype(dtype))
            impls = bench.implementations(workload, inputs, only=peer)
            impls.pop("_compiled")
            if peer not in impls:
                raise NotImplementedError(f"{peer} has no version of {workload.name}")
            self.run = impls[peer]

        def time_run(self, peer, dtype):
            self.run()

    class Counts:
        """arrjit's kernel count and compilations (numba compiles plus disk loads)."""

        params = [list(workload.dtypes)]
        param_names = ["dtype"]
        timeout = 300

        def setup(self, dtype):
            self.inputs = workload.make(workload.quick_size, np.dtype(dtype))
            impls = bench.implementations(workload, self.inputs, only="arrjit")
            self.compiled = impls["_compiled"]

        def track_kernels(self, dtype):
            return len(self.compiled.lower(*self.inputs).kernels)

        def track_compiles(self, dtype):
            info = self.compiled.cache_info()
            return info.compiles + info.disk_hits

    name = "".join(c if c.isalnum() else "_" for c in workload.name).strip("_")
    Workload.__name__ = name
    Counts.__name__ = name + "_counts"
    return Workload, Counts


for _w in bench.WORKLOADS:
    for _cls in _make_classes(_w):
        globals()[_cls.__name__] = _cls
del _w, _cls
