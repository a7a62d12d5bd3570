"""Runtime options. Every option also reads an ``ARRJIT_<NAME>`` environment variable.

>>> import arrjit
>>> arrjit.config.update("log_compiles", True)
>>> arrjit.config.log_compiles
True
>>> arrjit.config.update("log_compiles", False)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable


def _parse_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Option:
    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str


OPTIONS: dict[str, Option] = {
    o.name: o
    for o in (
        Option("disable_jit", False, _parse_bool,
               "run jitted functions with the NumPy reference interpreter"),
        Option("log_compiles", False, _parse_bool,
               "log trace / fuse / codegen / compile times on the 'arrjit' logger"),
        Option("num_threads", 0, int,
               "threads for large kernels (0: all cores)"),
        Option("parallel_threshold", 1 << 17, int,
               "loop nests with fewer elements than this run on one thread"),
        Option("max_signatures_per_function", 64, int,
               "memory-cache entries kept per jitted function (least recently used go first)"),
    )
}


class Config:
    """Holds the current option values; ``update`` changes one, checked against ``OPTIONS``."""

    def __init__(self) -> None:
        for option in OPTIONS.values():
            raw = os.environ.get("ARRJIT_" + option.name.upper())
            value = option.default if raw is None else option.parse(raw)
            object.__setattr__(self, option.name, value)

    def update(self, name: str, value: Any) -> None:
        if name not in OPTIONS:
            known = ", ".join(sorted(OPTIONS))
            raise ValueError(f"unknown arrjit option {name!r}; known options: {known}")
        object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("set options with arrjit.config.update(name, value)")

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in OPTIONS}


config = Config()
