"""Tiered execution (``jit(f, compile="background")``): while a signature's plan compiles on a
background thread, its calls run the plan's graph through the NumPy reference interpreter.

Both tiers run the same lowered graph, so they compute the same values (the interpreter is the
compiler's test oracle; elementwise results agree to the math library's stated ULPs and sums
to rounding), raise the same errors from the same library calls, and treat donated arguments
alike: the interpreter's answer goes through the run loop the compiled plans use
(``executor.run_plan``) with the plan's allocations of donated arguments, so an output the
plan writes into a donated argument is copied into it and returned as it.
"""
from __future__ import annotations

import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Sequence

import numpy as np

from .core import interpret
from .core.ir import Graph
from .executor import HOST, Scheduled, run_plan
from .memory import StepMemory
from .plan import OutputKind, Plan

MODES = ("auto", "eager", "background")

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"jit(compile={mode!r}): choose 'eager' (compile on the first call, "
                         f"then run it), 'background' (answer with the interpreter while a "
                         f"background thread compiles) or 'auto' (background in an "
                         f"interactive session, else eager)")
    return mode


def resolve(mode: str) -> str:
    """'auto' is 'background' in an interactive session (the Python prompt, IPython,
    Jupyter), where the first call is what the user waits for, and 'eager' in scripts,
    tests and servers, where compiled code from the first call on is what they expect."""
    if mode != "auto":
        return mode
    return "background" if interactive() else "eager"


def interactive() -> bool:
    if hasattr(sys, "ps1") or sys.flags.interactive:
        return True
    ipython = sys.modules.get("IPython")
    return ipython is not None and getattr(ipython, "get_ipython", lambda: None)() is not None


class BackgroundCompile:
    """A plan's compile on the one background compile thread (numba compiles one module at a
    time anyway; one thread keeps a core free for the interpreter).

    The compile begins when ``start()`` is called: the call that queued it calls it once it
    has been answered. Until then the interpreter has the process to itself: a compile thread
    running beside it holds the GIL for most of the time it runs (numba's typing and lowering
    are Python), and every NumPy step of the interpreter waited for it (a 65536-row first call:
    241 ms with the compile beside it, 140 ms without). Calls made while it runs share."""

    def __init__(self, compile_plan: Callable[[], Any]):
        global _executor
        self._go = threading.Event()
        with _lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(1, thread_name_prefix="arrjit-compile")
            self.future: Future = _executor.submit(self._run, compile_plan)

    def _run(self, compile_plan: Callable[[], Any]) -> Any:
        self._go.wait()
        return compile_plan()

    def start(self) -> None:
        """Let the compile begin (idempotent)."""
        self._go.set()

    @property
    def started(self) -> bool:
        return self._go.is_set()

    def done(self) -> bool:
        return self.future.done()

    def result(self) -> Any:
        """The executable, waiting for it (and starting the compile if nothing has)."""
        self.start()
        return self.future.result()


def interpret_plan(plan: Plan, graph: Graph, leaves: Sequence[np.ndarray]) -> list:
    """The graph's outputs by the reference interpreter, returned by the shared run loop
    (``executor.run_plan``) as the compiled plan returns them: an output the plan writes into
    a donated argument is written there and returned as it (unless the argument is aliased),
    an input passed through is returned as it came."""
    return run_plan(plan, interpreted_schedule(plan, graph), plan.constants, HOST, leaves)


def interpreted_schedule(plan: Plan, graph: Graph) -> list[Scheduled]:
    """One run that evaluates the whole graph with the interpreter and puts each output into
    its slot: into the donated argument the plan allocates for it (the only allocations it
    keeps), else as the interpreter's own array (viewed in the slot's shape)."""
    written = {o.slot for o in plan.outputs if o.kind is not OutputKind.CONSTANT
               and o.slot >= plan.n_inputs}
    donors = [a for mem in plan.memory for a in mem.allocs
              if a.slot in written and a.donor >= 0]

    def run(bufs: list) -> None:
        values = interpret.evaluate(graph, bufs[:plan.n_inputs])
        for out, value in zip(plan.outputs, values):
            if out.slot not in written:
                continue
            buffer = bufs[out.slot]
            shape = plan.slot_avals[out.slot].shape
            if buffer is None:
                bufs[out.slot] = value.reshape(shape)
            elif not np.shares_memory(buffer, value):
                np.copyto(buffer.reshape(value.shape), value)

    return [Scheduled(run, StepMemory(donors, []))]
