"""Native entries: compiled functions saved with their own CPython wrapper, so a later
process calls them without importing numba (``abi``: the calling convention and wrapper;
``store``: writing one from a numba overload; ``load``: linking one with llvmlite).

The wrapper reads numba's calling convention and data model, which are numba's internals:
it is used only with the numba versions it was tested with (``TESTED_NUMBA``); with any other,
entries are numba's own."""
from __future__ import annotations

from ....runtime.numba_internals import TESTED_NUMBA, numba_tested

__all__ = ["TESTED_NUMBA", "numba_tested"]
