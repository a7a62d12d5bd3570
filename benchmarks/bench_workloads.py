"""The workloads of ``python -m arrjit bench`` as asv benchmarks: one class per workload,
parametrised over the peer (arrjit, NumPy, numexpr, a hand-written numba loop, JAX) and the
dtype. A peer that is not installed, or has no version of the workload, is skipped (setup
raises NotImplementedError), never faked. Compilation happens in ``setup``; ``time_run``
measures the warm steady state."""
import numpy as np

from arrjit import bench

PEERS = ["arrjit", "numpy", "numexpr", "numba", "jax"]


def _make_class(workload):
    class Workload:
        params = [PEERS, list(workload.dtypes)]
        param_names = ["peer", "dtype"]
        timeout = 300

        def setup(self, peer, dtype):
            inputs = workload.make(workload.quick_size * 4, np.dtype(dtype))
            impls = bench.implementations(workload, inputs, only=peer)
            self.compiled = impls.pop("_compiled")
            self.inputs = inputs
            if peer not in impls:
                raise NotImplementedError(f"{peer} has no version of {workload.name}")
            self.run = impls[peer]

        def time_run(self, peer, dtype):
            self.run()

        def track_kernels(self, peer, dtype):
            if peer != "arrjit":
                raise NotImplementedError("kernel counts are arrjit's")
            return len(self.compiled.lower(*self.inputs).kernels)

        def track_compiles(self, peer, dtype):
            if peer != "arrjit":
                raise NotImplementedError("compile counts are arrjit's")
            return self.compiled.cache_info().compiles + self.compiled.cache_info().disk_hits

    Workload.__name__ = "".join(c if c.isalnum() else "_" for c in workload.name).strip("_")
    return Workload


for _w in bench.WORKLOADS:
    _cls = _make_class(_w)
    globals()[_cls.__name__] = _cls
del _w, _cls
