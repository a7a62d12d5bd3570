"""Why a jitted function missed its memory cache: the closest earlier signature and the
named parts that changed (``argument 'x' shape (3,) -> (4,)``, ``static 'flag' False -> True``,
``argument 'p' pytree structure changed``), logged with ``explain_cache_misses`` and used for
the warning when one function keeps re-tracing."""
from __future__ import annotations

import logging
import warnings
from typing import Any, Iterable

import numpy as np

from .config import config
from .core.tree import TreeDef

logger = logging.getLogger("arrjit")


def explain_miss(jitted, key: tuple) -> list[str]:
    """Why ``key`` missed, against the closest earlier signature; logs it and warns when
    one function keeps re-tracing."""
    if not jitted._history:
        reasons = ["new function"] if not jitted._traces else ["cache was cleared"]
    else:
        candidates = [(_distance(old, key), old) for old in reversed(jitted._history)]
        _, closest = min(candidates, key=lambda c: c[0])
        reasons = list(_differences(jitted, closest, key))
        for reason in reasons:
            jitted._changed[reason.split("'")[1] if "'" in reason else reason] += 1
    if config.explain_cache_misses:
        logger.warning("arrjit: cache miss for %s: %s", jitted._name, "; ".join(reasons))
    if (not jitted._warned_retrace and jitted._traces + 1 >= config.retrace_warning_threshold
            and jitted._changed):
        jitted._warned_retrace = True
        culprit, count = jitted._changed.most_common(1)[0]
        static = {jitted._param_names[k] for k in jitted._static_positions
                  if k < len(jitted._param_names)}
        advice = (f"{culprit!r} is static, so each new value compiles again: pass it as an "
                  f"array if it varies from call to call" if culprit in static else
                  "each new shape or dtype traces again: pad inputs to a few fixed shapes, "
                  "and pass varying Python numbers as arrays")
        warnings.warn(
            f"arrjit: {jitted._name} has been traced for {jitted._traces + 1} different "
            f"signatures; argument {culprit!r} changed {count} time(s) (latest: "
            f"{'; '.join(reasons)}). {advice[0].upper() + advice[1:]}.", RuntimeWarning,
            stacklevel=4)
    return reasons


def _differences(jitted, old: tuple, new: tuple) -> Iterable[str]:
    if len(old) != len(new):
        yield "number of arguments changed"
        return
    for k, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        name = jitted._param_names[k] if k < len(jitted._param_names) else f"arg{k}"
        if k in jitted._static_positions:
            yield f"static {name!r} {a[1]!r} -> {b[1]!r}"
        elif _is_array_key(a) and _is_array_key(b):
            yield _array_change(name, a, b)
        elif isinstance(a, tuple) and isinstance(b, tuple) and len(a) == 2 and isinstance(
                a[0], TreeDef) and isinstance(b[0], TreeDef):
            if a[0] != b[0]:
                yield f"argument {name!r} pytree structure changed: {a[0]} -> {b[0]}"
            else:
                for j, (la, lb) in enumerate(zip(a[1], b[1])):
                    if la != lb:
                        yield (_array_change(f"{name}", la, lb, leaf=j)
                               if _is_array_key(la) and _is_array_key(lb)
                               else f"argument {name!r} leaf {j} {la} -> {lb}")
        else:
            yield f"argument {name!r} changed kind: {_short(a)} -> {_short(b)}"


def _is_array_key(part: Any) -> bool:
    return (isinstance(part, tuple) and len(part) == 3 and isinstance(part[0], np.dtype)
            and isinstance(part[1], tuple))


def _array_change(name: str, a: tuple, b: tuple, leaf: int | None = None) -> str:
    where = f"argument {name!r}" + (f" leaf {leaf}" if leaf is not None else "")
    if a[0] != b[0]:
        return f"{where} dtype {a[0].name} -> {b[0].name}"
    if a[1] != b[1]:
        return f"{where} shape {a[1]} -> {b[1]}"
    return f"{where} memory layout or writability changed (flags {a[2]:#x} -> {b[2]:#x})"


def _short(part: Any) -> str:
    if _is_array_key(part):
        return f"array {part[0].name}{list(part[1])}"
    return repr(part)[:60]


def _distance(old: tuple, new: tuple) -> int:
    if len(old) != len(new):
        return 10**6
    return sum(a != b for a, b in zip(old, new))
