"""Peak memory: ``x = f(x)`` over a 200 MB float64 array with and without donation, and a
five-stage pipeline that cannot fuse, each beside NumPy doing the same computation.

asv's ``peakmem_`` reports the process's peak resident memory, setup included (the input
arrays, 200 MB here), so compare the figures against each other.
"""
import numpy as np

import arrjit
import arrjit.numpy as anp

N = 25_000_000  # 200 MB of float64


def update(x):
    return x * 0.5 + 1.0


def five_stage(ns, x):
    y = x
    for k in range(5):
        y = ns.sort(ns.sin(y) * (k + 1), axis=None).reshape(x.shape)
    return y


class DonatedUpdate:
    timeout = 300

    def setup(self):
        self.x = np.random.default_rng(0).random(N)
        self.plain = arrjit.jit(update)
        self.donating = arrjit.jit(update, donate_argnums=0)
        small = np.ones(8)
        self.plain(small)
        self.donating(small.copy())

    def peakmem_arrjit_with_donation(self):
        self.x = self.donating(self.x)

    def peakmem_arrjit_without_donation(self):
        self.plain(self.x)

    def peakmem_numpy(self):
        update(self.x)

    def peakmem_numpy_in_place(self):
        np.multiply(self.x, 0.5, out=self.x)
        np.add(self.x, 1.0, out=self.x)


class FiveStagePipeline:
    timeout = 300

    def setup(self):
        self.x = np.random.default_rng(1).random((2048, 2048))
        self.f = arrjit.jit(lambda x: five_stage(anp, x))
        self.f(self.x)

    def peakmem_arrjit(self):
        self.f(self.x)

    def peakmem_numpy(self):
        five_stage(np, self.x)

    def track_kernel_and_library_steps(self):
        return len(self.f.lower(self.x)._entry.rendered.runs)
