"""``arrjit.lax``: control flow and lower-level primitives in the style of ``jax.lax``.

Loops are one ``WHILE`` primitive holding its condition and body as graphs; inside ``jit`` a
loop whose body and condition compile to native kernels runs as one native loop, with no
Python per iteration. ``cond`` and ``switch`` evaluate every branch and select the result
(pure functions make this equal to running one branch).

>>> import numpy as np, arrjit
>>> from arrjit import lax
>>> arrjit.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2 + i, x))(np.ones(2))
array([12., 12.])
"""
from ..core.marks import stop_gradient  # noqa: F401  (lax.stop_gradient, as in JAX)
from .control import cond, fori_loop, scan, select, switch, while_loop  # noqa: F401
from .control import _while_loop  # noqa: F401  (autodiff.loops re-enters the loop machinery)
from .slicing import (dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,  # noqa: F401
                      dynamic_update_index_in_dim, dynamic_update_slice,
                      dynamic_update_slice_in_dim)

__all__ = ["cond", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
           "fori_loop", "scan", "select", "stop_gradient", "switch", "while_loop"]
