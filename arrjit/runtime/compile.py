"""The only module outside the backends that imports numba: turns generated source into
callable machine code.

A module is loaded once per process per source text. With the disk cache on, the source is
published as a file named by its hash (plus the environment key) and imported from there, so
numba's ``cache=True`` keeps the machine code next to it for the next process. The first
compile of an entry holds a per-entry file lock, so processes started together compile once
and the others load. A corrupt entry is a miss: one warning, then a recompile that repairs it.

CPU entry points, called through arrjit's own wrapper and stored natively, are ``entries``'.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib.util
import sys
import threading
import types
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import background
from . import cache as disk
from . import numba_internals

_modules: dict[str, "LoadedModule"] = {}
compile_lock = threading.RLock()


@dataclass
class CompileStats:
    """What building one jitted function's plans cost (``Jitted.cache_info``, the log)."""

    compiles: int = 0
    disk_hits: int = 0
    compile_seconds: float = 0.0   # spent in numba compiling
    load_seconds: float = 0.0      # spent loading machine code from the disk cache
    kernels: int = 0               # kernels of the programs built (a recurring one each time)
    kernels_compiled: int = 0      # of them, those compiled (not loaded, not already loaded)

    def kernel_built(self, compiles_before: int) -> None:
        """Count a kernel whose entries have just been made; ``compiles_before``: the count
        of compiles before them (more now: the kernel was compiled, not loaded or shared)."""
        self.kernels += 1
        self.kernels_compiled += self.compiles > compiles_before

    def add(self, result: "Compiled", seconds: float) -> None:
        self.compiles += result.compiled
        self.disk_hits += result.disk_hits
        if result.compiled:
            self.compile_seconds += seconds
        elif result.disk_hits:
            self.load_seconds += seconds


class LoadedModule:
    """A generated module, imported (which imports numba) only when something needs it: a
    process that finds every entry it calls stored natively never imports it."""

    def __init__(self, source: str, entry: "disk.EntryPaths | None",
                 cache: "disk.DiskCache | None"):
        self.source = source    # as generated (``CACHE = False``): what runs from memory
        self.entry = entry      # None: memory-only
        self.cache = cache
        self._module: types.ModuleType | None = None
        self._dispatchers: dict[str, Any] = {}   # numba's, once the module holds twins
        self._twins: dict[str, Any] = {}
        self.entries: dict[tuple[str, str], Callable] = {}   # (function, ABI key) -> entry

    @property
    def module(self) -> types.ModuleType:
        if self._module is None:
            self._module = self._import()
        return self._module

    @module.setter
    def module(self, module: types.ModuleType) -> None:
        self._module = module
        self._dispatchers, self._twins = {}, {}

    @property
    def imported(self) -> types.ModuleType | None:
        """The module if something has imported it, without importing it."""
        return self._module

    def dispatcher(self, function: str) -> Any:
        """numba's dispatcher of ``function``, with numba's CPython wrapper."""
        return self._dispatchers.get(function) or getattr(self.module, function)

    def twin(self, function: str) -> Any:
        """The dispatcher of ``function`` compiled without numba's CPython wrapper, for
        entries that arrjit's wrapper (``native.abi``) calls. On first use every jitted
        function of the module gets its twin, under its name in the module, so that the
        functions a twin calls compile without wrappers too (a kernel a threaded worker calls
        is compiled once). Twins do not use numba's cache: it keys overloads by signature
        alone, so a twin's and a dispatcher's code would overwrite each other's."""
        if not self._twins:
            from numba import njit
            from numba.core.registry import CPUDispatcher

            namespace = vars(self.module)
            self._dispatchers = {name: d for name, d in namespace.items()
                                 if isinstance(d, CPUDispatcher)}
            for name, d in self._dispatchers.items():
                options: dict[str, Any] = {k: v for k, v in d.targetoptions.items()
                                           if k != "nopython"}
                options["no_cpython_wrapper"] = True
                self._twins[name] = njit(**options)(d.py_func)
            namespace.update(self._twins)
        return self._twins[function]

    def _import(self) -> types.ModuleType:
        if self.entry is not None:
            try:
                return _import_file(self.entry)
            except Exception as err:  # an unreadable file: fall back to memory
                disk.warn_once("import:" + self.entry.digest,
                               f"arrjit: cannot import cache entry {self.entry.module} ({err}); "
                               f"compiling in memory")
                self.entry = self.cache = None
        return _exec_in_memory(self.source, source_digest(self.source))


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def _exec_in_memory(source: str, digest: str) -> types.ModuleType:
    name = f"arrjit_generated_{digest[:24]}"
    module = types.ModuleType(name)
    module.__file__ = f"<arrjit {name}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _import_file(entry: "disk.EntryPaths") -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(entry.module_name, entry.module)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {entry.module}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[entry.module_name] = module
    spec.loader.exec_module(module)
    return module


def load_module(source: str, key_fields: Mapping[str, Any]) -> LoadedModule:
    """The module for ``source``: from this process's table, the disk cache, or memory.
    ``key_fields`` are the backend's parts of the cache key (``Backend.cache_key_fields``)."""
    digest = source_digest(source)
    with compile_lock:
        loaded = _modules.get(digest)
        if loaded is not None:
            return loaded
        cache = disk.open_cache(key_fields)
        if cache is not None:
            cached_source = source.replace("\nCACHE = False\n", "\nCACHE = True\n", 1)
            entry = cache.entry(cached_source)
            if cache.publish(entry, cached_source):
                loaded = LoadedModule(source, entry, cache)
        if loaded is None:
            loaded = LoadedModule(source, None, None)
        _modules[digest] = loaded
        return loaded


def numba_signature(args: Sequence[Any]) -> tuple:
    """numba's types of ``args``, as ``numba.typeof`` gives them."""
    return tuple(_numba_type(a) for a in args)


def _numba_type(arg: Any) -> Any:
    from numba import typeof

    if type(arg) is np.ndarray:   # not a subclass (a masked array, which typeof refuses)
        from numba import types
        from numba.np.numpy_support import from_dtype, map_layout

        try:   # typeof's own steps, without its import of numpy.ma (11 ms, once)
            return types.Array(from_dtype(arg.dtype), arg.ndim, map_layout(arg),
                               readonly=not arg.flags.writeable)
        except Exception:   # a dtype numba does not support: typeof raises its error
            pass
    return typeof(arg)


@dataclass
class Compiled:
    entry: Any   # a CPU entry point (callable), or a compiled overload
    compiled: int   # numba compilations this call caused
    disk_hits: int  # overloads loaded from the disk cache


_file_locks: dict[str, Any] = {}


def _file_lock(entry: "disk.EntryPaths") -> Any:
    """The one lock object of ``entry``'s lock file (it is reentrant; a second object for
    the same file would wait on the first)."""
    from filelock import FileLock

    lock = _file_locks.get(str(entry.lock))
    if lock is None:
        lock = _file_locks[str(entry.lock)] = FileLock(str(entry.lock), timeout=600)
    return lock


@contextlib.contextmanager
def entry_lock(loaded: LoadedModule):
    """The disk entry's file lock (processes started together compile it once); nothing for
    a module in memory. A lock that cannot be had warns once and the compile goes on."""
    entry, cache = loaded.entry, loaded.cache
    if entry is None or cache is None:
        yield
        return
    from filelock import Timeout

    try:
        lock = _file_lock(entry)
        lock.acquire()
    except Timeout:
        disk.warn_once("lock:" + entry.digest, f"arrjit: waited 600 s for {entry.lock}; "
                                               f"compiling without it")
        yield
        return
    except OSError as err:  # the lock file cannot be created: compile anyway
        disk.warn_once("lock:" + str(cache.env_dir), f"arrjit: cannot lock in {cache.env_dir} "
                                                     f"({err}); compiling without a lock")
        yield
        return
    try:
        yield
    finally:
        lock.release()


def busy(loaded: LoadedModule) -> bool:
    """Whether another process holds ``loaded``'s entry lock now (compiling it)."""
    if loaded.entry is None or loaded.cache is None:
        return False
    from filelock import Timeout

    lock = _file_lock(loaded.entry)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:
        return False
    lock.release()
    return False


def compile_signature(loaded: LoadedModule, function: str, sig: tuple) -> Compiled:
    """Compile (or load from the disk cache) ``loaded.module.<function>`` for the numba
    argument types ``sig``; ``entry`` is the dispatcher's overload for them (a CPU
    compile result, or a CUDA kernel)."""
    dispatcher = loaded.dispatcher(function)
    with compile_lock, collector_paused():
        prepare_numba()
        if sig in dispatcher.overloads:
            return Compiled(dispatcher.overloads[sig], 0, 0)
        if loaded.entry is None:
            dispatcher.compile(sig)
            return Compiled(dispatcher.overloads[sig], 1, 0)
        return _compile_with_disk(loaded, dispatcher, sig)


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while numba compiles (when it was on).

    A compile allocates hundreds of thousands of objects, each 700 of which start a young
    collection, and every few of those a full one that walks the whole heap, which numba's
    compiled functions keep growing: 16 % of a compile-heavy test file's time (8.6 of 52.7 s)
    went to collections. Paused, the compile's objects are collected together afterwards, once."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


_numba_prepared = False


def prepare_numba() -> None:
    """Install the typing memo (``numba_internals``), and import numba's NumPy support before
    its target first loads it, without SciPy.

    ``numba.np.arraymath`` asks at import whether ``np.dot`` could use BLAS in jitted code by
    importing ``scipy.linalg.cython_blas``: all of SciPy's linalg package, paid by every
    process's first compile or disk load when SciPy is installed (~130 ms of a 0.65 s
    disk-warm first call, measured A/B). Generated kernels never call numba's BLAS (matrix
    products run in NumPy), so for that one import the question is answered from whether SciPy
    is installed; numba's own ``ensure_blas`` is restored at once, and a later ``np.dot`` in
    numba code imports SciPy as before."""
    global _numba_prepared
    if _numba_prepared:
        return
    _numba_prepared = True
    numba_internals.install()
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return   # nothing left to save
    import numba.np.linalg as linalg

    def blas_if_installed() -> None:
        if importlib.util.find_spec("scipy") is None:
            raise ImportError("scipy 0.16+ is required for linear algebra")

    ensure_blas = linalg.ensure_blas
    linalg.ensure_blas = blas_if_installed
    try:
        import numba.np.arraymath as arraymath
    finally:
        linalg.ensure_blas = ensure_blas
    arraymath.ensure_blas = ensure_blas


def _compile_with_disk(loaded: LoadedModule, dispatcher, sig) -> Compiled:
    entry, cache = loaded.entry, loaded.cache
    assert entry is not None and cache is not None  # only called with the disk cache on
    hits_before = sum(dispatcher._cache_hits.values())
    with entry_lock(loaded):
        dispatcher = _compile_repairing(loaded, dispatcher, sig)
    hits = max(0, sum(dispatcher._cache_hits.values()) - hits_before)
    cache.touch(entry)
    if not hits:
        disk.enforce_cap(cache, entry)
    return Compiled(dispatcher.overloads[sig], 0 if hits else 1, hits)


def _compile_repairing(loaded: LoadedModule, dispatcher, sig):
    """Compile (or load) ``sig``; returns the dispatcher that now holds it."""
    entry, cache = loaded.entry, loaded.cache
    assert entry is not None and cache is not None  # only called with the disk cache on
    had_cache_files = in_numba_cache(loaded)
    try:
        dispatcher.compile(sig)
        return dispatcher
    except Exception as err:
        if not had_cache_files:  # nothing was loaded from disk: a genuine compile error
            raise
        # numba's index or code file is unreadable (truncated, zeroed, garbage): drop them
        # and compile afresh, which rewrites them.
        cache.remove_compiled(entry)
        disk.warn_once("numba:" + entry.digest,
                       f"arrjit: cache entry {entry.module_name} could not be loaded "
                       f"({type(err).__name__}: {err}); recompiling it")
        # Re-import so every dispatcher of the module starts from a clean cache state.
        loaded.module = _import_file(entry)
        fresh = getattr(loaded.module, dispatcher.py_func.__name__)
        fresh.compile(sig)
        return fresh


def in_numba_cache(loaded: LoadedModule) -> bool:
    """Whether numba's cache holds files of ``loaded``'s disk entry."""
    if loaded.entry is None or loaded.cache is None:
        return False
    pycache = loaded.cache.env_dir / "__pycache__"
    return pycache.is_dir() and any(pycache.glob(loaded.entry.module_name + ".*"))


def clear() -> None:
    """Forget the loaded modules (after the background compiles queued so far have run:
    they compile into modules loaded before)."""
    background.wait()
    with compile_lock:
        for loaded in _modules.values():
            if loaded.imported is not None:   # importing it now would import numba
                sys.modules.pop(loaded.imported.__name__, None)
        _modules.clear()
    disk.forget_opened()
