"""What arrjit relies on inside numba, and the numba versions that was tested with.

**Typing memo.** Generated kernels apply a few operators to a few scalar types thousands of
times. numba resolves every application from scratch, once when it types a function and once
more when it lowers it, trying each of the operator's typing templates in turn (NumPy's ufunc
loop matching among them): most of the compile time of an arithmetic chain. ``install()``
wraps ``BaseFunction.get_call_type`` so that a call that is a pure function of its argument
types is resolved once per process: an ``operator`` function or an ``@intrinsic`` called
with plain numbers, booleans and arrays (no literal values, no keywords). The first
resolution runs numba's own code, so its errors, warnings and the implementations it
registers for lowering happen as before; a later one returns the same signature and records
the implementation key on the function type, as numba's code does.

>>> import operator
>>> from numba.core import types
>>> from numba.core.registry import cpu_target
>>> install()
>>> cpu_target.typing_context.refresh()
>>> add = cpu_target.typing_context.resolve_value_type(operator.add)
>>> sig = add.get_call_type(cpu_target.typing_context, (types.float64, types.int64), {})
>>> str(sig)
'(float64, float64) -> float64'
>>> add.get_call_type(cpu_target.typing_context, (types.float64, types.int64), {}) is sig
True
"""
from __future__ import annotations

import operator
from functools import lru_cache
from typing import Any

TESTED_NUMBA = ((0, 68), (0, 68))   # the oldest and newest (major, minor) tested

_OPERATORS = frozenset(value for value in vars(operator).values() if callable(value))
_installed = False


@lru_cache(maxsize=None)
def numba_tested() -> bool:
    """Whether the installed numba is one arrjit's uses of its internals were tested with
    (the native ABI, the typing memo)."""
    from .cache import installed_version

    try:
        major, minor = (int(part) for part in installed_version("numba").split(".")[:2])
    except ValueError:
        return False
    return TESTED_NUMBA[0] <= (major, minor) <= TESTED_NUMBA[1]


def install() -> None:
    """Install the typing memo (once; only on a tested numba)."""
    global _installed
    if _installed or not numba_tested():
        return
    _installed = True
    from numba.core import types
    from numba.core.extending import _Intrinsic
    from numba.core.types.functions import BaseFunction

    plain = (types.Integer, types.Float, types.Complex, types.Boolean, types.Array)
    resolve = BaseFunction.get_call_type
    memo: dict[tuple, tuple[Any, Any]] = {}

    def pure(function: Any, args: tuple) -> bool:
        key = function.typing_key
        return ((isinstance(key, _Intrinsic) or (callable(key) and key in _OPERATORS))
                and all(type(a) in plain for a in args))

    def get_call_type(self: Any, context: Any, args: tuple, kws: dict) -> Any:
        if kws or not pure(self, args):
            return resolve(self, context, args, kws)
        key = (self, id(context), args)
        known = memo.get(key)
        if known is not None:
            signature, implementation = known
            self._impl_keys[signature.args] = implementation
            return signature
        signature = resolve(self, context, args, kws)
        if signature is not None:
            memo[key] = signature, self._impl_keys[signature.args]
        return signature

    setattr(BaseFunction, "get_call_type", get_call_type)
