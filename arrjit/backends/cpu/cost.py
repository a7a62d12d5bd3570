"""The CPU thread cost model: when a loop nest is worth splitting across threads, and on how
many.

A kernel's ``work``, estimated from its statements, decides whether it may run on threads at
all (``min_parallel_work`` of the threads allowed: it then compiles a worker). On how many is
measured: what a parallel run costs by itself on this machine (``threads.measured_costs``) and
what the kernel takes on one thread (``ThreadChoice``); it runs on the count that minimises
``serial / threads + dispatch(threads)``, if that proves faster than one thread.

>>> from arrjit.passes.kernel import Kernel
>>> work(Kernel((1000,), (), (), (), ())), splittable(Kernel((10,), (), (), (), (), n_outer=0))
(1000, False)
>>> costs = ThreadCosts({2: 10e-6, 4: 12e-6, 8: 16e-6})
>>> [costs.threads_for(seconds, 8) for seconds in (10e-6, 30e-6, 10e-3)]
[1, 5, 8]
"""
from __future__ import annotations

from dataclasses import dataclass

from ...core.rules import COSTLY
from ...passes.kernel import Compute, Kernel

# measured: a transcendental chain pays for threads from ~180K elements, an arithmetic chain
# of 4 operations from ~1M (benchmarks/bench_threads.py)
COSTLY_WEIGHT = 8

# Kernels with less work than this always run on one thread of two and compile no worker: a
# parallel run costs microseconds, a unit of work about a nanosecond or less.
MIN_PARALLEL_WORK = 1_000_000


def work(kernel: Kernel) -> int:
    """Estimated cost of one run, in units of one arithmetic operation per element: each
    element costs 1 (its memory traffic) plus 1 per operation and ``COSTLY_WEIGHT`` per costly
    one (exp, log, division...; ``core.rules.COSTLY``)."""
    per_element = 1 + sum(COSTLY_WEIGHT if COSTLY[s.op] else 1
                          for s in kernel.stmts if isinstance(s, Compute))
    per_element += len(kernel.reductions)
    return kernel.elements * per_element


def min_parallel_work(threads: int) -> int:
    """The least ``work`` for which a kernel may run on ``threads`` threads (it then compiles a
    worker; ``ThreadChoice`` settles whether it uses them): ``MIN_PARALLEL_WORK`` on two. An
    even split saves ``1 - 1/threads`` of the serial time, less the dispatch; every thread
    count asks for the saving two threads make at ``MIN_PARALLEL_WORK``, so more threads
    start from less work, down to half.

    >>> [min_parallel_work(t) for t in (2, 4, 13)]
    [1000000, 666666, 541666]
    """
    if threads <= 2:
        return MIN_PARALLEL_WORK
    return MIN_PARALLEL_WORK * threads // (2 * (threads - 1))


def splittable(kernel: Kernel) -> bool:
    """Whether the outermost loop may be split across threads (a full reduction's is split
    into partials instead: ``splits``)."""
    return kernel.n_outer is None or kernel.n_outer > 0


@dataclass(frozen=True)
class ThreadCosts:
    """What a parallel run costs this machine by itself, by thread count (measured)."""

    dispatch_seconds: dict[int, float]   # threads -> a parallel run doing no work

    def threads_for(self, serial_seconds: float, most: int) -> int:
        """The thread count, up to ``most``, that runs soonest a kernel taking
        ``serial_seconds`` on one thread (its work shared evenly, plus the dispatch)."""
        best, best_time = 1, serial_seconds
        for threads in range(2, most + 1):
            time = serial_seconds / threads + self.dispatch(threads)
            if time < best_time:
                best, best_time = threads, time
        return best

    def dispatch(self, threads: int) -> float:
        """The measured cost of a parallel run on ``threads``, interpolated between the
        counts measured (and extended at the last measured rate)."""
        if threads in self.dispatch_seconds:
            return self.dispatch_seconds[threads]
        known = sorted(self.dispatch_seconds.items())
        below = [(t, s) for t, s in known if t < threads] or known[:1]
        above = [(t, s) for t, s in known if t > threads]
        (t0, s0) = below[-1]
        (t1, s1) = above[0] if above else (known[-2] if len(known) > 1 else below[-1])
        if t1 == t0:
            return s0
        return max(s0 + (s1 - s0) * (threads - t0) / (t1 - t0), 0.0)


class ThreadChoice:
    """How many threads one kernel runs on, settled by timing its first runs: ``SERIAL_RUNS``
    on one thread, then ``PARALLEL_RUNS`` on the count ``ThreadCosts`` expects to be fastest
    for the serial time. The threads are kept only when their best run took at most
    ``KEEP_THREADS`` of the best serial run: a few runs each say little about a gain of a few
    percent, and a kernel whose threads barely helped in its first runs often ran slower on
    them later (a helper descheduled, a core shared), so it never settles on threads that
    make it slower. The first runs write fresh output pages, so the serial runs include one
    more than the parallel ones. Settled again when the most threads allowed changes.

    >>> costs = ThreadCosts({2: 10e-6, 4: 12e-6})
    >>> choice = ThreadChoice()
    >>> for seconds in (1e-3, 1e-3, 1e-3):
    ...     choice.record(choice.threads(4, costs), seconds)
    >>> choice.threads(4, costs)
    4
    >>> for seconds in (0.4e-3, 0.3e-3):
    ...     choice.record(4, seconds)
    >>> choice.settled, choice.threads(4, costs)
    (True, 4)
    """

    SERIAL_RUNS = 3
    PARALLEL_RUNS = 2
    KEEP_THREADS = 0.8

    def __init__(self) -> None:
        self._start(0)

    def _start(self, most: int) -> None:
        self.most = most
        self.settled = most < 2
        self.count = 1
        self.serial: list[float] = []
        self.parallel: list[float] = []

    def threads(self, most: int, costs: ThreadCosts) -> int:
        """The thread count of the next run (``record`` its time while not ``settled``)."""
        if most != self.most:
            self._start(most)
        if self.settled or len(self.serial) < self.SERIAL_RUNS:
            return self.count
        if self.count == 1:
            self.count = costs.threads_for(min(self.serial), most)
            self.settled = self.count == 1
        return self.count

    def record(self, threads: int, seconds: float) -> None:
        (self.serial if threads == 1 else self.parallel).append(seconds)
        if len(self.parallel) >= self.PARALLEL_RUNS:
            if min(self.parallel) > self.KEEP_THREADS * min(self.serial):
                self.count = 1
            self.settled = True
