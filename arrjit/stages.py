"""The stages of ahead-of-time use, as ``jax.jit(f).lower(x).compile()``: ``Lowered`` (a
signature traced, planned and rendered, not compiled) and ``Compiled`` (compiled, callable
with arguments of that signature).

>>> import numpy as np, arrjit, arrjit.numpy as anp
>>> f = arrjit.jit(lambda x: anp.exp(x) * 2)
>>> lowered = f.lower(np.ones(3))
>>> len(lowered.kernels), f.cache_info().compiles
(1, 0)
>>> lowered.compile()(np.zeros(3))
array([2., 2., 2.])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .core.ir import Graph, format_graph

if TYPE_CHECKING:
    from .api import Jitted, _Entry
    from .backends import Executable


class Lowered:
    """A call signature traced, planned and rendered, not compiled (``compile()`` compiles;
    so does the signature's first call)."""

    def __init__(self, jitted: "Jitted", entry: "_Entry"):
        self._jitted = jitted
        self._entry = entry

    @property
    def graph(self) -> Graph:
        return self._entry.graph

    @property
    def kernels(self) -> list:
        """The fused loop nests (``len(lowered.kernels)`` is the kernel count)."""
        return [] if self._entry.plan is None else list(self._entry.plan.kernels)

    @property
    def _executable(self) -> "Executable | None":
        return self._entry.rendered       # what it reports is known once rendered

    @property
    def loops(self) -> list[str]:
        """How each loop of the program runs: natively, or from Python and why."""
        executable = self._executable
        return [] if executable is None else list(executable.loops)

    def as_text(self) -> str:
        """The traced graph, the kernel count, how each loop runs, and the generated source."""
        parts = [format_graph(self._entry.graph)]
        executable = self._executable
        if executable is not None:
            parts.append(f"# {len(self.kernels)} kernel(s)")
            parts.extend(f"# loop {k}: {report}" for k, report in enumerate(self.loops))
            parts.extend(executable.sources)
        return "\n\n".join(parts)

    def compile(self) -> "Compiled":
        """Compile now (whatever the function's ``compile`` mode); call the result."""
        if self._entry.uncompiled:
            self._jitted._compile(self._entry, background=False)
        return Compiled(self._jitted, self._entry)


class Compiled:
    """An ahead-of-time compiled call signature; call it with arguments of that signature."""

    def __init__(self, jitted: "Jitted", entry: "_Entry"):
        self._jitted = jitted
        self._entry = entry

    def __call__(self, *args, **kwargs):
        values = self._jitted._bind(args, kwargs)
        key, leaves = self._jitted._key(values)
        if self._jitted._cache.get(key) is not self._entry:
            raise TypeError(f"this compiled {self._jitted._name} was lowered for other argument "
                            f"shapes/dtypes/static values; call the jitted function instead")
        return self._jitted(*args, **kwargs)
