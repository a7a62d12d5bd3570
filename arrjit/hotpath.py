"""The hot path of a jitted call whose arguments are each an array or a scalar and whose
signature is compiled with a generated runner: key, look up, run, in one generated function
without loops. Anything else returns ``NOT_FAST`` and takes the general path.

>>> import numpy as np, arrjit
>>> f = arrjit.jit(lambda x, a: x * a)
>>> _ = f(np.ones(2), 2.0)                   # the first call compiles, on the general path
>>> f._fast_hit((np.ones(2), 3.0))
array([3., 3.])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

import numpy as np

from .core.tree import unflatten
from .errors import NonHashableStaticArgError
from .signature import KEY_FLAGS, SCALAR_KEYS, SCALAR_LEAVES

if TYPE_CHECKING:
    from .api import Jitted

NOT_FAST = object()


def make_fast_hit(jitted: "Jitted", count: int,
                  keywords: tuple[str, ...] = ()) -> Callable | None:
    """The generated hot path of ``jitted`` for calls of ``count`` positional arguments and
    the keyword arguments ``keywords`` (in that order), or None where the general path must
    take every such call (more than 16 arguments, arguments the signature does not bind, a
    default that is an array). It takes the positional values followed by the keywords'.

    Each argument keys as the general path keys it (``Jitted._key``): an array by dtype, shape
    and layout flags; a Python or NumPy scalar by its type (``signature.SCALAR_KEYS``), and it
    becomes a 0-d array; a static argument by its type and value, not passed to the runner.
    Arguments that land in ``*args`` key as its tuple does; parameters the call leaves to
    their defaults, and ``**kwargs``, key as constants worked out here once.

    ``jitted._fast_memo[0]`` holds the last key this path looked up and its entry. A call
    with an equal key (compared, not hashed) skips the lookup and the LRU move: the entry is
    already the most recent one, since every other use of the cache empties the memo
    (``Jitted._forget_fast_hit``)."""
    layout = _call_layout(jitted, count, keywords)
    if layout is None:
        return None
    names = [f"a{k}" for k in range(count + len(keywords))]
    static = jitted._static_positions
    namespace: dict = {"ndarray": np.ndarray, "get": jitted._cache.get, "jitted": jitted,
                       "move_to_end": jitted._cache.move_to_end, "unflatten": unflatten,
                       "memo": jitted._fast_memo, "NOT_FAST": NOT_FAST,
                       "SCALAR_KEYS": SCALAR_KEYS, "SCALAR_LEAF_KEYS": _SCALAR_LEAF_KEYS,
                       "asarray": np.asarray, "INT64": np.dtype(np.int64)}
    lines = ["def fast_hit(args):", f"    {', '.join(names)}, = args"]
    parts, leaves = [], []
    for k, slot in enumerate(layout):
        if isinstance(slot, int) and k in static:   # keyed by type and value, as in general
            lines.append(f"    k{k} = (type(a{slot}), a{slot})")
        elif isinstance(slot, int):
            lines += _leaf_lines(f"a{slot}", f"k{k}", "SCALAR_KEYS")
            leaves.append(f"a{slot}")
        elif isinstance(slot, _Varargs):
            namespace[f"tree{k}"] = slot.tree
            for j in slot.positions:
                lines += _leaf_lines(f"a{j}", f"k{k}_{j}", "SCALAR_LEAF_KEYS")
                leaves.append(f"a{j}")
            keys = "".join(f"k{k}_{j}, " for j in slot.positions)
            lines.append(f"    k{k} = (tree{k}, ({keys}))")
        else:
            namespace[f"const{k}"] = slot.part
            lines.append(f"    k{k} = const{k}")
        parts.append(f"k{k}")
    lines += [f"    key = ({''.join(f'{p}, ' for p in parts)})",
              "    last = memo[0]",
              "    if last is not None and last[0] == key:",
              "        entry = last[1]",
              "    else:",
              "        try:",
              "            entry = get(key)",
              "        except TypeError:   # an unhashable static argument: the general path",
              "            return NOT_FAST  # raises the error that names it",
              "        if entry is None or entry.run is None:",
              "            return NOT_FAST",
              "        move_to_end(key)",
              "        memo[0] = (key, entry)",
              "    jitted._hits += 1",
              f"    outs = entry.run(({''.join(f'{a}, ' for a in leaves)}))",
              "    return outs[0] if entry.single_output else unflatten(entry.out_tree, outs)"]
    exec(compile("\n".join(lines), f"<arrjit fast path of {jitted._name}>", "exec"), namespace)
    return namespace["fast_hit"]


# The key of a scalar inside a container (``signature.leaf_key``), per scalar type.
_SCALAR_LEAF_KEYS = {t: key[1][0] for t, key in SCALAR_KEYS.items()}


class _Constant(NamedTuple):
    """A parameter the call does not reach (a default, ``**kwargs``): its key part."""

    part: Any


class _Varargs(NamedTuple):
    """``*args``: the call's arguments ``positions`` in a tuple keyed by ``tree``."""

    positions: list[int]
    tree: Any


def _call_layout(jitted: "Jitted", count: int, keywords: tuple[str, ...]) -> list | None:
    """Per parameter of ``jitted``, where a call of ``count`` positional arguments and the
    ``keywords`` puts its value: an argument's position (the keywords' after the positional
    ones), ``_Varargs`` or ``_Constant``; None when the hot path cannot key such calls."""
    if not 0 < count + len(keywords) <= MAX_FAST_ARGUMENTS:
        return None
    marks = tuple(_Mark() for _ in range(count + len(keywords)))
    try:
        bound = jitted._bind(marks[:count], dict(zip(keywords, marks[count:])))
    except TypeError:
        return None
    position = {id(m): k for k, m in enumerate(marks)}
    static = jitted._static_positions
    example = np.empty(0)
    # the binding with each argument an example leaf (a static one hashable), keyed as the
    # general path keys it: the parts of the parameters no argument reaches are constants
    reached: list[int | list[int] | None] = []
    values: list = []
    for k, v in enumerate(bound):
        if type(v) is _Mark:
            reached.append(position[id(v)])
            values.append(0 if k in static else example)
        elif type(v) is tuple and v and all(type(m) is _Mark for m in v):
            if k in static:    # a static ``*args``: keyed by its values
                return None
            reached.append([position[id(m)] for m in v])
            values.append(tuple(example for _ in v))
        else:
            reached.append(None)
            values.append(v)
    try:
        parts, leaves = jitted._key(values)
    except (TypeError, NonHashableStaticArgError):   # the general path reports it
        return None
    arguments = sum(len(r) if isinstance(r, list) else 1 for k, r in enumerate(reached)
                    if r is not None and k not in static)
    if len(leaves) != arguments:    # a default that is a leaf (an array) joins the leaves
        return None
    return [_Constant(part) if r is None else _Varargs(r, part[0]) if isinstance(r, list)
            else r for r, part in zip(reached, parts)]


class _Mark:
    """A stand-in argument, so binding shows where each argument goes."""


# Calls of more positional arguments take the general path.
MAX_FAST_ARGUMENTS = 16


def _leaf_lines(arg: str, key: str, scalar_keys: str) -> list[str]:
    """Statements keying the array or scalar ``arg`` into ``key`` (a scalar by ``scalar_keys``,
    then made a 0-d array), or leaving for the general path."""
    return [f"    t = type({arg})",
            "    if t is ndarray:",
            f"        {key} = ({arg}.dtype, {arg}.shape, {arg}.flags.num & {KEY_FLAGS})",
            "    else:",
            f"        {key} = {scalar_keys}.get(t)",
            f"        if {key} is None:",
            "            return NOT_FAST",
            f"        {arg} = asarray({arg}, INT64 if t is int else None)"]


def takes_fast_path(leaves: Sequence, convert: Sequence[int], host: bool) -> bool:
    """Whether the hot path may call a signature's generated runner (the executable's
    ``fast_run``): when the only leaves it must convert are scalars (the hot path turns those
    into 0-d arrays) and the backend runs on host arrays (``host``)."""
    return not (any(type(leaves[i]) not in SCALAR_LEAVES for i in convert)
                or (convert and not host))
