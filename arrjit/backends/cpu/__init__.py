"""The CPU backend: numba loop nests, its vectorised math library, helper threads, and the
runner that executes a plan on NumPy arrays.

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> BACKEND.allocate(Aval((2, 3), np.dtype("float32"))).shape
(2, 3)
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...core.dtypes import Aval
from ...passes.kernel import Kernel
from ...plan import Plan
from ...signature import as_array
from . import codegen
from .runner import CpuExecutable
from .target import cache_key_fields


class CpuBackend:
    """Runs plans on the host: results are ``numpy.ndarray`` (zero-copy)."""

    name = "cpu"
    reads_positions = True

    def unavailable_reason(self) -> str | None:
        return None

    def cache_key_fields(self) -> Mapping[str, Any]:
        return cache_key_fields()

    def render_kernel(self, kernel: Kernel) -> str:
        return codegen.render_kernel(kernel).source

    def prepare(self, plan: Plan) -> CpuExecutable:
        return CpuExecutable(plan)

    def allocate(self, aval: Aval) -> np.ndarray:
        return np.empty(aval.shape, aval.dtype)

    def converts(self, x: Any) -> bool:
        return not (type(x) is np.ndarray and x.flags.c_contiguous)

    def to_device(self, x: Any) -> np.ndarray:
        return as_array(x)

    def to_host(self, x: Any) -> np.ndarray:
        return as_array(x)

    def is_device_array(self, x: Any) -> bool:
        return False

    def synchronize(self) -> None:
        pass            # CPU calls return finished results


BACKEND = CpuBackend()
