"""Runtime options. Every option also reads an ``ARRJIT_<NAME>`` environment variable.

>>> import arrjit
>>> arrjit.config.update("log_compiles", True)
>>> arrjit.config.log_compiles
True
>>> arrjit.config.update("log_compiles", False)
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable


def _parse_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


def parse_size(text: str) -> int:
    """Bytes from a size such as ``500MB``, ``2GB``, ``64k`` or ``1048576``."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*", str(text).lower())
    if not m:
        raise ValueError(f"cannot read size {text!r}: use e.g. 500MB, 2GB or 1048576")
    factor = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2)]
    return int(float(m.group(1)) * factor)


@dataclass(frozen=True)
class Option:
    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str


OPTIONS: dict[str, Option] = {
    o.name: o
    for o in (
        Option("default_device", "cpu", str,
               "the device jit compiles for when no device= is given ('cpu' or 'cuda')"),
        Option("cuda_threads_per_block", 0, int,
               "threads per CUDA block, a power of two (0: 256; 16 on the simulator)"),
        Option("cuda_blocks_per_sm", 32, int,
               "most CUDA blocks per streaming multiprocessor in one launch (grid-stride "
               "loops cover the rest)"),
        Option("compile", "auto", str,
               "when jit compiles a new signature: 'eager' (on its first call), 'background' "
               "(the reference interpreter answers until it is compiled) or 'auto' "
               "(background in an interactive session, else eager)"),
        Option("disable_jit", False, _parse_bool,
               "run jitted functions with the NumPy reference interpreter"),
        Option("log_compiles", False, _parse_bool,
               "log trace / fuse / codegen / compile times on the 'arrjit' logger"),
        Option("num_threads", 0, int,
               "threads for large kernels (0: all cores)"),
        Option("native_threads", True, _parse_bool,
               "run large kernels on numba's threading layer (OpenMP or TBB) where it is "
               "safe (off: arrjit's own helper threads)"),
        Option("spin_wait_us", 500, float,
               "how long a helper thread spins for the next parallel kernel before it sleeps "
               "(microseconds; waking a sleeping thread costs 60-250 us on a VM)"),
        Option("parallel_threshold", 0, int,
               "loop nests with less estimated work than this run on one thread, larger ones "
               "on num_threads (work: elements x (1 + 1 per operation + 8 per "
               "exp/log/division...)); 0: as many threads as pay, from this machine's "
               "measured costs (a kernel's first call then runs on one thread while its "
               "thread worker compiles in the background)"),
        Option("max_signatures_per_function", 64, int,
               "memory-cache entries kept per jitted function (least recently used go first)"),
        Option("retrace_warning_threshold", 20, int,
               "warn when one function has been traced for this many signatures"),
        Option("explain_cache_misses", False, _parse_bool,
               "log why each memory-cache miss happened (which argument changed)"),
        Option("cache_dir", "", str,
               "disk cache location (default: the platform user cache directory)"),
        Option("disable_disk_cache", False, _parse_bool, "keep compiled code in memory only"),
        Option("compile_workers", -1, int,
               "worker processes that compile a program's uncached kernels alongside the "
               "caller, through the disk cache (-1: one per core beyond the caller's, at "
               "most 8; 0: none)"),
        Option("native_entries", True, _parse_bool,
               "call CPU entries through arrjit's own CPython wrapper: numba compiles them "
               "without its wrapper, and later processes load them without numba (off: "
               "numba's entry points and numba's cache)"),
        Option("verify_ir", False, _parse_bool,
               "check every graph's SSA form, order and avals as it enters the passes "
               "(a debugging aid; the tests turn it on)"),
        Option("cache_max_size", 1 << 30, lambda text: parse_size(text),
               "disk cache size cap in bytes; least recently used entries are evicted"),
        Option("pool_max_size", 1 << 30, lambda text: parse_size(text),
               "bytes of freed output and intermediate buffers kept for reuse by later "
               "calls (0: none kept)"),
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

    if TYPE_CHECKING:  # options are set from ``OPTIONS`` at run time
        def __getattr__(self, name: str) -> Any: ...

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in OPTIONS}


config = Config()
