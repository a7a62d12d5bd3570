"""Loading a native entry without numba: its objects linked by llvmlite's MCJIT, its wrapper
made a CPython function through ``PyCFunction_NewEx``; and binding that wrapper to a function
numba compiled in this process without its own (``bind``).

Importing numba and starting its CPU target costs ~250 ms of a process's first call; loading
a stored entry costs llvmlite's import (~17 ms, once) and ~1-3 ms per entry. The callable
returned behaves as numba's entry point for the same arguments, errors included: on a status
other than success it calls ``fallback`` (numba's entry, loaded then) with the same arguments.
"""
from __future__ import annotations

import ctypes
import pickle
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from . import abi
from .objects import read_symbols
from .store import FORMAT, compile_wrapper, objects_digest, target_machine

_METH_FASTCALL = 0x0080


class DamagedEntry(Exception):
    """A stored entry that cannot be read back (truncated, altered, or not one of ours)."""


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.POINTER(_MethodDef), ctypes.py_object, ctypes.py_object]

# Engines, method definitions and fallbacks of every loaded entry: the machine code and the
# structures CPython points into must outlive the functions (kept for the process, as numba
# keeps its compiled code).
_alive: dict[int, tuple] = {}
_usable: bool | None = None


def usable() -> bool:
    """Whether this process can load native entries: an ELF host whose ndarray layout is the
    one ``abi`` reads (a free-threaded or debug CPython has a different object header)."""
    global _usable
    if _usable is None:
        probe = np.zeros((2, 3))
        base = id(probe)

        def word(offset: int) -> int | None:
            return ctypes.c_void_p.from_address(base + offset).value

        _usable = (word(abi.DATA_OFFSET) == probe.ctypes.data
                   and _reads(word(abi.DIMS_OFFSET), 2) == [2, 3]
                   and _reads(word(abi.STRIDES_OFFSET), 2) == [24, 8])
    return _usable


def _reads(address: int | None, count: int) -> list[int]:
    if not address:
        return []
    return list((ctypes.c_int64 * count).from_address(address))


def load(path: Path, fallback: Callable) -> Callable | None:
    """The entry stored at ``path`` as a CPython function, or None when this process cannot
    load it (another object format or ndarray layout, a symbol it cannot resolve) or the
    entry is kept by numba's cache (``store.keep_in_numba_cache``). Raises
    ``DamagedEntry`` when the file does not hold an intact entry of this format."""
    if not usable():
        return None
    try:
        record = pickle.loads(path.read_bytes())
        written_as = record["format"]
        intact = written_as != FORMAT or record["digest"] == objects_digest(record["objects"])
    except Exception as err:   # unreadable, truncated, or not ours
        raise DamagedEntry(f"{type(err).__name__}: {err}") from None
    if written_as != FORMAT:
        raise DamagedEntry(f"it was written in format {written_as!r}; this arrjit reads "
                           f"format {FORMAT}")
    if not intact:
        raise DamagedEntry("its checksum does not match")
    if record.get("numba_cache"):
        return None
    if not _resolve(record["objects"], set(record["unreached"])):
        return None
    engine = _link(record["objects"])
    function = _function(engine, record["name"], fallback, {})
    if function is not None and record.get("symbol"):
        _targets[id(function)] = engine.get_function_address(record["symbol"])
    return function


def bind(address: int, kinds: Sequence[abi.ArgKind], returns: str, nogil: bool,
         fallback: Callable, name: str, keep: Any) -> Callable | None:
    """A CPython function calling the native function at ``address`` (compiled by numba in
    this process, which ``keep`` holds alive) through the wrapper of ``abi``: the entry point
    of a function numba compiled without its own CPython wrapper."""
    if not usable():
        return None
    key = (tuple(kinds), returns, nogil)
    wrapper = _indirect_wrappers.get(key)
    if wrapper is None:
        wrapper = compile_wrapper(abi.render_wrapper(None, kinds, returns, nogil))
        if not _resolve([wrapper], set()):
            return None
        _indirect_wrappers[key] = wrapper
    function = _function(_link([wrapper]), name, fallback, {abi.TARGET_GLOBAL: address}, keep)
    if function is not None:
        _targets[id(function)] = address
    return function


def bind_parallel(function: Callable, kinds: Sequence[abi.ArgKind],
                  thread_arg: int) -> Callable | None:
    """A CPython function running the native code behind ``function`` (an entry of this
    module, taking arguments of ``kinds``) once per thread through numba's threading layer
    (``abi.render_parallel_wrapper``; launched by the caller). None when ``function`` is not
    such an entry."""
    address, kept = _targets.get(id(function)), _alive.get(id(function))
    if address is None or kept is None or kept[0] is not function:
        return None
    key = (tuple(kinds), thread_arg)
    wrapper = _parallel_wrappers.get(key)
    if wrapper is None:
        wrapper = compile_wrapper(abi.render_parallel_wrapper(kinds, thread_arg))
        if not _resolve([wrapper], set()):
            return None
        _parallel_wrappers[key] = wrapper

    def wrong_arity(*args: Any) -> None:
        raise TypeError(f"arrjit: a parallel entry takes {len(kinds)} arguments, "
                        f"not {len(args)}")

    return _function(_link([wrapper]), "parallel", wrong_arity,
                     {abi.TARGET_GLOBAL: address}, function)


# Wrapper objects that call through ``arrjit_target``, by ABI: the same machine code for
# every function of that ABI, so each is emitted (and its symbols resolved) once per process.
_indirect_wrappers: dict[tuple, bytes] = {}
_parallel_wrappers: dict[tuple, bytes] = {}
# The native function behind each entry: its machine code address, by id of the entry.
_targets: dict[int, int] = {}


def _link(objects: Sequence[bytes]) -> Any:
    import llvmlite.binding as ll

    engine = ll.create_mcjit_compiler(ll.parse_assembly(""), target_machine())
    for data in objects:
        engine.add_object_file(ll.ObjectFileRef.from_data(data))
    engine.finalize_object()
    return engine


def _function(engine: Any, name: str, fallback: Callable, pointers: dict[str, int],
              keep: Any = None) -> Callable | None:
    """The wrapper linked in ``engine`` as a CPython function, its fallback and the given
    pointer globals set."""
    address = engine.get_function_address(abi.WRAPPER_NAME)
    slots = {g: engine.get_global_value_address(g)
             for g in (abi.FALLBACK_GLOBAL, *pointers)}
    if not address or not all(slots.values()):
        return None
    ctypes.c_void_p.from_address(slots[abi.FALLBACK_GLOBAL]).value = id(fallback)
    for global_name, pointer in pointers.items():
        ctypes.c_void_p.from_address(slots[global_name]).value = pointer
    method = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    function = _new_function(ctypes.byref(method), None, None)
    _alive[id(function)] = (function, engine, method, fallback, keep)
    return function


def is_native(function: Callable) -> bool:
    """Whether ``function`` is called through ``abi``'s wrapper: an entry this module loaded
    from a file, or one it bound to code numba compiled in this process."""
    kept = _alive.get(id(function))
    return kept is not None and kept[0] is function


_abort: int | None = None


def _resolve(objects: Sequence[bytes], unreached: set[str]) -> bool:
    """Make every symbol ``objects`` need resolvable: from this process, or (for what the
    entry never calls: numba's unused CPython wrapper, ``store.NEVER_CALLED``) bound to
    ``abort``. False when a symbol the code itself needs is missing."""
    import llvmlite.binding as ll

    global _abort
    symbols = [read_symbols(data) for data in objects]
    if any(s is None for s in symbols):
        return False
    defined = set().union(*(s.defined for s in symbols if s is not None))
    needed = set().union(*(s.undefined for s in symbols if s is not None)) - defined
    process = ctypes.CDLL(None)
    for name in needed:
        if ll.address_of_symbol(name):
            continue
        if hasattr(process, name):
            ll.add_symbol(name, ctypes.cast(getattr(process, name), ctypes.c_void_p).value)
        elif name in unreached:
            if _abort is None:
                _abort = ctypes.cast(process.abort, ctypes.c_void_p).value
            ll.add_symbol(name, _abort)
        else:
            return False
    return True
