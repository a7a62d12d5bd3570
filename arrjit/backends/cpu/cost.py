"""The CPU thread cost model: when a loop nest is worth splitting across threads.

>>> from arrjit.passes.kernel import Kernel
>>> work(Kernel((1000,), (), (), (), ())), splittable(Kernel((10,), (), (), (), (), n_outer=0))
(1000, False)
"""
from __future__ import annotations

from ...core.rules import COSTLY
from ...passes.kernel import Compute, Kernel

# measured: a transcendental chain pays for threads from ~180K elements, an arithmetic chain
# of 4 operations from ~1M (benchmarks/bench_threads.py)
COSTLY_WEIGHT = 8


def work(kernel: Kernel) -> int:
    """Estimated cost of one run, in units of one arithmetic operation per element: each
    element costs 1 (its memory traffic) plus 1 per operation and ``COSTLY_WEIGHT`` per costly
    one (exp, log, division...; ``core.rules.COSTLY``). Threads pay from
    ``config.parallel_threshold`` units on."""
    per_element = 1 + sum(COSTLY_WEIGHT if COSTLY[s.op] else 1
                          for s in kernel.stmts if isinstance(s, Compute))
    per_element += len(kernel.reductions)
    return kernel.elements * per_element


def splittable(kernel: Kernel) -> bool:
    """Whether the outermost loop may be split across threads (a full reduction's is split
    into partials instead: ``codegen.can_split``)."""
    return kernel.n_outer is None or kernel.n_outer > 0
