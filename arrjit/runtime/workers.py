"""Compile workers: processes that compile a program's generated code into the disk cache
while the calling process compiles other parts of the same program.

numba compiles under one lock per process, so one process compiles a program's kernels one
after another. With the disk cache on and cores to spare, a backend hands the parts of a
program that are not cached yet to ``CompileWorkers`` (a function, by reference, and its
arguments) and compiles the same parts itself in the opposite order. A worker compiles a part
and stores it in the disk cache; the caller loads it from there. A part a worker is compiling
holds its entry's file lock (``compile.entry_lock``), so the caller waits for it rather than
compiling it twice; a part no worker has started yet the caller compiles, and the worker
later finds it stored. A part that fails in a worker is dropped there: the caller compiles
it and reports the error. So a result never depends on the workers, only how soon it comes.

Workers are interpreters started once per process with ``python -c`` and reused. Not
``multiprocessing``: its ``spawn`` and ``forkserver`` methods import the user's main module in
every worker (a script without a ``__main__`` guard would run again), and ``fork`` copies this
process's threads and LLVM state.
"""
from __future__ import annotations

import atexit
import importlib
import os
import pickle
import queue
import select
import struct
import subprocess
import sys
import threading
from typing import Any, Callable

from ..config import config

_HEADER = struct.Struct("<Q")
_SERVE = "from arrjit.runtime.workers import serve; serve()"


def worker_count() -> int:
    """How many workers to run: ``config.compile_workers``, or with -1 one per core beyond
    the caller's, at most 8 (none on Windows, whose pipes a worker cannot wait on)."""
    if sys.platform == "win32":
        return 0
    if config.compile_workers >= 0:
        return config.compile_workers
    return max(0, min(8, (os.cpu_count() or 1) - 1))


class CompileWorkers:
    """``count`` worker processes taking jobs from one queue (each from a feeder thread here
    that sends a worker its next job when it has finished the last)."""

    def __init__(self, count: int):
        self.pid = os.getpid()
        self._jobs: queue.Queue[bytes] = queue.Queue()
        self._pending = 0
        self._done = threading.Condition()
        self._processes: list[subprocess.Popen | None] = [None] * count
        self.warm = False    # a worker has finished a job: workers start in about a second
        for k in range(count):
            threading.Thread(target=self._feed, args=(k,), daemon=True,
                             name="arrjit-compile-feeder").start()

    def submit(self, function: Callable[..., Any], *args: Any) -> None:
        """Run ``function(*args)`` in a worker (``function`` importable by its module and
        name; ``args`` picklable). Nothing comes back."""
        payload = pickle.dumps((function.__module__, function.__qualname__, args))
        with self._done:
            self._pending += 1
        self._jobs.put(payload)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every submitted job has been run (or dropped by a dead worker)."""
        with self._done:
            return self._done.wait_for(lambda: self._pending == 0, timeout)

    def _feed(self, k: int) -> None:
        """Send worker ``k`` one job at a time; start it when it is not running (the first
        job, or after it exited idle). A job whose worker dies under it is dropped."""
        while True:
            payload = self._jobs.get()
            try:
                process = self._processes[k]
                if process is None or process.poll() is not None:
                    process = self._processes[k] = _start_worker()
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(_HEADER.pack(len(payload)) + payload)
                process.stdin.flush()
                if process.stdout.readline():   # the acknowledgement ("" if it died)
                    self.warm = True
            except (OSError, ValueError):
                pass
            finally:
                with self._done:
                    self._pending -= 1
                    self._done.notify_all()

    def close(self) -> None:
        """End the workers' input: each exits once its current job is done (this process
        does not wait for that; a job cut short leaves no entry, as stores are atomic)."""
        for process in self._processes:
            if process is not None and process.stdin is not None:
                try:
                    process.stdin.close()
                except OSError:
                    pass


def _start_worker() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=dict(os.environ), close_fds=True)


_workers: CompileWorkers | None = None
_workers_lock = threading.Lock()


def compile_workers() -> CompileWorkers | None:
    """This process's workers, started on first use (each first imports arrjit and starts
    numba: ``warm_up``); None when ``worker_count()`` is 0."""
    global _workers
    count = worker_count()
    if count <= 0:
        return None
    with _workers_lock:
        if _workers is None or _workers.pid != os.getpid():   # a forked child starts its own
            _workers = CompileWorkers(count)
            atexit.register(_workers.close)
            for _ in range(count):
                _workers.submit(warm_up)
        return _workers


def running() -> CompileWorkers | None:
    """This process's workers if they have been started, without starting them."""
    return _workers if _workers is not None and _workers.pid == os.getpid() else None


def warm_up() -> None:
    """A worker's first job: numba's compiler started (a second's imports and set-up)."""
    from numba import njit

    njit(lambda: 0)()


IDLE_EXIT_SECONDS = 60.0   # an idle worker exits (its memory is numba's); the next job restarts it


def serve() -> None:
    """A worker's loop: run each job read from stdin, then acknowledge it with a line on the
    original stdout (what the job prints goes to stderr). Returns at the end of its input or
    after ``IDLE_EXIT_SECONDS`` without a job."""
    acknowledge = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    stdin = sys.stdin.buffer
    while True:
        if not select.select([stdin], [], [], IDLE_EXIT_SECONDS)[0]:
            return
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        payload = stdin.read(_HEADER.unpack(header)[0])
        try:
            module, name, args = pickle.loads(payload)
            getattr(importlib.import_module(module), name)(*args)
        except Exception:   # the caller compiles this part itself and reports the error
            pass
        acknowledge.write("done\n")
        acknowledge.flush()
