"""Native parallel dispatch: a chunked kernel's worker run on numba's threading layer.

One call from Python unpacks the worker's arguments, releases the GIL and hands the worker to
numba's ``parallel_for`` (``native.abi.render_parallel_wrapper``), whose threads run it
once each, as thread ``t`` of ``threads``; they return to their own pool when every chunk is
done. No Python thread takes the GIL per call, and the threading layer's threads wait for the
next region natively.

It is used where it is safe, else the Python helper threads of ``threads`` run the worker:

* the worker is a native entry (Linux, ``config.native_entries``);
* numba's threading layer is OpenMP or TBB: both run regions from several threads at once
  (numba's ``workqueue`` aborts the process on a second concurrent region);
* this process is the one that launched the layer: GNU OpenMP terminates a forked child that
  starts a region.

Where numba has launched its layer (a ``prange`` ran first), that one is used; otherwise numba's
OpenMP layer is loaded on its own, unless ``NUMBA_THREADING_LAYER`` asks for another.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from ...config import config
from . import entries
from .native import abi

# thread-safe layers of ``numba.config.THREADING_LAYER``
SAFE_LAYERS = frozenset({"omp", "tbb"})

_layer: str | None = None          # the layer launched, "" when none is usable
_launched_in: int | None = None    # the process that launched it
_entries: dict[int, tuple[Callable, Callable | None]] = {}   # worker id -> (worker, entry)


def threading_layer() -> str:
    """numba's threading layer, launched on the first call; "" where this process cannot
    dispatch natively (see the module's list)."""
    global _layer, _launched_in
    if _layer is None:
        _layer, _launched_in = _launch(), os.getpid()
    return _layer if _launched_in == os.getpid() else ""


def _launch() -> str:
    if not entries.native_in_use():
        return ""
    import llvmlite.binding as ll

    numba_layer = sys.modules.get("numba.np.ufunc.parallel")
    if numba_layer is not None and numba_layer._is_initialized:   # numba launched one
        layer = str(numba_layer._threading_layer)
        return layer if layer in SAFE_LAYERS and ll.address_of_symbol(abi.PARALLEL_FOR) else ""
    wanted = os.environ.get("NUMBA_THREADING_LAYER", "default").lower()
    module = _omp_module() if wanted in ("default", "omp", "threadsafe") else None
    if module is None:
        return ""
    ll.add_symbol(abi.PARALLEL_FOR, module.parallel_for)
    ctypes.CFUNCTYPE(None, ctypes.c_int)(module.launch_threads)(os.cpu_count() or 1)
    return "omp"


def _omp_module() -> Any:
    """numba's OpenMP layer, loaded as its extension module alone: importing numba costs a
    process that loads only native entries ~130 ms. None where it does not load (no OpenMP
    runtime)."""
    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(spec.submodule_search_locations[0]) / "np" / "ufunc"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"omppool{suffix}"
        if path.exists():
            loader = importlib.machinery.ExtensionFileLoader("omppool", str(path))
            try:
                module_spec = importlib.util.spec_from_loader("omppool", loader)
                assert module_spec is not None
                return importlib.util.module_from_spec(module_spec)
            except ImportError:
                return None
    return None


def parallel_entry(worker: Callable, args: Sequence[Any]) -> Callable | None:
    """``worker``'s parallel entry: called with ``args`` (the worker's own: ``..., t,
    threads, bell``) it runs the worker as each thread ``t`` of ``threads`` and returns how
    many runs failed. None where dispatch is not native (``threading_layer``)."""
    known = _entries.get(id(worker))
    if known is not None and known[0] is worker:
        return known[1] if threading_layer() else None
    entry = None
    kinds = abi.describe(args)
    from .native import load

    if config.native_threads and threading_layer() and kinds is not None \
            and load.is_native(worker):
        entry = load.bind_parallel(worker, kinds, thread_arg=len(args) - 3)
    _entries[id(worker)] = (worker, entry)
    return entry


def forget_entries() -> None:
    """Decide each worker's dispatch again on its next run (after ``config.native_threads``
    changed)."""
    _entries.clear()
