"""Standardise a chunked dataset and summarise it, with one jitted function over dask arrays.

arrjit plans the function over the chunks: each pass over the data is one task per block
running compiled code, and the reductions combine per-block partials.

    python examples/dask_statistics.py
"""
import dask
import dask.array as da
import numpy as np

import arrjit
import arrjit.numpy as anp


@arrjit.jit
def summarise(x):
    mean = anp.mean(x, axis=0)
    spread = anp.std(x, axis=0)
    z = (x - mean) / spread
    return {"mean": mean, "std": spread, "outliers": anp.sum(anp.abs(z) > 3, axis=0),
            "largest": anp.max(anp.abs(z))}


def main(rows: int = 400_000, columns: int = 16) -> None:
    x = da.random.default_rng(1).standard_normal((rows, columns), chunks=(50_000, columns))
    lazy = summarise(x)                                   # a dask graph; nothing has run
    (out,) = dask.compute(lazy, scheduler="threads")
    data = x.compute()
    np.testing.assert_allclose(out["mean"], data.mean(axis=0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out["std"], data.std(axis=0), rtol=1e-9)
    print(f"{rows} x {columns} in {x.numblocks[0]} blocks: "
          f"{int(out['outliers'].sum())} values beyond 3 sigma, largest |z| "
          f"{float(out['largest']):.2f}")


if __name__ == "__main__":
    main()
