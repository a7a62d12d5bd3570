"""Native entries: compiled functions saved with their own CPython wrapper, so a later
process calls them without importing numba (``abi``: the calling convention and wrapper;
``store``: writing one from a numba overload; ``load``: linking one with llvmlite)."""
