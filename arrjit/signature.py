"""Arguments of a jitted function: binding to the signature, static / dynamic / donated
splits, and the signature key that the memory cache is indexed by.

Arguments are bound before keying, so ``f(x, 2)``, ``f(x, n=2)`` and ``f(x)`` with default
``n=2`` share one entry. A default the caller did not pass stays a Python constant (as in
JAX), keyed by value.

>>> import numpy as np
>>> leaf_key(np.zeros((2, 3), np.float32))[:2]
(dtype('float32'), (2, 3))
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from . import errors
from .core.dtypes import Aval, check_supported
from .core.foreign import device_info
from .core.trace import Tracer
from .core.tree import flatten_with_paths

KEY_FLAGS = 0x1 | 0x100 | 0x400  # C_CONTIGUOUS | ALIGNED | WRITEABLE: what numba types see
PYTHON_SCALARS = (bool, int, float, complex)
# Scalar arguments key and flatten without the pytree walk: one leaf each.
SCALAR_LEAVES = frozenset({*PYTHON_SCALARS, *(np.dtype(c).type for c in "?bBhHiIlLqQefdgFDG")})
LEAF_TREE = flatten_with_paths(0.0)[2]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


class Default:
    """A default the caller did not supply: a Python constant of the function (as in JAX),
    keyed by value and never traced."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Default) and type(other.value) is type(self.value) and (
            other.value is self.value or other.value == self.value)

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))

    def __repr__(self) -> str:
        return f"default {self.value!r}"


def unwrap(v: Any) -> Any:
    return v.value if isinstance(v, Default) else v


def leaf_key(x: Any) -> Any:
    if type(x) is np.ndarray:
        return (x.dtype, x.shape, x.flags.num & KEY_FLAGS)
    if type(x) in PYTHON_SCALARS:
        return type(x)
    if isinstance(x, np.generic):
        return (x.dtype, "scalar")
    if isinstance(x, Tracer):
        return ("tracer", x.aval)
    if isinstance(x, np.ndarray):  # subclasses: treated as plain arrays
        return (x.dtype, x.shape, x.flags.num & KEY_FLAGS)
    device = device_info(x)
    if device is not None:      # a CUDA array: shape, dtype, contiguity
        return ("device",) + device
    return ("object", type(x))


# The key part of a scalar argument, one shared object per type: the hot path compares a key
# with the last one it saw, and shared parts compare by identity.
SCALAR_KEYS: dict[type, tuple] = {t: (LEAF_TREE, (leaf_key(t(0)),)) for t in SCALAR_LEAVES}


def leaf_aval(x: Any, name: str) -> Aval:
    if type(x) in PYTHON_SCALARS:
        if type(x) is bool:
            return Aval((), np.dtype(bool))
        return Aval((), np.dtype({int: np.int64, float: np.float64, complex: np.complex128}[
            type(x)]), weak=True)
    device = device_info(x)
    if device is not None:
        return Aval(device[0], check_supported(device[1], f"argument {name!r}"))
    if not isinstance(x, (np.ndarray, np.generic)):
        if hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
            x = np.asarray(x)
        else:
            raise TypeError(
                f"argument {name!r} of type {type(x).__name__} is not a valid jit argument: "
                f"pass arrays, Python scalars or tuples/lists/dicts of them, or mark it static "
                f"with static_argnames=({name.split('[')[0].split('.')[0]!r},)")
    return Aval(tuple(x.shape), check_supported(x.dtype, f"argument {name!r}"))


def as_array(x: Any) -> np.ndarray:
    """A C-contiguous host array for a jit argument leaf (CUDA arrays are copied over)."""
    if type(x) is np.ndarray:
        return x if x.flags.c_contiguous else np.asarray(x, order="C")
    if type(x) is int:
        return np.asarray(x, dtype=np.int64)
    if hasattr(x, "copy_to_host"):
        x = x.copy_to_host()
    return np.asarray(x, order="C")  # (ascontiguousarray would turn 0-d into 1-d)


class ArgumentBinding:
    """Binding, keys and leaf names for ``Jitted`` (which inherits them)."""

    _name: str

    def _bind_signature(self, fun: Callable, static_argnums, static_argnames, donate_argnums,
                        donate_argnames) -> None:
        try:
            self._signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        self.static_argnums, self.static_argnames = self._resolve(
            "static", static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = self._resolve(
            "donate", donate_argnums, donate_argnames)
        overlap = set(self.static_argnums) & set(self.donate_argnums)
        if overlap:
            raise ValueError(
                f"jit({self._name}): arguments {sorted(overlap)} are both static and donated; "
                f"a static argument is a Python value, not a buffer: remove it from "
                f"donate_argnums/donate_argnames")
        self._params = list(self._signature.parameters.values()) if self._signature else []
        self._positional = [p for p in self._params
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        simple = (self._signature is not None and all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in self._params))
        self._fast_arity = len(self._params) if simple else -1
        self._param_names = [p.name for p in self._params]
        self._static_positions = frozenset(
            k for k, p in enumerate(self._params) if p.name in self.static_argnames)
        self._donated_positions = frozenset(
            k for k, p in enumerate(self._params) if p.name in self.donate_argnames)

    # -- decoration-time checks -----------------------------------------------------------------
    def _resolve(self, what: str, argnums, argnames) -> tuple[tuple[int, ...], tuple[str, ...]]:
        nums = _as_tuple(argnums, int, f"{what}_argnums")
        names = _as_tuple(argnames, str, f"{what}_argnames")
        if self._signature is None:
            return nums, names
        params = list(self._signature.parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        has_varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
        has_varkw = any(p.kind is p.VAR_KEYWORD for p in params)
        norm = []
        for n in nums:
            k = n + len(positional) if n < 0 else n
            if not 0 <= k < len(positional):
                if has_varargs and n >= 0:
                    raise ValueError(
                        f"jit({self._name}): {what}_argnums={n} points into *args; arrjit binds "
                        f"arguments by name, so name a parameter instead")
                raise ValueError(
                    f"jit({self._name}): {what}_argnums={n} is out of range: the function has "
                    f"{len(positional)} positional parameter(s) "
                    f"({', '.join(p.name for p in positional)})")
            norm.append(k)
        known = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        for name in names:
            if name not in known and not has_varkw:
                raise ValueError(
                    f"jit({self._name}): {what}_argnames contains {name!r}, which is not a "
                    f"parameter; parameters are {', '.join(sorted(known)) or 'none'}")
        all_names = set(names) | {positional[k].name for k in norm}
        all_nums = set(norm) | {k for k, p in enumerate(positional) if p.name in names}
        return tuple(sorted(all_nums)), tuple(sorted(all_names))

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        """Values for every parameter in order (defaults applied); *args and **kwargs params
        hold a tuple and a dict."""
        if self._signature is None:
            if kwargs:
                raise TypeError(f"{self._name} has no inspectable signature: pass positional "
                                f"arguments only")
            return args
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"{self._name}(): {err}") from None
        supplied = set(bound.arguments)
        bound.apply_defaults()
        values = []
        for k, p in enumerate(self._params):
            v = bound.arguments.get(p.name, _Missing())
            if (p.name not in supplied and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                    and k not in self._static_positions and _hashable(v)):
                v = Default(v)
            values.append(v)
        return tuple(values)

    def _key(self, values: Sequence) -> tuple[tuple, list]:
        parts: list = []
        leaves: list = []
        static = self._static_positions
        for k, v in enumerate(values):
            if k in static:
                try:
                    hash(v)
                except TypeError:
                    raise self._unhashable(k, v) from None
                parts.append((type(v), v))
            elif type(v) is np.ndarray:
                parts.append((v.dtype, v.shape, v.flags.num & KEY_FLAGS))
                leaves.append(v)
            elif type(v) is Default:
                parts.append(v)
            elif type(v) in SCALAR_LEAVES:     # a leaf as ``flatten_with_paths`` gives it
                parts.append(SCALAR_KEYS[type(v)])
                leaves.append(v)
            else:
                l, _, tree = flatten_with_paths(v)
                parts.append((tree, tuple(leaf_key(x) for x in l)))
                leaves.extend(l)
        return tuple(parts), leaves

    def _unhashable(self, k: int, v: Any) -> errors.NonHashableStaticArgError:
        name = self._param_names[k] if k < len(self._param_names) else str(k)
        return errors.NonHashableStaticArgError(
            f"static argument {name!r} of {self._name} has unhashable type "
            f"{type(v).__name__} ({v!r:.60}); static arguments key the compile cache, so they "
            f"must be hashable. Pass a tuple instead of a list (or a frozen dataclass), or make "
            f"the argument non-static if it holds arrays.")

    def _leaf_names(self, values: Sequence) -> tuple[list[str], list[int]]:
        """Names of the dynamic leaves (``x``, ``params['w']``) and which are donated."""
        names: list[str] = []
        donated: list[int] = []
        for k, v in enumerate(values):
            if k in self._static_positions or type(v) is Default:
                continue
            base = self._param_names[k] if k < len(self._param_names) else f"arg{k}"
            _, paths, _ = flatten_with_paths(v)
            for p in paths:
                if k in self._donated_positions:
                    donated.append(len(names))
                names.append(base + p)
        return names, donated

    def _rebuild_call(self, values: Sequence) -> tuple[list, dict]:
        if self._signature is None:
            return list(values), {}
        args: list = []
        kwargs: dict = {}
        for p, v in zip(self._params, values):
            v = unwrap(v)
            if isinstance(v, _Missing):
                continue
            if p.kind is p.VAR_POSITIONAL:
                args.extend(v)
            elif p.kind is p.VAR_KEYWORD:
                kwargs.update(v)
            elif p.kind is p.KEYWORD_ONLY:
                kwargs[p.name] = v
            else:
                args.append(v)
        return args, kwargs


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return not isinstance(v, (np.ndarray, Tracer))


def _as_tuple(value, kind: type, what: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, kind):
        return (value,)
    items = tuple(value)
    for item in items:
        if not isinstance(item, kind) or isinstance(item, bool):
            raise TypeError(f"{what} must be a {kind.__name__} or a sequence of them, got "
                            f"{item!r}")
    return items
