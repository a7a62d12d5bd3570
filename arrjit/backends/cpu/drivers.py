"""Native drivers around rendered kernels: the thread workers and the helper threads'
functions, segment modules, and native loop drivers."""
from __future__ import annotations

from ...passes.kernel import Kernel
from .codegen import NJIT_OPTIONS, PRELUDE, RenderedKernel, array_names
from .splits import partial_arrays


# The ``state`` array shared by the threads running one worker (see ``backends.cpu.threads``):
STATE_ERROR = 0        # set when a chunk raised (the caller re-runs serially to raise it)
STATE_GATE = 1         # helpers count themselves in; the caller adds GATE_CLOSED when done
STATE_RELEASED = 2     # helpers that came in and have dropped the job's arrays
STATE_ENTERED = 3      # helpers that came in before the gate closed (-1 until it closes)
STATE_NEXT = 4         # next chunk of thread 0, of thread 1, ...
GATE_CLOSED = 1 << 40


def render_worker(kernel: Kernel, name: str, split: bool) -> str:
    """The worker running kernel ``name`` on chunks (for a ``split`` kernel: its ``_part``
    function, filling partial slot ``k`` for chunk ``k``); see ``_render_worker``."""
    writes, reads = array_names(kernel)
    if split:
        parts = [part for part, _ in partial_arrays(kernel)]
        return _render_worker(name + "_part", parts + reads, chunk_number=True)
    return _render_worker(name, writes + reads)


# CPython passes a call of 30 or more arguments as a list turned into a tuple, which numba
# rejects inside ``try`` ("Unsupported op-code encountered: list_to_tuple"); such a call in a
# worker passes a tuple built before the loop instead.
CALL_ARGUMENTS_IN_TRY = 30


def _render_worker(function: str, arguments: list[str], chunk_number: bool = False) -> str:
    """``<function>_worker(arguments..., P, extent, chunks, state, t, threads, bell)``, run by
    each of ``threads`` threads (``t`` = 0 is the caller), calls ``function(arguments..., P,
    lo, hi[, k])`` for chunks ``k`` of ``range(extent)``. Thread ``t`` owns the consecutive
    chunks ``[chunks * t // threads, chunks * (t + 1) // threads)`` and takes them in order from
    the atomic counter ``state[STATE_NEXT + t]``; when they are gone it takes the remaining
    chunks of the other threads from their counters. The caller first rings ``bell`` (helpers
    spinning on it start at once); a helper first passes the gate, and does nothing once the
    caller has closed it (returns False: it took no chunk and must not count itself out). A
    chunk that raises sets ``state[STATE_ERROR]``.

    Owned consecutive ranges keep each thread on its own pages of a fresh output (two threads
    faulting in one huge page stalled for milliseconds), and a helper that starts late finds
    its first chunks already taken."""
    tail = ["P", "lo", "hi"] + (["k"] if chunk_number else [])
    packed = ""
    if len(arguments) + len(tail) >= CALL_ARGUMENTS_IN_TRY:
        packed = f"    fixed = ({', '.join(arguments)},)\n"
        call = f"*(fixed + ({', '.join(tail)},))"
    else:
        call = ", ".join(arguments + tail)
    return (f"@njit({NJIT_OPTIONS})\n"
            f"def {function}_worker({', '.join(arguments)}, P, extent, chunks, state, t, "
            f"threads, bell):\n"
            f"    if t == 0:\n"
            f"        _A.fetch_add(bell, 0, 1)\n"
            f"    elif _A.fetch_add(state, {STATE_GATE}, 1) >= {GATE_CLOSED}:\n"
            f"        return False\n"
            f"{packed}"
            f"    for v in range(threads):\n"
            f"        owner = (t + v) % threads\n"
            f"        end = chunks * (owner + 1) // threads\n"
            f"        while True:\n"
            f"            k = _A.fetch_add(state, {STATE_NEXT} + owner, 1)\n"
            f"            if k >= end:\n"
            f"                break\n"
            f"            lo = extent * k // chunks\n"
            f"            hi = extent * (k + 1) // chunks\n"
            f"            try:\n"
            f"                {function}({call})\n"
            f"            except Exception:\n"
            f"                state[{STATE_ERROR}] = 1\n"
            f"    return True\n")


def render_thread_module() -> str:
    """The module of the helper threads' own native functions (see ``backends.cpu.threads``):

    * ``park(bell, seen, spins)``: spin until ``bell[0] != seen`` (True) or ``spins`` pauses
      have passed (False);
    * ``release_and_park(state, bell, seen, spins)``: a helper has dropped the job's arrays:
      count it out in ``state``, then park;
    * ``settle(state, spins)``: the caller, once its worker has returned (every chunk taken):
      close the gate, then wait (at most ``spins`` pauses) until every helper that came in is
      out, its chunks done. False: call again after a sleep;
    * ``idle_worker``: a worker whose chunks do nothing (what a parallel run costs by
      itself, measured by ``threads.measured_costs``)."""
    return PRELUDE + f"""

@njit({NJIT_OPTIONS})
def park(bell, seen, spins):
    for _ in range(spins):
        if _A.load_acquire(bell, 0) != seen:
            return True
        _A.spin_pause()
    return _A.load_acquire(bell, 0) != seen


@njit({NJIT_OPTIONS})
def release_and_park(state, bell, seen, spins):
    _A.fetch_add(state, {STATE_RELEASED}, 1)
    return park(bell, seen, spins)


@njit({NJIT_OPTIONS})
def settle(state, spins):
    if state[{STATE_ENTERED}] < 0:
        state[{STATE_ENTERED}] = _A.fetch_add(state, {STATE_GATE}, {GATE_CLOSED})
    entered = state[{STATE_ENTERED}]
    for _ in range(spins):
        if _A.load_acquire(state, {STATE_RELEASED}) >= entered:
            return True
        _A.spin_pause()
    return _A.load_acquire(state, {STATE_RELEASED}) >= entered


@njit({NJIT_OPTIONS})
def idle(unused, P, lo, hi):
    pass
""" + "\n\n" + _render_worker("idle", ["unused"])


def outer_extent(kernel: Kernel) -> int:
    """The trip count of the outermost loop (1 for a 0-d kernel: its body runs once)."""
    return kernel.sizes[0] if kernel.sizes else 1


def render_module(kernels: list[RenderedKernel], extra: tuple[str, ...] = ()) -> str:
    """A module with the kernels (each once) and ``extra`` functions."""
    unique = {k.name: k.source for k in kernels}
    unique.update({text.split("def ", 1)[1].split("(", 1)[0]: text for text in extra})
    return render_functions(unique)


def render_functions(functions: dict[str, str]) -> str:
    """A module with the given function definitions (by name)."""
    return PRELUDE + "\n\n" + "\n\n".join(functions.values())


def render_loop_lines(entry: list[str], cond: list[str], body: list[str], predicate: str,
                      carries: list[tuple[str, str, bool]], exit: list[str],
                      results: list[str]) -> list[str]:
    """The body of a function that runs ``while predicate: body`` natively after ``entry``:
    the condition's statements set the local ``predicate``, the body's read each carry
    ``(now, next, scalar)`` from ``now`` and write it to ``next``, then ``now`` takes the next
    value (a swap of the two buffers, or for a ``scalar`` carry of its local ``<name>_s``; a
    carry updated in place is not listed); ``exit`` runs after the loop, which returns
    ``results``."""
    lines = [f"    {statement}" for statement in entry]
    lines.append("    while True:")
    lines += [f"        {statement}" for statement in cond]
    lines.append(f"        if not {predicate}:")
    lines.append("            break")
    lines += [f"        {statement}" for statement in body]
    for now, nxt, scalar in carries:
        lines.append(f"        {now}_s = {nxt}_s" if scalar else f"        {now}, {nxt} = {nxt}, {now}")
    lines += [f"    {statement}" for statement in exit]
    lines.append(f"    return ({', '.join(results)},)")
    return lines
