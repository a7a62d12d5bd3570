"""Native entries: compiled functions saved with their own CPython wrapper, so a later
process calls them without importing numba (``abi``: the calling convention and wrapper;
``store``: writing one from a numba overload; ``load``: linking one with llvmlite).

The wrapper reads numba's calling convention and data model, which are numba's internals:
it is used only with the numba versions it was tested with (``TESTED_NUMBA``); with any other,
entries are numba's own."""
from __future__ import annotations

from functools import lru_cache

TESTED_NUMBA = ((0, 68), (0, 68))   # the oldest and newest (major, minor) tested


@lru_cache(maxsize=None)
def numba_tested() -> bool:
    """Whether the installed numba is one the native ABI was tested with."""
    from ....runtime.cache import installed_version

    try:
        major, minor = (int(part) for part in installed_version("numba").split(".")[:2])
    except ValueError:
        return False
    return TESTED_NUMBA[0] <= (major, minor) <= TESTED_NUMBA[1]
