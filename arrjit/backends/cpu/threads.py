"""Helper threads that run chunked kernels alongside the calling thread.

A chunked kernel runs as a generated ``*_worker`` (``drivers.render_chunked_module``) on
the calling thread and on ``threads - 1`` helpers, which take chunks from atomic counters in a
small int64 ``state`` array. This module owns the helpers and the hand-over:

* The caller posts the job (``Helpers.post``), then calls its worker, which rings ``bell``
  (an atomic counter) from native code, after the GIL is released.
* A helper that has just finished a job spins natively (``pause``) until the bell rings or
  ``config.spin_wait_us`` has passed, then sleeps on its queue. A spinning helper sees the next
  job within a microsecond and takes the free GIL; waking a sleeping thread took 60-250 us on
  this 2-vCPU VM, a tenth of a 2.5 ms kernel.
* A helper counts itself in at the state's gate before taking chunks; the caller closes the
  gate when every chunk is taken and waits until each helper that came in has dropped the
  arguments (``settle``). No helper holds the output after the call: a late reference made the
  next call's ``np.empty`` take fresh pages (page faults in both threads, stalls of ms).

>>> pool = helpers(1)
>>> pool.size >= 1
True
"""
from __future__ import annotations

import os
import queue
import threading
import time

import numpy as np

from ...runtime import compile as compiler
from ...config import config
from . import dispatch, drivers, entries
from .cost import ThreadCosts
from .drivers import STATE_ENTERED, STATE_ERROR, STATE_NEXT, STATE_UNFINISHED
from .native.abi import MAX_THREADS
from .target import cache_key_fields

_cpu_count = os.cpu_count() or 1


def thread_count() -> int:
    """Threads a chunked kernel runs on (``config.num_threads``, or all cores)."""
    return max(1, int(config.num_threads or _cpu_count))


def chunk_state(chunks: int, threads: int) -> np.ndarray:
    """A fresh ``state`` for a worker run (layout in ``codegen``): thread ``t`` owns the
    chunks ``[chunks * t // threads, chunks * (t + 1) // threads)``."""
    state = np.zeros(STATE_NEXT + threads, np.int64)
    state[STATE_ENTERED] = -1
    state[STATE_NEXT:] = [chunks * t // threads for t in range(threads)]
    return state


def chunks_failed(state: np.ndarray) -> bool:
    """Whether a chunk of the run that used ``state`` raised (every thread done with it)."""
    return bool(state[STATE_ERROR] or state[STATE_UNFINISHED])


class _Native:
    """Entry points of ``codegen.render_thread_module`` (compiled once, disk-cached)."""

    def __init__(self) -> None:
        loaded = compiler.load_module(drivers.render_thread_module(), cache_key_fields())
        bell, state = np.zeros(1, np.int64), chunk_state(1, 1)
        self.park = entries.entry_point(loaded, "park", [bell, 0, 0]).entry
        self.release_and_park = entries.entry_point(loaded, "release_and_park",
                                                     [state, bell, 0, 0]).entry
        self.settle = entries.entry_point(loaded, "settle", [state, 0]).entry
        self.idle_args = [np.zeros(0), np.zeros(1, np.int64)]
        self.idle_worker = entries.entry_point(loaded, "idle_worker",
                                               [*self.idle_args, 1, 1, state, 0, 1, bell]).entry


_native: _Native | None = None


def native_functions() -> _Native:
    """The thread module's functions, loaded on first use."""
    global _native
    if _native is None:
        _native = _Native()
    return _native


class _Helper:
    def __init__(self, pool: "Helpers", t: int) -> None:
        self.pool, self.t = pool, t
        self.asleep = False
        self.wake: queue.SimpleQueue = queue.SimpleQueue()
        thread = threading.Thread(target=self._serve, name=f"arrjit-{t}", daemon=True)
        thread.start()

    def _serve(self) -> None:
        pool, bell = self.pool, self.pool.bell
        last = None
        spun = False
        while True:
            seen = int(bell[0])          # read before the job: a later ring means a new job
            job = pool.job
            if job is not None and job is not last:
                last = job
                spun = not self._run(job, seen)
            elif not spun:
                spun = not pool.native.park(bell, seen, pool.spins)
            else:
                self.asleep = True
                if pool.job is None or pool.job is last:
                    self.wake.get()
                self.asleep = False
                spun = False

    def _run(self, job: list, seen: int) -> bool:
        """Run ``job`` if it is still open, then park; True when the bell has rung since it
        read ``seen`` (before it picked the job): another caller may have posted meanwhile."""
        taken = list(job)                # empty once the caller is done
        if not taken:
            return False
        worker, args, extent, chunks, state, threads = taken
        del taken, job
        if self.t >= threads:
            return False
        native, bell = self.pool.native, self.pool.bell
        try:
            came_in = worker(*args, extent, chunks, state, self.t, threads, bell)
        except Exception:     # an unguarded chunk raised: past the gate, as chunks run
            state[STATE_ERROR] = came_in = True
        finally:
            del args, worker
        if came_in:             # counted at the gate, so the caller waits for this release
            return native.release_and_park(state, bell, seen, self.pool.spins)
        return native.park(bell, seen, self.pool.spins)


class Helpers:
    """The helper threads (started on demand) and the job slot they watch."""

    def __init__(self) -> None:
        self.bell = np.zeros(1, np.int64)
        self.job: list | None = None
        self.spins = 0
        self.native = native_functions()
        self._pause_ns = self._pause_nanoseconds()
        self._threads: list[_Helper] = []
        self._lock = threading.Lock()

    def _pause_nanoseconds(self) -> float:
        """Measured length of one spin step (``pause`` is 10-140 cycles, by CPU)."""
        seen = int(self.bell[0])
        t0 = time.perf_counter_ns()
        self.native.park(self.bell, seen, 10_000)
        return max((time.perf_counter_ns() - t0) / 10_000, 1.0)

    @property
    def size(self) -> int:
        return len(self._threads)

    def ensure(self, count: int) -> None:
        self.spins = int(config.spin_wait_us * 1000 / self._pause_ns)
        if len(self._threads) < count:
            with self._lock:
                while len(self._threads) < count:
                    self._threads.append(_Helper(self, len(self._threads) + 1))

    def post(self, job: list, count: int) -> None:
        """Offer ``job`` (worker, args, extent, chunks, state, threads) to ``count`` helpers.
        The caller's worker rings the bell; sleeping helpers are woken here."""
        self.job = job
        for helper in self._threads[:count]:
            if helper.asleep:
                helper.wake.put(None)

    def settle(self, job: list, state: np.ndarray) -> None:
        """Close ``job`` once the caller's worker has returned: no helper takes it after this,
        and each one that did has dropped its arguments when this returns."""
        job.clear()
        if self.job is job:
            self.job = None
        pause = 1e-5
        while not self.native.settle(state, self.spins):
            time.sleep(pause)            # a helper was descheduled mid-chunk: let it run
            pause = min(2 * pause, 1e-3)


_helpers: Helpers | None = None


def helpers(count: int) -> Helpers:
    """The process's helper threads, at least ``count`` of them started."""
    global _helpers
    if _helpers is None:
        _helpers = Helpers()
    _helpers.ensure(count)
    return _helpers


def _forget_helpers() -> None:
    global _helpers
    _helpers = None          # a forked child has none of the parent's threads


os.register_at_fork(after_in_child=_forget_helpers)


QUIET_BELL = np.zeros(1, np.int64)   # rung by a worker that no helper thread listens to


def run_chunks(worker, args: list, extent: int, chunks: int, threads: int) -> bool:
    """Run a generated ``*_worker`` over ``chunks`` chunks of ``range(extent)`` on ``threads``
    threads: numba's threading layer (``dispatch``), else this thread and the helpers. False
    if a chunk raised (the caller re-runs serially to raise it)."""
    threads = min(threads, chunks, MAX_THREADS)
    state = chunk_state(chunks, threads)
    tail = [extent, chunks, state, 0, threads, QUIET_BELL]
    native = dispatch.parallel_entry(worker, args + tail)
    if native is not None:
        failed = native(*args, *tail)
        return not failed and not chunks_failed(state)
    pool = helpers(threads - 1)
    job = [worker, args, extent, chunks, state, threads]
    pool.post(job, threads - 1)
    try:
        worker(*args, extent, chunks, state, 0, threads, pool.bell)
    except Exception:          # an unguarded chunk raised (the serial run raises it again)
        state[STATE_ERROR] = 1
    finally:
        pool.settle(job, state)
    return not chunks_failed(state)


def prepare_chunks(worker, args: list, threads: int) -> None:
    """Make ready now what the first ``run_chunks`` of ``worker`` (with arguments of the
    types of ``args``) on ``threads`` threads would otherwise do while it runs: bind its
    native parallel entry (built once per worker, in milliseconds), else start the helper
    threads. A run that is timed then times the kernel."""
    threads = min(threads, MAX_THREADS)
    tail = [1, 1, chunk_state(1, threads), 0, threads, QUIET_BELL]
    if dispatch.parallel_entry(worker, args + tail) is None:
        helpers(threads - 1)


_costs: ThreadCosts | None = None


def measured_costs() -> ThreadCosts:
    """This machine's ``ThreadCosts``, measured on first use (about a millisecond): the idle
    worker on 2, 4, 8, ... threads and every core, dispatched as kernels are."""
    global _costs
    if _costs is None:
        native = native_functions()
        most = max(thread_count(), _cpu_count)
        counts = sorted({*(1 << k for k in range(1, most.bit_length())), most} - {1})
        _costs = ThreadCosts({
            t: _median_seconds(lambda: run_chunks(native.idle_worker, native.idle_args, t, t, t),
                               9)
            for t in counts})
    return _costs


def _median_seconds(run, repeats: int) -> float:
    run()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return sorted(times)[repeats // 2]
