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

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from .core.tree import unflatten
from .signature import KEY_FLAGS, SCALAR_KEYS, SCALAR_LEAVES

if TYPE_CHECKING:
    from .api import Jitted

NOT_FAST = object()


def make_fast_hit(jitted: "Jitted") -> Callable:
    """The generated hot path of ``jitted`` (``jitted._fast_arity`` positional arguments).
    An array keys by dtype, shape and layout flags; a Python or NumPy scalar as the general
    path keys it (``signature.SCALAR_KEYS``) and becomes a 0-d array; a static argument keys
    by its type and value and is not passed to the runner.

    ``jitted._fast_memo[0]`` holds the last key this path looked up and its entry. A call
    with an equal key (compared, not hashed) skips the lookup and the LRU move: the entry is
    already the most recent one, since every other use of the cache empties the memo
    (``Jitted._forget_fast_hit``)."""
    n = jitted._fast_arity
    names = [f"a{k}" for k in range(n)]
    static = jitted._static_positions
    lines = ["def fast_hit(args):", f"    {', '.join(names)}, = args"]
    for k, a in enumerate(names):
        if k in static:    # keyed by type and value, as the general path keys it
            lines.append(f"    k_{a} = (type({a}), {a})")
            continue
        lines += [f"    t = type({a})",
                  "    if t is ndarray:",
                  f"        k_{a} = ({a}.dtype, {a}.shape, {a}.flags.num & {KEY_FLAGS})",
                  "    else:",
                  f"        k_{a} = SCALAR_KEYS.get(t)",
                  f"        if k_{a} is None:",
                  "            return NOT_FAST",
                  f"        {a} = asarray({a}, INT64 if t is int else None)"]
    leaves = [a for k, a in enumerate(names) if k not in static]
    lines += [f"    key = ({', '.join(f'k_{a}' for a in names)},)",
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
    namespace = {"ndarray": np.ndarray, "get": jitted._cache.get, "jitted": jitted,
                 "move_to_end": jitted._cache.move_to_end, "unflatten": unflatten,
                 "memo": jitted._fast_memo, "NOT_FAST": NOT_FAST, "SCALAR_KEYS": SCALAR_KEYS,
                 "asarray": np.asarray, "INT64": np.dtype(np.int64)}
    exec(compile("\n".join(lines), f"<arrjit fast path of {jitted._name}>", "exec"), namespace)
    return namespace["fast_hit"]


def takes_fast_path(leaves: Sequence, convert: Sequence[int], host: bool) -> bool:
    """Whether the hot path may call a signature's generated runner (the executable's
    ``fast_run``): when the only leaves it must convert are scalars (the hot path turns those
    into 0-d arrays) and the backend runs on host arrays (``host``)."""
    return not (any(type(leaves[i]) not in SCALAR_LEAVES for i in convert)
                or (convert and not host))
