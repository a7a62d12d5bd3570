"""Discrete convolution and correlation of 1-d sequences (``convolve``, ``correlate``): one
library primitive running NumPy's own convolution (exact values, no O(n*m) memory), with
derivatives for both operands.

>>> import numpy as np, arrjit
>>> arrjit.jit(convolve)(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
array([0. , 1. , 2.5, 4. , 1.5])
>>> arrjit.jit(lambda a, v: correlate(a, v, "same"))(np.arange(4.0), np.ones(3))
array([1., 3., 6., 5.])
"""
from __future__ import annotations

import numpy as np

from . import base as anp
from . import shapes
from ..core import primitives as p
from ..core.ir import Op
from ..core.trace import Tracer

_MODES = ("full", "same", "valid")


def _traced(*xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _sequences(a, v, what: str):
    a, v = anp.asarray(a), anp.asarray(v)
    a = anp.reshape(a, (1,)) if a.ndim == 0 else a
    v = anp.reshape(v, (1,)) if v.ndim == 0 else v
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"anp.{what} takes 1-d sequences, got shapes {a.shape} and "
                         f"{v.shape}")
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    dtype = np.result_type(a.dtype, v.dtype)
    return anp.astype(a, dtype), anp.astype(v, dtype)


def _mode(mode) -> str:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
    return mode


def convolve(a, v, mode: str = "full"):
    """``numpy.convolve``: the discrete linear convolution of two 1-d sequences; ``mode``
    ``'full'`` (length n + m - 1), ``'same'`` (max(n, m), centred) or ``'valid'``."""
    if not _traced(a, v):
        return np.convolve(a, v, mode=mode)
    a, v = _sequences(a, v, "convolve")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return p.bind_results(Op.CONVOLVE, (a, v), None, mode=_mode(mode))


def correlate(a, v, mode: str = "valid"):
    """``numpy.correlate``: ``c[k] = sum_n a[n + k] * conj(v[n])``, with ``convolve``'s
    modes (default ``'valid'``)."""
    if not _traced(a, v):
        return np.correlate(a, v, mode=mode)
    a, v = _sequences(a, v, "correlate")
    mode = _mode(mode)
    reversed_v = shapes.flip(anp.conjugate(v) if v.dtype.kind == "c" else v)
    n, m = a.shape[0], v.shape[0]
    if mode == "same" and m > n:      # NumPy centres this case from the other end
        full = convolve(a, reversed_v, "full")
        return full[n // 2:n // 2 + m]
    return convolve(a, reversed_v, mode)
