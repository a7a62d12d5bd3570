"""Compiles that finish after the call that needed them: one background thread, in the order
they were submitted.

A kernel that may run on threads first runs on the calling thread, from its own compiled
entry; the worker that runs it on threads compiles here (``backends.cpu.steps``), and the
kernel moves onto threads on a later call. numba compiles one module at a time in a process,
so one thread is all a compile can use; while it compiles it also holds the GIL for much of
the time (numba's typing and lowering are Python), which the calling thread then shares.

A job submitted while its thread is compiling (``holding``) waits until that compile is done:
the background thread would otherwise take numba's lock between two of the compile's kernels
and make the call that is waiting for them wait longer.

Jobs queued when the interpreter exits still run before it ends (what they compile is stored
in the disk cache for the next process); ``wait`` blocks until every job submitted so far has
run. A process waits for them before it forks, too: a child forked while numba compiled would
find numba's lock held by a thread it does not have, and its next compile would never end.
The child starts with no background thread and makes its own on its first job.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterator

_executor: ThreadPoolExecutor | None = None
_pending: list[Future] = []
_lock = threading.Lock()
_held = threading.local()   # per thread: compiles in progress, jobs they submitted


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """Jobs this thread submits inside start when the outermost ``holding`` ends."""
    depth = getattr(_held, "depth", 0)
    if depth == 0:
        _held.jobs = []
    _held.depth = depth + 1
    try:
        yield
    finally:
        _held.depth = depth
        if depth == 0:
            jobs, _held.jobs = _held.jobs, []
            for job in jobs:
                _start(job)


def submit(job: Callable[[], Any]) -> None:
    """Run ``job()`` on the background compile thread after the jobs submitted before it (and,
    inside ``holding``, once it ends)."""
    if getattr(_held, "depth", 0):
        _held.jobs.append(job)
    else:
        _start(job)


def _start(job: Callable[[], Any]) -> None:
    global _executor
    _guard_forks()
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(1, thread_name_prefix="arrjit-background")
        _pending[:] = [f for f in _pending if not f.done()] + [_executor.submit(job)]


def wait() -> None:
    """Block until every job submitted so far has run (the errors stay with their futures)."""
    with _lock:
        pending = list(_pending)
    for future in pending:
        future.exception()


def _forget_in_child() -> None:
    """In a forked child: the parent's background thread is not there."""
    global _executor, _pending, _lock
    _executor, _pending, _lock = None, [], threading.Lock()
    _held.__dict__.clear()


def _guard_forks() -> None:
    """Wait for the background compiles before a fork (registered once, with the first job).
    Hooks run before a fork in the reverse order of registration, so filelock's registers
    first: it closes its locks to new releases only after this one has waited for the
    compiles, which release their entry locks as they finish."""
    global _fork_guarded
    if _fork_guarded or not hasattr(os, "register_at_fork"):
        return
    importlib.import_module("filelock")
    os.register_at_fork(before=wait, after_in_child=_forget_in_child)
    _fork_guarded = True


_fork_guarded = False
