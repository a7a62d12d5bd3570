"""Types for annotations and ``isinstance``, as ``jax.Array`` and ``jax.typing``.

``Array`` is what arrjit computes with: NumPy arrays (what a jitted function returns on the
CPU, and what ``arrjit.numpy`` returns outside jit), traced arrays inside ``jit``, ``grad``
or ``vmap``, and the CUDA backend's device arrays.

>>> import numpy as np, arrjit
>>> isinstance(np.ones(2), arrjit.Array)
True
>>> arrjit.jit(lambda x: isinstance(x, arrjit.Array) and x * 2)(np.ones(2))
array([2., 2.])
>>> def scale(x: arrjit.Array, k: float) -> arrjit.Array:
...     return x * k
"""
from __future__ import annotations

import abc
from typing import Union

import numpy as np

from .core.trace import Tracer

__all__ = ["Array", "ArrayLike", "DTypeLike"]


class Array(abc.ABC):
    """The array type of arrjit (an abstract base class: NumPy arrays, traced arrays and
    CUDA device arrays, which carry ``__cuda_array_interface__``, are instances)."""

    __slots__ = ()

    @classmethod
    def __subclasshook__(cls, candidate: type) -> bool:
        if cls is Array and hasattr(candidate, "__cuda_array_interface__"):
            return True
        return NotImplemented


Array.register(np.ndarray)
Array.register(Tracer)

ArrayLike = Union[Array, np.ndarray, np.generic, bool, int, float, complex]
"""What arrjit's functions accept as an array: arrays and scalars."""

DTypeLike = Union[str, type, np.dtype]
"""What arrjit's functions accept as a dtype."""
