"""Loading a native entry without numba: its objects linked by llvmlite's MCJIT, its wrapper
made a CPython function through ``PyCFunction_NewEx``.

Importing numba and starting its CPU target costs ~250 ms of a process's first call; loading
a stored entry costs llvmlite's import (~17 ms, once) and ~1-3 ms per entry. The callable
returned behaves as numba's entry point for the same arguments, errors included: on a status
other than success it calls ``fallback`` (numba's entry, loaded then) with the same arguments.
"""
from __future__ import annotations

import ctypes
import pickle
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import abi
from .objects import read_symbols
from .store import FORMAT, objects_digest, target_machine

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
    load it (another object format or ndarray layout, a symbol it cannot resolve). Raises
    ``DamagedEntry`` when the file does not hold an intact entry of this format."""
    if not usable():
        return None
    try:
        record = pickle.loads(path.read_bytes())
        intact = (record["format"] == FORMAT
                  and record["digest"] == objects_digest(record["objects"]))
    except Exception as err:   # unreadable, truncated, or not ours
        raise DamagedEntry(f"{type(err).__name__}: {err}") from None
    if not intact:
        raise DamagedEntry("its checksum does not match")
    import llvmlite.binding as ll

    machine = target_machine()
    engine = ll.create_mcjit_compiler(ll.parse_assembly(""), machine)
    if not _resolve(record):
        return None
    for data in record["objects"]:
        engine.add_object_file(ll.ObjectFileRef.from_data(data))
    engine.finalize_object()
    address = engine.get_function_address(abi.WRAPPER_NAME)
    slot = engine.get_global_value_address(abi.FALLBACK_GLOBAL)
    if not address or not slot:
        return None
    ctypes.c_void_p.from_address(slot).value = id(fallback)
    method = _MethodDef(record["name"].encode(), address, _METH_FASTCALL, None)
    function = _new_function(ctypes.byref(method), None, None)
    _alive[id(function)] = (function, engine, method, fallback)
    return function


def is_native(function: Callable) -> bool:
    """Whether ``function`` is an entry this module loaded."""
    kept = _alive.get(id(function))
    return kept is not None and kept[0] is function


_abort: int | None = None


def _resolve(record: dict) -> bool:
    """Make every symbol the objects need resolvable: from this process, or (for what the
    entry never calls: numba's unused CPython wrapper, ``store.NEVER_CALLED``) bound to
    ``abort``. False when a symbol the code itself needs is missing."""
    import llvmlite.binding as ll

    global _abort
    symbols = [read_symbols(data) for data in record["objects"]]
    if any(s is None for s in symbols):
        return False
    defined = set().union(*(s.defined for s in symbols if s is not None))
    needed = set().union(*(s.undefined for s in symbols if s is not None)) - defined
    process = ctypes.CDLL(None)
    unreached = set(record["unreached"])
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
