"""Native drivers around rendered kernels: the thread workers and the helper threads'
functions, and kernel modules (the functions of native loops are ``loopfunctions``)."""
from __future__ import annotations

from ...core.ir import Op
from ...passes.kernel import Compute, Kernel, checked
from .codegen import NJIT_OPTIONS, PRELUDE, REDUCTION_OPTIONS, RenderedKernel, array_names
from .expressions import MATHLIB_OPS
from .splits import part_name, partial_arrays


# The ``state`` array shared by the threads running one worker (see ``backends.cpu.threads``):
STATE_ERROR = 0        # set when a chunk raised (the caller re-runs serially to raise it)
STATE_GATE = 1         # helpers count themselves in; the caller adds GATE_CLOSED when done
STATE_RELEASED = 2     # helpers that came in and have dropped the job's arrays
STATE_ENTERED = 3      # helpers that came in before the gate closed (-1 until it closes)
STATE_UNFINISHED = 4   # chunks an unguarded worker started and did not finish (one raised)
STATE_NEXT = 5         # next chunk of thread 0, of thread 1, ...
GATE_CLOSED = 1 << 40
WORKER_SUFFIX = "_worker"   # the name of a function's worker: the function's, then this


# A thread worker's kernel that cannot raise is inlined into it at numba's level: it is typed
# and lowered once, inside the worker, instead of compiled as a function of its own and
# linked in; the worker then needs no ``try`` around it (see ``render_chunked_module``).
INLINED_INTO_WORKER = ', inline="always"'


def may_raise(kernel: Kernel) -> bool:
    """Whether running ``kernel`` can raise: it checks an index at run time (a ``Position``
    not known in range), raises an integer to a power (a negative exponent is NumPy's
    ``ValueError``) or computes with complex numbers (numba's own complex functions raise on
    some zeros)."""
    for stmt in kernel.stmts:
        if checked(stmt):
            return True
        if isinstance(stmt, Compute) and any(
                d.kind == "c" or (stmt.op is Op.POW and d.kind == "i")
                for d in (stmt.dtype, *stmt.arg_dtypes)):
            return True
    return any(r.dtype.kind == "c" for r in kernel.reductions)


def inlined_into_worker(source: str, function: str) -> str:
    """``source`` with ``function``'s decorator asking numba to inline it into its callers
    (the worker that runs it on chunks)."""
    head = f")\ndef {function}("
    assert source.count(head) == 1, f"{function} is defined once in its module"
    return source.replace(head, f"{INLINED_INTO_WORKER}{head}")


def render_chunked_module(kernel: Kernel, rendered: RenderedKernel, extra: tuple[str, ...],
                          split: bool, align: int = 1) -> str:
    """The module of a kernel run on chunks: the kernel, the ``extra`` functions (a split
    kernel's ``_part`` and ``_finish``) and the worker that runs the kernel (for a ``split``
    kernel: its ``_part`` function, filling partial slot ``k`` for chunk ``k``) on chunks whose
    bounds are multiples of ``align`` (but the last chunk's end); see ``_render_worker``.

    The worker calls a kernel that cannot raise (``may_raise``) without a ``try``, and numba
    inlines it into the worker (one function typed, lowered and optimised instead of two
    linked together) unless it calls the math library (``calls_mathlib``). A kernel that can
    raise, or that takes too many arguments for numba to inline (``LONG_CALL``), is compiled
    on its own, and the worker flags its errors."""
    writes, reads = array_names(kernel)
    if split:
        callee, options = part_name(rendered.name), REDUCTION_OPTIONS
        arguments = [part for part, _ in partial_arrays(kernel)] + reads
    else:
        callee = rendered.name
        options = REDUCTION_OPTIONS if kernel.n_outer is not None else NJIT_OPTIONS
        arguments = writes + reads
    guarded = may_raise(kernel) or len(arguments) + len(_chunk_tail(split)) >= LONG_CALL
    worker = _render_worker(callee, arguments, chunk_number=split, align=align,
                            guarded=guarded, options=options)
    module = render_module([rendered], (*extra, worker))
    if guarded or calls_mathlib(kernel):
        return module
    return inlined_into_worker(module, callee)


def calls_mathlib(kernel: Kernel) -> bool:
    """Whether ``kernel`` calls a math-library function. Such a kernel stays a function of
    its own, which LLVM inlines into its worker: numba's inlining of it into the worker's
    chunk loop made LLVM emit a slower loop."""
    return any(isinstance(stmt, Compute) and stmt.op in MATHLIB_OPS for stmt in kernel.stmts)


# CPython passes a call of 30 or more arguments as a list turned into a tuple, which numba
# rejects inside ``try`` ("Unsupported op-code encountered: list_to_tuple") and does not
# inline; such a call in a worker passes a tuple built before the loop instead.
LONG_CALL = 30


def _chunk_tail(chunk_number: bool) -> list[str]:
    """The arguments a worker passes its function after the arrays."""
    return ["P", "lo", "hi"] + (["k"] if chunk_number else [])


def _render_worker(function: str, arguments: list[str], chunk_number: bool = False,
                   align: int = 1, guarded: bool = True, options: str = NJIT_OPTIONS) -> str:
    """``<function>_worker(arguments..., P, extent, chunks, state, t, threads, bell)``, run by
    each of ``threads`` threads (``t`` = 0 is the caller), calls ``function(arguments..., P,
    lo, hi[, k])`` for chunks ``k`` of ``range(extent)``. Thread ``t`` owns the consecutive
    chunks ``[chunks * t // threads, chunks * (t + 1) // threads)`` and takes them in order from
    the atomic counter ``state[STATE_NEXT + t]``; when they are gone it takes the remaining
    chunks of the other threads from their counters. The caller first rings ``bell`` (helpers
    spinning on it start at once); a helper first passes the gate, and does nothing once the
    caller has closed it (returns False: it took no chunk and must not count itself out). A
    chunk that raises is flagged in ``state``: ``guarded``, the worker catches the error and
    sets ``STATE_ERROR``; else each chunk counts itself in and out at ``STATE_UNFINISHED``, and
    the worker returns the chunk's error status (which a native entry called from Python
    would answer by running the worker again through numba, finding no chunk left). The
    worker compiles with ``options``: those of ``function`` where it is inlined into it.

    Owned consecutive ranges keep each thread on its own pages of a fresh output (two threads
    faulting in one huge page stalled for milliseconds), and a helper that starts late finds
    its first chunks already taken."""
    tail = _chunk_tail(chunk_number)
    if align == 1:
        bounds = ("            lo = extent * k // chunks\n"
                  "            hi = extent * (k + 1) // chunks\n")
    else:
        bounds = (f"            lo = extent // {align} * k // chunks * {align}\n"
                  f"            hi = extent if k + 1 == chunks else "
                  f"extent // {align} * (k + 1) // chunks * {align}\n")
    packed, call = "", f"{function}({', '.join(arguments + tail)})"
    if guarded and len(arguments) + len(tail) >= LONG_CALL:
        packed = f"    fixed = ({', '.join(arguments)},)\n"
        call = f"{function}(*(fixed + ({', '.join(tail)},)))"
    if guarded:
        call = (f"try:\n"
                f"                {call}\n"
                f"            except Exception:\n"
                f"                state[{STATE_ERROR}] = 1")
    else:   # a chunk that raises leaves its count: its status may not reach the caller
        call = (f"_A.fetch_add(state, {STATE_UNFINISHED}, 1)\n"
                f"            {call}\n"
                f"            _A.fetch_add(state, {STATE_UNFINISHED}, -1)")
    return (f"@njit({options})\n"
            f"def {function}{WORKER_SUFFIX}({', '.join(arguments)}, P, extent, chunks, state, t, "
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
            f"{bounds}"
            f"            {call}\n"
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


@njit({NJIT_OPTIONS}{INLINED_INTO_WORKER})
def idle(unused, P, lo, hi):
    pass
""" + "\n\n" + _render_worker("idle", ["unused"], guarded=False)


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
