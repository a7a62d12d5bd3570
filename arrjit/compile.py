"""The only module that imports numba: turns generated source into callable machine code.

Modules are keyed by the SHA-256 of their source, so identical kernels (for example the same
program traced for a new array length) are compiled once per process. A compiled function's
``entry_point`` for exact argument types is what the hot call path invokes.
"""
from __future__ import annotations

import hashlib
import sys
import threading
import types
from typing import Any, Callable, Sequence

_modules: dict[str, types.ModuleType] = {}
_lock = threading.RLock()


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def load_module(source: str) -> types.ModuleType:
    """Execute generated source as a module registered under its hash (once per process)."""
    digest = source_digest(source)
    with _lock:
        module = _modules.get(digest)
        if module is None:
            name = f"arrjit_generated_{digest[:24]}"
            module = types.ModuleType(name)
            module.__file__ = f"<arrjit {name}>"
            code = compile(source, module.__file__, "exec")
            sys.modules[name] = module
            exec(code, module.__dict__)
            _modules[digest] = module
        return module


def numba_signature(args: Sequence[Any]) -> tuple:
    from numba import typeof

    return tuple(typeof(a) for a in args)


def entry_point(dispatcher, args: Sequence[Any]) -> tuple[Callable, bool]:
    """The compiled entry point of ``dispatcher`` for ``args``' exact types, and whether this
    call compiled it. Calling the entry point skips numba's type dispatch (~120 ns saved)."""
    sig = numba_signature(args)
    with _lock:
        compiled = sig in dispatcher.overloads
        if not compiled:
            dispatcher.compile(sig)
        return dispatcher.overloads[sig].entry_point, not compiled


def clear() -> None:
    with _lock:
        for module in _modules.values():
            sys.modules.pop(module.__name__, None)
        _modules.clear()
