"""What the CPU backend's machine code depends on: its part of the disk-cache key."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ...runtime.cache import fingerprint
from .codegen import NJIT_OPTIONS, REDUCTION_OPTIONS

_fields: dict[str, Any] | None = None

# the code that decides what generated source means (its edits invalidate cached entries)
_GENERATOR_FILES = ("backends/source.py", "backends/cpu/codegen.py", "backends/cpu/expressions.py",
                    "backends/cpu/drivers.py", "backends/cpu/atomics.py", "passes/fuse.py",
                    "passes/kernel.py", "runtime/compile.py", "backends/cpu/entries.py",
                    "core/special.py")
# kernels inline the math library, so every one of its modules is part of the key
_GENERATOR_FOLDERS = ("backends/cpu/mathlib",)


def cache_key_fields() -> dict[str, Any]:
    """Code generator fingerprint, host CPU name and features, and compile flags."""
    global _fields
    if _fields is None:
        from llvmlite import binding

        package = Path(__file__).resolve().parents[2]
        _fields = {
            "backend": "cpu",
            "codegen": fingerprint([package / rel for rel in _GENERATOR_FILES] + sorted(
                path for rel in _GENERATOR_FOLDERS for path in (package / rel).glob("*.py"))),
            "cpu": binding.get_host_cpu_name(),
            "cpu_features": binding.get_host_cpu_features().flatten(),
            "flags": [NJIT_OPTIONS, REDUCTION_OPTIONS],
        }
    return _fields
