"""Entry points: a generated function's compiled code as a Python callable for given argument
types, the form the CPU backend calls on its hot path.

CPU entries are called through arrjit's own CPython wrapper (``native``), so numba compiles
them without its wrapper (``LoadedModule.twin``: 25-40 % of a small kernel's compile). With
the disk cache on, each is stored natively: its machine code and the wrapper, which llvmlite
links in a later process that then imports neither numba nor the generated module. A process
whose every entry loads natively starts its first call ~250 ms sooner (numba's import and CPU
target start-up). Entries the wrapper cannot call (a tuple result) and code that needs numba's
runtime stay with numba's entry points and numba's cache.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ...config import config
from ...runtime import cache as disk
from ...runtime import compile as compiler


def entry_point(loaded: compiler.LoadedModule, function: str, args: Sequence[Any],
                on_error: Callable | None = None) -> compiler.Compiled:
    """The compiled entry point of ``loaded.module.<function>`` for ``args``' exact types.
    Calling it skips numba's type dispatch on the hot path. A native entry (for a function
    returning None, a bool or an int: what arrjit's own wrapper boxes) that meets an error
    status calls ``on_error`` with the call's arguments and returns its result; by default
    numba's entry (``numba_fallback``), which runs the function again to raise the error.

    With the disk cache on, an entry stored natively (``native``) is loaded without numba;
    one compiled now is stored natively for the processes that come later. Where arrjit's
    wrapper can call it, numba compiles it without its CPython wrapper (a quarter to two
    fifths of a small kernel's compile)."""
    key = _abi_key(args)
    if key is not None and (function, key) in loaded.entries:
        return compiler.Compiled(loaded.entries[function, key], 0, 0)
    path = _native_path(loaded, function, key)
    kept_by_numba = False
    if key is not None and path is not None and path.exists():
        native = _load_native(path, loaded, function, args, on_error)
        if native is not None:
            loaded.entries[function, key] = native
            return compiler.Compiled(native, 0, 1)
        kept_by_numba = path.exists()   # ``store.keep_in_numba_cache``
    if key is not None and not kept_by_numba:
        result = _compile_wrapper_free(loaded, function, args, path, on_error)
        if result is not None:
            loaded.entries[function, key] = result.entry
            return result
    result = compiler.compile_signature(loaded, function, compiler.numba_signature(args))
    if key is not None:
        # numba's cache keeps it (it needs numba's runtime), but arrjit's wrapper calls its
        # code all the same: a thread worker is then dispatched natively, not from Python
        bound = _bind_overload(result.entry, loaded, function, args, on_error)
        if bound is not None:
            loaded.entries[function, key] = bound
            return compiler.Compiled(bound, result.compiled, result.disk_hits)
    return compiler.Compiled(result.entry.entry_point, result.compiled, result.disk_hits)


def _bind_overload(overload: Any, loaded: compiler.LoadedModule, function: str,
                   args: Sequence[Any], on_error: Callable | None) -> Callable | None:
    """arrjit's wrapper bound to the native code of numba's compiled ``overload`` (numba's
    own wrapper unused); None when the wrapper cannot call it (a return value it does not
    box)."""
    from .native import abi, load, store

    kinds = abi.describe(args)
    returns = store.returns_of(overload)
    if kinds is None or returns not in abi.RETURNS \
            or not store.flattening_matches(overload, kinds):
        return None
    address = overload.library.get_pointer_to_function(overload.fndesc.mangled_name)
    return load.bind(address, kinds, returns, _nogil(loaded, function),
                     on_error or numba_fallback(loaded, function, args),
                     overload.fndesc.qualname, overload)


def _nogil(loaded: compiler.LoadedModule, function: str) -> bool:
    """Whether ``function`` runs without the GIL (its wrapper then releases it)."""
    return bool(loaded.dispatcher(function).targetoptions.get("nogil"))


def compiled_already(loaded: compiler.LoadedModule, function: str, args: Sequence[Any]
                     ) -> bool:
    """Whether ``entry_point`` would find this entry compiled: loaded in this process, or
    stored on disk (natively, or in numba's cache)."""
    key = _abi_key(args)
    if key is not None and (function, key) in loaded.entries:
        return True
    path = _native_path(loaded, function, key)
    return (path is not None and path.exists()) or compiler.in_numba_cache(loaded)


def native_in_use() -> bool:
    """Whether this process calls entries through arrjit's wrapper and stores them natively:
    Linux (the wrappers are linked from ELF objects), ``config.native_entries``, a numba the
    wrapper was tested with, and an ndarray layout it reads."""
    if not sys.platform.startswith("linux") or not config.native_entries:
        return False
    from .native import load, numba_tested

    return numba_tested() and load.usable()


def _abi_key(args: Sequence[Any]) -> str | None:
    """The native ABI's name for ``args``, where this process runs arrjit's wrappers."""
    if not native_in_use():
        return None
    from .native import abi

    return abi.signature_key(args)


def _compile_wrapper_free(loaded: compiler.LoadedModule, function: str, args: Sequence[Any],
                          path, on_error: Callable | None) -> compiler.Compiled | None:
    """Compile ``function``'s twin (no numba CPython wrapper) for ``args`` and bind arrjit's
    wrapper to it; with ``path``, under the entry's lock, storing it natively there. None
    when arrjit's wrapper cannot call it (a return value it does not box)."""
    from .native import store

    with compiler.compile_lock, compiler.collector_paused(), compiler.entry_lock(loaded):
        if path is not None and path.exists():    # another process stored it meanwhile
            native = _load_native(path, loaded, function, args, on_error)
            if native is not None:
                return compiler.Compiled(native, 0, 1)
            if path.exists():
                return None
        compiler.prepare_numba()
        twin, sig = loaded.twin(function), compiler.numba_signature(args)
        compiled = sig not in twin.overloads
        if compiled:
            twin.compile(sig)
        overload = twin.overloads[sig]
        entry = _bind_overload(overload, loaded, function, args, on_error)
        if entry is None:
            return None
        if path is not None and compiled:
            assert loaded.cache is not None and loaded.entry is not None   # a disk entry
            if not _store_native(path, overload, args, _nogil(loaded, function)):
                # numba's cache keeps what a native entry cannot; the mark sends later
                # processes there
                compiler.compile_signature(loaded, function, sig)
                with contextlib.suppress(OSError):   # without it, the next one compiles
                    store.keep_in_numba_cache(path)
            loaded.cache.touch(loaded.entry)
            disk.enforce_cap(loaded.cache, loaded.entry)
    return compiler.Compiled(entry, int(compiled), 0)


def _native_path(loaded: compiler.LoadedModule, function: str, key: str | None):
    if loaded.entry is None or loaded.cache is None or key is None:
        return None
    return loaded.cache.native_entry(loaded.entry, function, key)


def _load_native(path, loaded: compiler.LoadedModule, function: str, args: Sequence[Any],
                 on_error: Callable | None):
    from .native import load

    assert loaded.entry is not None and loaded.cache is not None   # a disk entry
    try:
        # LLVM's symbol table is shared with numba compiling in another thread
        with compiler.compile_lock:
            native = load.load(path, on_error or numba_fallback(loaded, function, args))
    except load.DamagedEntry as err:
        # numba's files go too, so the compile that follows stores the entry again
        disk.warn_once("native:" + str(path), f"arrjit: native cache entry {path} could not "
                                              f"be loaded ({err}); recompiling it")
        loaded.cache.remove_compiled(loaded.entry)
        return None
    if native is not None:
        loaded.cache.touch(loaded.entry)
    return native


def numba_fallback(loaded: compiler.LoadedModule, function: str,
                   args: Sequence[Any]) -> Callable:
    """What a native entry calls on an error status: numba's entry for the same types,
    which raises the error as numba reports it."""
    standins = [_standin(a) for a in args]   # the same numba types, without the buffers

    def fallback(*call_args: Any) -> Any:
        sig = compiler.numba_signature(standins)
        entry = compiler.compile_signature(loaded, function, sig).entry
        return entry.entry_point(*call_args)

    return fallback


def _standin(arg: Any) -> Any:
    if not isinstance(arg, np.ndarray):
        return arg
    standin = np.empty((0,) * arg.ndim, arg.dtype)
    standin.flags.writeable = arg.flags.writeable
    return standin


def _store_native(path, overload: Any, args: Sequence[Any], nogil: bool) -> bool:
    """Store ``overload`` natively at ``path``; False when it was not stored."""
    from .native import store

    try:
        return store.store(path, overload, args, nogil)
    except Exception as err:   # an optional copy: the compiled entry is returned regardless
        disk.warn_once("native:" + str(path.parent),
                       f"arrjit: cannot store a native entry under {path.parent} "
                       f"({type(err).__name__}: {err}); this entry loads through numba")
        return False
