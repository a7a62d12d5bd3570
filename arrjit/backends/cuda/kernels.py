"""Launching one rendered kernel: its numba argument types (for compiling when the plan is
built) and its launch on flat views of the step's buffers, by the launch rule."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import cuda

from ...passes.kernel import Kernel
from ...runtime import compile as compiler
from ...runtime.compile import CompileStats
from .codegen import RenderedKernel
from .expressions import NEGATIVE_POWER_ERROR
from .device import flat
from .launch import LaunchRule


def _array_type(dtype: np.dtype) -> Any:
    from numba import types
    from numba.np.numpy_support import from_dtype

    return types.Array(from_dtype(dtype), 1, "C")


def signatures(kernel: Kernel, rendered: RenderedKernel) -> dict[str, tuple]:
    """The numba argument types of each function of a rendered kernel (by name suffix)."""
    from numba import types

    arrays = [_array_type(v.dtype) for v in kernel.writes + kernel.reads]
    if rendered.error_flag:
        arrays.append(_array_type(np.dtype(np.int8)))
    params = [types.int64] * len(rendered.params)
    if rendered.strategy != "split":
        return {"": tuple(arrays + params)}
    parts = [_array_type(dt) for _, dt in rendered.partials]
    return {"_part": tuple(parts + arrays + params),
            "_finish": tuple(arrays + parts + [types.int64] + params)}


@dataclass
class KernelRun:
    """A kernel step on the device: one launch (a split reduction: two) per run."""

    kernel: Kernel
    rendered: RenderedKernel
    slots: list[int]            # written slots, then read slots
    rule: LaunchRule
    functions: dict[str, Any] = field(default_factory=dict)   # suffix -> dispatcher
    _partials: list = field(default_factory=list)
    _error_flag: Any = None

    def signatures(self) -> dict[str, tuple]:
        return signatures(self.kernel, self.rendered)

    def compile(self, loaded: compiler.LoadedModule, stats: CompileStats,
                simulated: bool) -> None:
        for suffix, sig in self.signatures().items():
            name = self.rendered.name + suffix
            if not simulated:   # the simulator runs the Python function: nothing to compile
                t0 = time.perf_counter()
                stats.add(compiler.compile_signature(loaded, name, sig),
                          time.perf_counter() - t0)
            self.functions[suffix] = getattr(loaded.module, name)

    def __call__(self, bufs: list) -> None:
        arrays = [flat(bufs[s]) for s in self.slots]
        if self.rendered.error_flag:
            if self._error_flag is None:
                self._error_flag = cuda.to_device(np.zeros(1, np.int8))
            arrays.append(self._error_flag)
            self._launch(arrays)
            self._raise_flagged()
        else:
            self._launch(arrays)

    def _raise_flagged(self) -> None:
        """NumPy's error for a negative integer exponent, read back from the kernel's flag
        (only kernels with a possibly negative integer exponent have one)."""
        if self._error_flag.copy_to_host()[0]:
            self._error_flag.copy_to_device(np.zeros(1, np.int8))
            raise ValueError(NEGATIVE_POWER_ERROR)

    def _launch(self, arrays: list) -> None:
        params = self.rendered.params
        strategy, rule, k = self.rendered.strategy, self.rule, self.kernel
        elements = k.elements
        if strategy == "elementwise":
            if elements:
                self.functions[""][rule.blocks(elements), rule.threads](*arrays, *params)
            return
        rows = int(np.prod(k.sizes[:k.n_outer], dtype=np.int64))
        if strategy == "block":
            if rows:
                self.functions[""][rule.blocks(rows, 1), rule.threads](*arrays, *params)
        elif strategy == "serial":
            if rows:
                self.functions[""][rule.blocks(rows), rule.threads](*arrays, *params)
        else:
            blocks = rule.blocks(elements)
            if not self._partials:
                self._partials = [cuda.device_array(rule.max_blocks, dt)
                                  for _, dt in self.rendered.partials]
            self.functions["_part"][blocks, rule.threads](*self._partials, *arrays, *params)
            self.functions["_finish"][1, rule.threads](*arrays, *self._partials, blocks,
                                                       *params)
