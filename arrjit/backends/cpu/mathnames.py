"""Names and sizes the generated code uses from ``mathlib``, importable without it
(``mathlib`` imports numba, which a process loading only native entries never needs).

>>> "div" in COMPLEX_HELPERS
True
"""
from __future__ import annotations

# ``mathlib.complex`` defines ``<name>_c64`` and ``<name>_c128`` for each
COMPLEX_HELPERS = ("mul", "square", "absolute", "div", "sign", "tanh", "tan", "rint", "power",
                   "exp", "cosh", "sinh", "cos", "sin", "arcsinh", "arccosh", "arctanh",
                   "arccos", "arcsin", "arctan")

# elements of a ``mathlib.block`` stack buffer (a column-order kernel's accumulators)
BLOCK = 1024
