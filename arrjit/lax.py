"""``arrjit.lax``: lower-level primitives in the style of ``jax.lax``.

>>> import arrjit, arrjit.numpy as anp
>>> arrjit.lax.select(anp.array([True, False]), anp.ones(2), anp.zeros(2))
array([1., 0.])
"""
from __future__ import annotations

from . import primitives


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false``; ``pred`` must be boolean."""
    aval = primitives.aval_of(pred)
    if aval.dtype.kind != "b":
        raise TypeError(f"lax.select requires a boolean predicate, got {aval}; compare first "
                        f"(x > 0) or use anp.where")
    return primitives.bind_select(pred, on_true, on_false)
