"""Integers that come from array shapes while tracing (``x.shape[0]``, the count ``mean``
divides by). Used as an operand, one becomes a CONST marked ``runtime``: generated code reads
its value as a run-time parameter, as it reads sizes, so a new size reuses the compiled
kernel instead of baking the number into the source.

>>> n = Size(5)
>>> n, n * 2 - 1, type(n + 1).__name__, type(n / 2).__name__
(5, 9, 'Size', 'float')
"""
from __future__ import annotations

from typing import Any


class Size(int):
    """An ``int`` computed from shapes; integer arithmetic with ints keeps the mark.

    With NumPy scalars and arrays it behaves as the Python int it is (a weak scalar, NEP 50):
    NumPy would otherwise convert an ``int`` subclass to a strong int64, so
    ``np.float32(0.5) / x.shape[0]`` gave float64 under ``jit`` and float32 in NumPy.

    >>> import numpy as np
    >>> (np.float32(0.5) / Size(2)).dtype, (np.ones(2, np.float32) * Size(3)).dtype
    (dtype('float32'), dtype('float32'))
    """

    __slots__ = ()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(int(x) if isinstance(x, Size) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def _keep(self, result: Any) -> Any:
        return Size(result) if type(result) is int else result

    def __add__(self, other): return self._keep(int.__add__(self, other))
    def __radd__(self, other): return self._keep(int.__radd__(self, other))
    def __sub__(self, other): return self._keep(int.__sub__(self, other))
    def __rsub__(self, other): return self._keep(int.__rsub__(self, other))
    def __mul__(self, other): return self._keep(int.__mul__(self, other))
    def __rmul__(self, other): return self._keep(int.__rmul__(self, other))
    def __floordiv__(self, other): return self._keep(int.__floordiv__(self, other))
    def __neg__(self): return Size(-int(self))
