"""The runs of a CPU executable (``executor.Run``): ``KernelRun`` (consecutive kernel
steps, each kernel compiled from its own module; big kernels split across threads) and
``LibraryRun`` (a library step between them). Loops are ``loops.LoopRun``."""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from ...config import config
from ...core import library
from ...core.dtypes import Aval
from ...executor import store_results
from ...passes.kernel import Affine, Kernel
from ...plan import LibraryStep
from ...runtime import background
from ...runtime import compile as compiler
from ...runtime import pool as buffers
from ...runtime.compile import CompileStats
from . import codegen as cpu
from . import columns, drivers, entries, sequences, splits
from .cost import ThreadChoice, min_parallel_work, splittable, work
from .splits import Split
from .target import cache_key_fields
from .threads import (QUIET_BELL, chunk_state, chunks_failed, measured_costs,
                      prepare_chunks, run_chunks, thread_count)


def not_compiled(*args: Any) -> None:
    """Stands for an entry point until the executable is compiled (when the plan is built;
    nothing compiles while a plan runs)."""
    raise RuntimeError("arrjit: this executable was not compiled")


@dataclass
class KernelCall:
    kernel: Kernel
    rendered: cpu.RenderedKernel
    slots: list[int]        # write slots then read slots
    entry: Callable = not_compiled
    chunked: bool = False   # run on chunks of the outer loop by all threads
    worker: Callable = not_compiled   # takes chunks (of the kernel, or of its part function)
    finish: Callable = not_compiled
    splitting: Split | None = None   # a reduction run as per-chunk partials, then combined
    choice: ThreadChoice = field(default_factory=ThreadChoice)   # of a chunked kernel
    worker_pending: bool = False   # runs serially until its worker compiles in the background

    @property
    def filled(self) -> bool:
        """A small fill or copy: NumPy fills the buffers or assigns their regions, nothing
        compiles (``Fill``, ``Assignments``)."""
        return isinstance(self.entry, (Fill, Assignments))

    @property
    def split(self) -> bool:
        return self.splitting is not None

    @property
    def extent(self) -> int:
        return drivers.outer_extent(self.kernel)

    @property
    def read_slots(self) -> list[int]:
        return self.slots[len(self.kernel.writes):]

    def buffers(self, bufs: list) -> tuple[list, list]:
        """(written arrays, read arrays) of this call."""
        n = len(self.kernel.writes)
        return [bufs[s] for s in self.slots[:n]], [bufs[s] for s in self.read_slots]


def compile_entry(loaded: compiler.LoadedModule, name: str, args: Sequence[Any],
                  stats: CompileStats, on_error: Callable | None = None) -> Callable:
    """The entry point of ``name`` for ``args``' types, counted in ``stats`` (``on_error`` as
    ``entries.entry_point``'s; a worker's is ``_chunk_raised``)."""
    t0 = time.perf_counter()
    if on_error is None and name.endswith(drivers.WORKER_SUFFIX):
        on_error = _chunk_raised
    result = entries.entry_point(loaded, name, args, on_error)
    stats.add(result, time.perf_counter() - t0)
    return result.entry


def _chunk_raised(*args: Any) -> bool:
    """What a worker's native entry returns when a chunk raised, instead of running the worker
    again through numba (a helper would count itself in at the gate twice): the worker had
    come in (chunks run past the gate), and ``state`` holds the error
    (``drivers.render_chunked_module``)."""
    return True


class KernelRun:
    """Consecutive kernels, each compiled from its own module (keyed by its source, so a
    kernel that recurs, in this program or another, compiles once) to its own entry point. (A
    ``program`` function calling them all made LLVM optimise and emit every kernel a second
    time, inlined into it: a third of a cold compile; calling them from Python costs ~0.5 us
    a kernel.)"""

    def __init__(self, calls: list[KernelCall]):
        self.calls = calls
        most = thread_count()
        threshold = config.parallel_threshold or min_parallel_work(most)
        self.parallel = most > 1 and any(
            work(c.kernel) >= threshold for c in calls)
        self.modules: list[str | None] = []   # per call: the source of its module, if any
        for c in calls:
            big = self.parallel and work(c.kernel) >= threshold
            fills = c.kernel.fill_values()
            if fills is not None and not big:
                c.entry = Fill(fills)
                self.modules.append(None)
                continue
            assignments = c.kernel.assignments()
            if assignments is not None and not big:
                c.entry = Assignments(assignments, c.kernel)
                self.modules.append(None)
                continue
            c.splitting = splits.split_of(c.kernel, c.rendered) if big else None
            c.chunked = big and not c.split and splittable(c.kernel)
            if c.splitting is not None:
                split = splits.render_split(c.kernel, c.rendered.name, c.splitting)
                self.modules.append(drivers.render_chunked_module(
                    c.kernel, c.rendered, (split,), split=True))
            elif c.chunked:
                align = columns.line_elements(c.kernel) if c.rendered.column_order else 1
                self.modules.append(drivers.render_chunked_module(
                    c.kernel, c.rendered, (), split=False, align=align))
            else:
                self.modules.append(drivers.render_module([c.rendered]))

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(m for m in self.modules if m is not None))

    def compile(self, examples: list, stats: CompileStats) -> None:
        """Compile every entry point for the buffer types in ``examples`` (one per slot).

        A kernel run on chunks compiles only its worker (and, split, its ``_finish``): it also
        runs serially, as one chunk on this thread (``SerialByChunk``). Its own entry point
        would be the same kernel compiled a second time (LLVM optimises a worker with the
        kernel inlined), and is compiled only should a chunk raise, to raise the error. With
        thread counts measured, a chunked kernel whose worker is not compiled yet compiles
        its own entry instead, and its worker in the background (``_worker_later``)."""
        for k in range(len(self.calls)):
            self.compile_call(k, examples, stats)

    def compile_call(self, k: int, examples: list, stats: CompileStats) -> None:
        """Compile call ``k``'s entry points (see ``compile``)."""
        call, source = self.calls[k], self.modules[k]
        if source is None:   # a fill: a kernel of the program, nothing to compile
            stats.kernel_built(stats.compiles)
            return
        compiles = stats.compiles
        loaded = compiler.load_module(source, cache_key_fields())
        specs = _entry_specs(call, examples)
        if _worker_later(call, loaded, specs):
            call.entry = compile_entry(loaded, call.rendered.name, _kernel_args(call, examples),
                                       stats)
            call.worker_pending = True
            background.submit(partial(_compile_worker, call, loaded, specs))
            stats.kernel_built(compiles)
            return
        compiled = [compile_entry(loaded, function, args, stats) for function, args in specs]
        if call.split:
            call.worker, call.finish = compiled
        elif call.chunked:
            (call.worker,) = compiled
        else:
            (call.entry,) = compiled
        if call.split or call.chunked:
            call.entry = SerialByChunk(call, partial(compile_entry, loaded, call.rendered.name,
                                                     _kernel_args(call, examples),
                                                     CompileStats()))
        stats.kernel_built(compiles)

    def jobs(self, examples: list) -> list[tuple[str, list]]:
        """Per call not compiled yet: its module's source and the entries to compile
        (``compile_in_worker``'s arguments)."""
        return [job for call, source in zip(self.calls, self.modules) if source is not None
                for job in uncompiled(source, _entry_specs(call, examples))]

    def __call__(self, bufs: list) -> None:
        if not self.parallel:
            for call in self.calls:
                call.entry(*(bufs[s] for s in call.slots), call.rendered.params, 0, call.extent)
            return
        for call in self.calls:
            self.run_call(call, [bufs[s] for s in call.slots])

    def run_call(self, call: KernelCall, args: list) -> None:
        """Run ``call`` on ``args``, its buffers in the order of its slots: serially, or on
        the threads its ``ThreadChoice`` settles on (timing its first runs)."""
        if not (call.split or call.chunked) or call.extent < 2 or call.worker_pending:
            call.entry(*args, call.rendered.params, 0, call.extent)
            return
        most = thread_count()
        if config.parallel_threshold:
            self._run(call, args, most)
        elif call.choice.settled and call.choice.most == most:
            self._run(call, args, call.choice.count)
        else:
            threads = call.choice.threads(most, measured_costs())
            if threads > 1:
                self._prepare(call, args, threads)
            t0 = time.perf_counter()
            self._run(call, args, threads)
            call.choice.record(threads, time.perf_counter() - t0)

    def _prepare(self, call: KernelCall, args: list, threads: int) -> None:
        """Before a timed run on ``threads`` threads: what its first run would do besides
        the kernel (``prepare_chunks``), so that the thread count is chosen on the kernel's
        time."""
        prepare_chunks(call.worker, _worker_arguments(call, args, 1)[0], threads)

    def _run(self, call: KernelCall, args: list, threads: int) -> None:
        """Run a chunked or split kernel on ``threads`` threads."""
        params = call.rendered.params
        extent = call.extent
        if threads < 2:
            call.entry(*args, params, 0, extent)
        elif call.splitting is not None:
            chunks = min(CHUNKS_PER_THREAD * threads, call.splitting.extent)
            self._run_split(call, call.splitting, args, chunks, threads)
        elif not run_chunks(call.worker, _worker_arguments(call, args, 0)[0], extent,
                            min(_chunks_per_thread(call) * threads, extent), threads):
            call.entry(*args, params, 0, extent)   # raises the error a chunk met

    def _run_split(self, call: KernelCall, split: Split, args: list, chunks: int,
                   threads: int) -> None:
        worker_args, parts = _worker_arguments(call, args, chunks)
        params = call.rendered.params
        if not run_chunks(call.worker, worker_args, split.extent, chunks, threads):
            # raises the chunk's error; should it not, its serial result is the answer (the
            # partials are incomplete)
            call.entry(*args, params, 0, call.extent)
            return
        call.finish(*args, *parts, params, chunks)


def _worker_later(call: KernelCall, loaded: compiler.LoadedModule,
                  specs: list[EntrySpec]) -> bool:
    """Whether ``call``'s first run is serial, from its kernel's own entry, while its worker
    compiles in the background (``runtime.background``): a chunked kernel whose thread count
    is measured (no ``config.parallel_threshold``), its worker neither compiled nor being
    compiled by a compile worker. The first call then costs the kernel's compile only (the
    worker links the same compiled kernel, or inlines it). A split reduction compiles its
    worker now: its serial run goes through it too, so that its sums are added in one order
    from the first call on."""
    return (call.chunked and not config.parallel_threshold
            and not all(entries.compiled_already(loaded, f, a) for f, a in specs)
            and not compiler.busy(loaded))


def _compile_worker(call: KernelCall, loaded: compiler.LoadedModule,
                    specs: list[EntrySpec]) -> None:
    """Compile a chunked kernel's worker (a background job), then let its runs use threads.
    A worker that fails to compile leaves the kernel on one thread, with a warning."""
    try:
        (call.worker,) = [compile_entry(loaded, function, args, CompileStats())
                          for function, args in specs]
    except Exception as err:   # the kernel itself compiled and runs; only its threads fail
        warnings.warn(f"arrjit: the thread worker of kernel {call.rendered.name} did not "
                      f"compile ({type(err).__name__}: {err}); it runs on one thread",
                      RuntimeWarning, stacklevel=1)
        return
    call.worker_pending = False


def _worker_arguments(call: KernelCall, args: list, chunks: int) -> tuple[list, list]:
    """The arguments of ``call``'s worker for ``args`` (its buffers in slot order) before the
    chunk tail, and the partial arrays among them: a split kernel's worker fills partials for
    ``chunks`` chunks in place of the writes; a chunked kernel's takes ``args`` as they are."""
    params = call.rendered.params
    if call.splitting is None:
        return [*args, params], []
    parts = _partials(call.kernel, chunks * call.splitting.slots)
    return [*parts, *args[len(call.kernel.writes):], params], parts


class Fill:
    """The entry point of a kernel that only fills its outputs with constants
    (``Kernel.fill_values``), as its compiled entry is called: NumPy fills each buffer. A fill
    too small to split across threads is not worth a compile (a zeros array, a loop's initial
    carry, the stacked output of a ``scan``)."""

    def __init__(self, values: tuple):
        self.values = values

    def __call__(self, *args: Any) -> None:
        for buffer, value in zip(args, self.values):
            buffer.fill(value)


class Assignments:
    """The entry point of a kernel that only moves elements (``Kernel.assignments``: a padded
    array's border, the ends a join copies), as its compiled entry is called: NumPy assigns
    each store's region, a strided view of its buffer, from a constant or from a strided view
    of a read, in the kernel's store order; every read is taken before any store, as the
    kernel's loads come before its stores (a read of a buffer the kernel also writes is
    copied first). Too small to split across threads, it is not worth a compile."""

    def __init__(self, assignments: tuple, kernel: Kernel):
        self.assignments = assignments
        self.sizes = kernel.sizes
        self.n_writes = len(kernel.writes)

    def _region(self, array: np.ndarray, access: Affine) -> np.ndarray:
        return np.ndarray(self.sizes, array.dtype, buffer=array,
                          offset=access.offset * array.itemsize,
                          strides=tuple(c * array.itemsize for c in access.coefs))

    def _read(self, array: np.ndarray, access: Affine, writes: Sequence) -> np.ndarray:
        """The region a store reads: a view, or a copy where it may overlap a buffer the
        kernel writes (a broadcast read copied would be a fresh array as large as the
        store, paged in on every call)."""
        region = self._region(array, access)
        if any(np.may_share_memory(array, w) for w in writes):
            return region.copy()
        return region

    def __call__(self, *args: Any) -> None:
        if 0 in self.sizes:
            return
        writes, reads = args[:self.n_writes], args[self.n_writes:-3]
        values = [self._read(reads[source[0]], source[1], writes)
                  if isinstance(source, tuple) else source
                  for _, source, _ in self.assignments]
        for (k, _, access), value in zip(self.assignments, values):
            self._region(writes[k], access)[...] = value


EntrySpec = tuple[str, list]   # function, example arguments


def _entry_specs(call: KernelCall, examples: list) -> list[EntrySpec]:
    """The entry points ``call`` runs: its kernel; a chunked kernel's worker; a split
    kernel's partials' worker and its ``_finish``."""
    name, params = call.rendered.name, call.rendered.params
    if call.split:
        writes, reads = call.buffers(examples)
        parts = _partials(call.kernel, 1)
        return [(splits.part_name(name) + drivers.WORKER_SUFFIX,
                 parts + reads + [params] + _worker_tail()),
                (name + "_finish", writes + reads + parts + [params, 1])]
    if call.chunked:
        return [(name + drivers.WORKER_SUFFIX,
                 [examples[s] for s in call.slots] + [params] + _worker_tail())]
    return [(name, _kernel_args(call, examples))]


def _kernel_args(call: KernelCall, examples: list) -> list:
    """Example arguments of ``call``'s kernel itself, for compiling its own entry: its
    buffers in slot order, params, start, stop."""
    return [examples[s] for s in call.slots] + [call.rendered.params, 0, 1]


def uncompiled(source: str, specs: list[EntrySpec]) -> list[tuple[str, list[EntrySpec]]]:
    """``[(source, specs)]`` when some entry of ``specs`` is not compiled yet, else ``[]``."""
    loaded = compiler.load_module(source, cache_key_fields())
    done = all(entries.compiled_already(loaded, f, a) for f, a in specs)
    return [] if done else [(source, specs)]


def compile_in_worker(source: str, specs: list[EntrySpec], cache_dir: str) -> None:
    """A compile worker's job (``runtime.workers``): compile ``specs`` of the module
    ``source`` into the disk cache at ``cache_dir``."""
    if config.cache_dir != cache_dir:   # what this worker loaded before lives elsewhere
        config.update("cache_dir", cache_dir)
        compiler.clear()
    loaded = compiler.load_module(source, cache_key_fields())
    for function, args in specs:
        entries.entry_point(loaded, function, args)


class SerialByChunk:
    """A chunked kernel's serial run, ``(writes..., reads..., params, lo, hi)`` as its entry
    point takes them: its worker on one chunk on this thread (a split kernel: one partial, then
    ``_finish``). Should the chunk raise (the worker only flags it), the kernel's own entry
    point, compiled then, runs it again and raises the error."""

    def __init__(self, call: KernelCall, compile_entry_point: Callable[[], Callable]):
        self.call = call
        self.compile_entry_point = compile_entry_point
        self.raising: Callable | None = None

    def __call__(self, *args: Any) -> None:
        call = self.call
        *buffers, params, lo, hi = args
        extent = hi - lo
        state = chunk_state(1, 1)
        n = len(call.kernel.writes)
        if call.splitting is not None:   # always the whole range: the plan's only call
            parts = _partials(call.kernel, call.splitting.slots)
            call.worker(*parts, *buffers[n:], params, call.splitting.extent, 1, state, 0, 1,
                        QUIET_BELL)
            if not chunks_failed(state):
                call.finish(*buffers, *parts, params, 1)
                return
        else:
            call.worker(*buffers, params, extent, 1, state, 0, 1, QUIET_BELL)
            if not chunks_failed(state):
                return
        if self.raising is None:
            self.raising = self.compile_entry_point()
        self.raising(*args)


# Chunks are taken from atomic counters in native code, so many chunks cost nothing in
# hand-overs and balance a helper that starts late (a descheduled vCPU, measured up to 3.6 ms
# here). Softmax 4096x1024 float32 with 2 threads: 1.9 ms with one chunk per thread handed out
# in Python, 1.6 ms with 4 per thread, 1.5 ms with 16.
CHUNKS_PER_THREAD = 16


# A kernel in column order split by its columns reads a run of each row per chunk: many small
# chunks read rows piecemeal (16 a thread over 1024 float64 columns: 40 bytes), one slab a
# thread reads the longest runs.
CHUNKS_PER_THREAD_IN_COLUMNS = 1


def _chunks_per_thread(call: KernelCall) -> int:
    return CHUNKS_PER_THREAD_IN_COLUMNS if call.rendered.column_order else CHUNKS_PER_THREAD


def _worker_tail() -> list:
    """Example arguments after a worker's kernel arguments, for compiling it: extent, chunks,
    state, t, threads, bell (see ``drivers.render_chunked_module``)."""
    return [1, 1, chunk_state(1, 1), 0, 1, np.zeros(1, np.int64)]


def _partials(kernel: Kernel, count: int) -> list[np.ndarray]:
    """The partial arrays of a split kernel (``splits.partial_arrays``), ``count`` long."""
    return [buffers.empty((count,), np.dtype(dtype))
            for _, dtype in splits.partial_arrays(kernel)]


class LibraryRun:
    """A library step; its results become the buffers in ``out_slots``. Running sums and
    products run as native functions (``sequences.runs_outside_loops``), the rest through
    ``core.library``."""

    def __init__(self, step: LibraryStep, slot_avals: Sequence[Aval]):
        self.step = step
        self.node = step.node
        self.in_slots = list(step.in_slots)
        self.out_slots = list(step.out_slots)
        self.in_place = step.in_place
        self.perms = step.in_perms if any(step.in_perms) else ()
        self.native: cpu.RenderedKernel | None = None
        self.sources: tuple[str, ...] = ()   # NumPy code: nothing generated
        if not self.perms and sequences.runs_outside_loops(step, slot_avals):
            self.native = sequences.render(step, slot_avals, False, cpu.NJIT_OPTIONS)
            self.sources = (drivers.render_module([self.native]),)
            out = slot_avals[self.out_slots[0]]
            self.out_shape, self.out_dtype = out.shape, out.dtype
        self.entry: Callable = not_compiled

    def _entry_args(self, native: cpu.RenderedKernel, examples: list) -> list:
        return [examples[self.out_slots[0]], examples[self.in_slots[0]], native.params, 0, 1]

    def jobs(self, examples: list) -> list[tuple[str, list]]:
        """Its native function, when it has one not compiled yet (see ``KernelRun.jobs``)."""
        if self.native is None:
            return []
        return uncompiled(self.sources[0], [(self.native.name,
                                             self._entry_args(self.native, examples))])

    def compile(self, examples: list, stats: CompileStats) -> None:
        if self.native is not None:
            loaded = compiler.load_module(self.sources[0], cache_key_fields())
            self.entry = compile_entry(loaded, self.native.name,
                                       self._entry_args(self.native, examples), stats)

    def compute(self, *operands: np.ndarray) -> Any:
        """The result (a tuple of them for an op with several)."""
        if self.native is not None:
            out = buffers.empty(self.out_shape, self.out_dtype)
            self.entry(out, operands[0], self.native.params, 0, 1)
            return out
        if self.perms:   # transposed views: BLAS reads them without a copy
            operands = tuple(x if perm is None else x.transpose(perm)
                        for x, perm in zip(operands, self.perms))
        node = self.node
        params = dict(node.param, in_place=True) if self.in_place else node.param
        dtypes = tuple(v.dtype for v in node.outs) if node.extra else node.out.dtype
        return library.call(node.op, operands, params, dtypes)

    def __call__(self, bufs: list) -> None:
        result = self.compute(*(bufs[s] for s in self.in_slots))
        store_results(bufs, self.out_slots, result if len(self.out_slots) > 1 else (result,))
