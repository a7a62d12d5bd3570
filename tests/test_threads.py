"""The threads that run chunked kernels, numba's threading layer or arrjit's helper threads:
each chunk once, errors reach the caller, concurrent callers and forked children work;
spinning and sleeping helpers both join, a busy helper never delays a call, no helper keeps
the output alive; the native dispatch is one call from Python."""
import os
import sys
import threading
import time

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.backends.cpu import threads
from arrjit.runtime import background
from arrjit.runtime import compile as compiler

from helpers import assert_same


def _chunked(jitted, *args) -> list[bool]:
    return [c.chunked for seg in jitted.lower(*args)._entry.rendered.runs for c in seg.calls]


def test_chunks_run_once_each_and_errors_reach_the_caller(two_threads_either_dispatch):
    x = np.arange(100_003, dtype=np.float64)
    inc = arrjit.jit(lambda x: x + 1.0, donate_argnums=0)
    assert _chunked(inc, x) == [True]
    y = inc(x)                       # in place: a chunk run twice would add 2
    assert np.shares_memory(x, y)
    assert_same(y, np.arange(1, 100_004, dtype=np.float64))

    base = np.full(50_000, 2, dtype=np.int64)
    exponent = np.ones(50_000, dtype=np.int64)
    exponent[40_000] = -1            # raises inside one chunk, on whichever thread runs it
    power = arrjit.jit(lambda a, b: a ** b + 1)
    assert _chunked(power, base, exponent) == [True]
    with pytest.raises(ValueError, match="negative integer powers"):
        power(base, exponent)
    assert_same(power(base, np.ones_like(exponent)), np.full(50_000, 3, dtype=np.int64))


def test_a_chunked_kernel_compiles_once_and_runs_serially_through_its_worker(
        two_threads_from_1000_elements):
    """The worker is the only compile of a chunked kernel (its entry point would be the same
    kernel compiled again); a run too small to split is its worker on one chunk, and an
    error there compiles the entry point then, to raise it."""
    from arrjit.backends.cpu.steps import SerialByChunk

    base = np.full(50_000, 2, dtype=np.int64)
    power = arrjit.jit(lambda a, b: a ** b + 1 - 2 * a)   # a kernel no other test has
    assert_same(power(base, np.ones_like(base)), np.full(50_000, -1, dtype=np.int64))
    info = power.cache_info()
    assert info.compiles + info.disk_hits == 1
    (call,) = [c for seg in power.lower(base, base)._entry.rendered.runs
               for c in seg.calls]
    assert isinstance(call.entry, SerialByChunk)
    out = np.empty(50_000, np.int64)
    exponent = np.ones(50_000, dtype=np.int64)
    call.entry(out, base, exponent, call.rendered.params, 0, 50_000)   # one chunk, here
    assert_same(out, np.full(50_000, -1, dtype=np.int64))
    exponent[7] = -1
    with pytest.raises(ValueError, match="negative integer powers"):
        call.entry(out, base, exponent, call.rendered.params, 0, 50_000)


def test_a_chunk_error_the_serial_run_does_not_raise_leaves_the_serial_answer(
        two_threads_from_1000_elements, monkeypatch):
    """A split reduction whose chunks report an error re-runs serially to raise it; should
    the serial run succeed, its result stands rather than the (incomplete) partials."""
    from arrjit.backends.cpu import steps

    def chunks_reporting_an_error(worker, args, extent, chunks, threads):
        for part in args:
            if isinstance(part, np.ndarray) and part.shape == (chunks,):
                part.fill(np.nan)   # what chunks that never ran would leave
        return False

    x = np.linspace(-1.0, 1.0, 30_000)
    total = arrjit.jit(lambda x: (x * x).sum())
    assert [c.split for seg in total.lower(x)._entry.rendered.runs
            for c in seg.calls] == [True]
    monkeypatch.setattr(steps, "run_chunks", chunks_reporting_an_error)
    np.testing.assert_allclose(total(x), (x * x).sum(), rtol=1e-12)


def _kernel_calls(jitted, *args) -> list:
    return [c for seg in jitted.lower(*args)._entry.rendered.runs for c in seg.calls]


def test_which_kernels_may_raise():
    """Run-time index checks, integer powers and complex arithmetic may raise; float and
    integer arithmetic, casts, selects and reductions do not."""
    from arrjit.backends.cpu.drivers import may_raise

    def kernels(fn, *args):
        return [may_raise(c.kernel) for c in _kernel_calls(arrjit.jit(fn), *args)]

    x, i = np.linspace(0, 1, 50), np.arange(50)
    assert kernels(lambda x, i: anp.where(x > 0.5, x * 2, -x) + (i // 3).astype(x.dtype)
                   + x.sum(), x, i) == [False, False]
    assert kernels(lambda i: i ** (i % 3), i) == [True]
    assert kernels(lambda i: i.astype(np.uint32) ** 2, i) == [False]
    assert kernels(lambda x: x * (1 + 2j), x) == [True]
    assert True in kernels(lambda x, i: x * x[i[3]], x, i)


def test_a_chunked_kernel_that_cannot_raise_compiles_inside_its_worker(
        two_threads_from_1000_elements):
    """numba inlines a kernel that cannot raise into its worker: the worker is the one
    function compiled, and it runs the kernel without a ``try``. A kernel calling the math
    library stays a function of its own (LLVM inlines it)."""
    from numba.core.registry import CPUDispatcher

    from arrjit.runtime import compile as compiler

    def compiled_functions(fn, x, expected) -> tuple[set, str]:
        jitted = arrjit.jit(fn)
        (call,) = _kernel_calls(jitted, x)
        assert call.chunked
        np.testing.assert_allclose(jitted(x), expected, rtol=1e-14)
        (loaded,) = [m for m in compiler._modules.values() if call.rendered.name in m.source]
        return {name for name, d in vars(loaded.module).items()
                if isinstance(d, CPUDispatcher) and d.signatures}, call.rendered.name

    x = np.linspace(0, 1, 50_000)
    # kernels no other test has
    compiled, kernel = compiled_functions(lambda x: x * 3.0 + 0.25 - x * x, x,
                                          x * 3.0 + 0.25 - x * x)
    assert compiled == {kernel + "_worker"}
    compiled, kernel = compiled_functions(lambda x: x * 3.0 + 0.75 * anp.exp(x), x,
                                          x * 3.0 + 0.75 * np.exp(x))
    assert compiled == {kernel, kernel + "_worker"}


def test_an_unguarded_chunk_that_raises_reaches_the_caller(two_threads_either_dispatch,
                                                          monkeypatch):
    """Should a kernel judged unable to raise raise after all, the chunk's error status
    reaches the caller as a flagged chunk on either dispatch (no helper is left counted in),
    and the serial run raises the error."""
    from arrjit.backends.cpu import drivers

    monkeypatch.setattr(drivers, "may_raise", lambda kernel: False)
    base = np.full(50_000, 3, dtype=np.int64)
    exponent = np.ones(50_000, dtype=np.int64)
    exponent[30_000] = -2
    power = arrjit.jit(lambda a, b: a ** b - 7)   # a kernel no other test has
    assert _chunked(power, base, exponent) == [True]
    for _ in range(3):
        with pytest.raises(ValueError, match="negative integer powers"):
            power(base, exponent)
    assert_same(power(base, np.ones_like(exponent)), np.full(50_000, -4, dtype=np.int64))


def test_kernels_with_many_outputs_run_on_threads(two_threads_either_dispatch):
    """32 outputs of one chunked kernel and 31 partial sums of one split reduction: a worker's
    call of 30 or more arguments (which numba rejected inside ``try``) compiles and runs."""
    x = np.arange(20_000, dtype=np.float64)
    many = arrjit.jit(lambda x: tuple(x * k + k for k in range(32)))
    assert _chunked(many, x) == [True]
    for k, out in enumerate(many(x)):
        assert_same(out, x * k + k)
    sums = arrjit.jit(lambda x: tuple((x * k).sum() for k in range(31)))
    for k, out in enumerate(sums(x)):
        np.testing.assert_allclose(out, (x * k).sum(), rtol=1e-12)


@pytest.mark.parametrize("spin_wait_us", [0, 500])
def test_spinning_and_sleeping_helpers_both_take_chunks(two_helper_threads,
                                                        monkeypatch, spin_wait_us):
    """With no spinning every helper sleeps between calls and is woken through its queue;
    with spinning it sees the bell. Either way it takes chunks, and each chunk runs once."""
    arrjit.config.update("spin_wait_us", spin_wait_us)
    joined = []
    run = threads._Helper._run

    def counted(helper, job, seen):
        joined.append(helper.t)
        return run(helper, job, seen)

    monkeypatch.setattr(threads._Helper, "_run", counted)
    x = np.zeros(2_000_000)
    inc = arrjit.jit(lambda x: x + 1.0, donate_argnums=0)
    # A helper that wakes after its caller has done every chunk misses that call, so how
    # many calls it joins depends on scheduling; call until it has joined twice (bounded).
    calls = 0
    while len(joined) < 2 and calls < 500:
        x = inc(x)
        calls += 1
        if spin_wait_us == 0:
            time.sleep(0.002)        # the helper gives up its job and sleeps
    assert_same(x, np.full(2_000_000, float(calls)))
    assert len(joined) >= 2, f"no helper took part in {calls} calls"


def test_a_busy_helper_does_not_delay_the_call(two_helper_threads):
    """When every helper is busy the caller does all the chunks itself and returns at once,
    and nothing but the caller references the output afterwards."""
    x = np.arange(100_003, dtype=np.float64)
    f = arrjit.jit(lambda x: x * 2.0)
    f(x)
    pool = threads.helpers(1)
    started = threading.Event()

    def busy_worker(*args):
        started.set()
        time.sleep(0.5)

    busy_state = threads.chunk_state(1, 2)
    busy_job = [busy_worker, [], 1, 1, busy_state, 2]
    pool.post(busy_job, 1)
    pool.bell[0] += 1                # what a native worker does on entry
    assert started.wait(5.0)
    t0 = time.perf_counter()
    out = f(x)
    assert time.perf_counter() - t0 < 0.4
    assert_same(out, x * 2.0)
    assert sys.getrefcount(out) == 2       # this name and getrefcount's argument
    pool.settle(busy_job, busy_state)      # returns once the busy helper is out


def test_a_helper_arriving_after_the_gate_closed_is_not_counted_out(two_helper_threads):
    """The caller waits for as many releases as helpers came in before it closed the gate; a
    late helper that counted itself out too would let the caller return while a helper that
    came in is still writing its chunk (seen with 3 helpers and 3 callers)."""
    from arrjit.backends.cpu.drivers import STATE_GATE, STATE_RELEASED

    x = np.arange(100_003, dtype=np.float64)
    f = arrjit.jit(lambda x: x * 2.0)
    call = f.lower(x)._entry.rendered.runs[0].calls[0]
    f(x)                                             # compiles the worker
    pool = threads.helpers(1)
    out = np.zeros_like(x)
    state = threads.chunk_state(8, 2)
    assert pool.native.settle(state, 0)              # the caller closed the gate: none came in
    late = [call.worker, [out, x, call.rendered.params], x.size, 8, state, 2]
    pool._threads[0]._run(late, int(pool.bell[0]))
    assert state[STATE_RELEASED] == 0
    assert state[STATE_GATE] > 0                     # it knocked, found the gate closed
    assert not out.any()                             # and took no chunk


@pytest.mark.parametrize("num_threads", [2, 4])
def test_callers_on_several_threads_share_the_threads(two_threads_either_dispatch,
                                                      num_threads):
    arrjit.config.update("num_threads", num_threads)
    inc = arrjit.jit(lambda x: x + 1.0, donate_argnums=0)
    total = arrjit.jit(lambda x: (x * 2.0).sum())
    errors = []

    def caller(k):
        try:
            x = np.full(200_000, float(k))
            for _ in range(40):
                x = inc(x)
                assert total(x) == 2.0 * x.size * x[0]
            assert_same(x, np.full(200_000, k + 40.0))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    callers = [threading.Thread(target=caller, args=(k,)) for k in range(3)]
    for c in callers:
        c.start()
    for c in callers:
        c.join(120)
    assert not errors, errors


def _child_exit_code(pid: int, where: str) -> int:
    """The exit code of forked child ``pid``; the test fails if it runs past two minutes."""
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            pytest.fail(f"the forked child hung {where}".strip())
        time.sleep(0.05)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_parallel_kernels(two_threads_either_dispatch):
    """A child has none of its parent's helper threads; it starts its own (and never enters
    the parent's OpenMP layer, which terminates a forked child)."""
    f = arrjit.jit(lambda x: x * 3.0)
    x = np.arange(300_000, dtype=np.float64)
    assert_same(f(x), x * 3.0)                  # the parent's helpers are running
    pid = os.fork()
    if pid == 0:
        ok = np.array_equal(f(x), x * 3.0) and np.array_equal(f(x + 1), (x + 1) * 3.0)
        os._exit(0 if ok else 1)
    assert _child_exit_code(pid, "in a parallel kernel") == 0



@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_waits_for_background_compiles_and_the_child_compiles_its_own():
    """A process forks once its background compiles have run (a child forked while numba
    compiled would find numba's lock held for ever); the child queues and runs its own."""
    from arrjit.backends.cpu.cost import MIN_PARALLEL_WORK

    arrjit.config.update("num_threads", 2)
    try:
        x = np.linspace(0.0, 1.0, MIN_PARALLEL_WORK // 2)
        f = arrjit.jit(lambda x: x * 7.0 - 2.0)
        (call,) = [c for run in f.lower(x)._entry.rendered.runs for c in run.calls]
        assert_same(f(x), x * 7.0 - 2.0)
        pid = os.fork()
        if pid == 0:
            g = arrjit.jit(lambda x: x * 9.0 + 4.0)
            (other,) = [c for run in g.lower(x)._entry.rendered.runs for c in run.calls]
            ok = (not call.worker_pending and np.array_equal(f(x), x * 7.0 - 2.0)
                  and np.array_equal(g(x), x * 9.0 + 4.0))
            background.wait()
            ok = ok and not other.worker_pending and np.array_equal(g(x), x * 9.0 + 4.0)
            os._exit(0 if ok else 1)
        assert _child_exit_code(pid, "") == 0
    finally:
        arrjit.config.update("num_threads", 0)


def test_native_dispatch_runs_every_thread_in_one_call(two_threads_either_dispatch):
    """On numba's threading layer a chunked kernel's run is one call of its parallel entry,
    which runs the worker once per thread (each thread number once) and no Python helper."""
    from arrjit.backends.cpu import dispatch

    if two_threads_either_dispatch == "helpers" or not dispatch.threading_layer():
        assert dispatch.parallel_entry(lambda *a: None, [1, 2, 3, 4, 5, 6]) is None
        return
    assert dispatch.threading_layer() in dispatch.SAFE_LAYERS
    x = np.arange(100_003, dtype=np.float64)
    f = arrjit.jit(lambda x: x * 2.0 + 1.0)
    assert_same(f(x), x * 2.0 + 1.0)
    (call,) = [c for seg in f.lower(x)._entry.rendered.runs for c in seg.calls]
    out = np.zeros_like(x)
    state = threads.chunk_state(8, 2)
    args = [out, x, call.rendered.params, x.size, 8, state, 0, 2, np.zeros(1, np.int64)]
    entry = dispatch.parallel_entry(call.worker, args)
    assert entry is not None
    assert entry(*args) == 0                           # no thread failed
    assert_same(out, x * 2.0 + 1.0)
    from arrjit.backends.cpu.drivers import STATE_GATE, STATE_NEXT
    assert state[STATE_GATE] == 1                      # thread 1 came in; thread 0 rings
    assert list(state[STATE_NEXT:]) >= [4, 8]          # each thread's own chunks all taken
    helpers_before = threads._helpers.size if threads._helpers is not None else 0
    f(x + 1.0)
    assert (threads._helpers.size if threads._helpers is not None else 0) == helpers_before
    with pytest.raises(TypeError, match="takes 9 arguments, not 2"):
        entry(out, x)


def test_a_kernel_settles_on_threads_only_when_they_were_faster():
    """``ThreadChoice``: three runs on one thread, two on the count the dispatch costs
    suggest; a parallel best run no faster than the serial one settles on one thread."""
    from arrjit.backends.cpu.cost import ThreadChoice, ThreadCosts

    costs = ThreadCosts({2: 5e-6, 4: 6e-6, 8: 8e-6})
    slower = ThreadChoice()
    counts = []
    for seconds in (2e-3, 1e-3, 1e-3, 1.5e-3, 1.2e-3):
        counts.append(slower.threads(8, costs))
        slower.record(counts[-1], seconds)
    assert counts == [1, 1, 1, 8, 8]
    assert slower.settled and slower.threads(8, costs) == 1
    tiny = ThreadChoice()
    for seconds in (4e-6, 4e-6, 4e-6):                        # dispatch costs more than this
        tiny.record(tiny.threads(8, costs), seconds)
    assert tiny.threads(8, costs) == 1 and tiny.settled
    assert tiny.threads(4, costs) == 1 and not tiny.settled   # a new limit: measured again


@pytest.mark.parametrize("parallel, kept", [(0.95e-3, 1), (0.85e-3, 1), (0.75e-3, 8)])
def test_threads_that_barely_helped_are_not_kept(parallel, kept):
    """Threads whose best run took more than ``KEEP_THREADS`` of the best serial run settle
    the kernel on one thread."""
    from arrjit.backends.cpu.cost import ThreadChoice, ThreadCosts

    costs = ThreadCosts({2: 5e-6, 4: 6e-6, 8: 8e-6})
    choice = ThreadChoice()
    for seconds in (1e-3, 1e-3, 1e-3, parallel, parallel):
        choice.record(choice.threads(8, costs), seconds)
    assert choice.settled and choice.threads(8, costs) == kept


def test_default_threads_settle_per_kernel_and_keep_results(monkeypatch):
    """With the default ``parallel_threshold`` a kernel over ``MIN_PARALLEL_WORK`` compiles a
    worker (in the background, after its first call) and settles its thread count within its
    first runs on it; results never change."""
    from arrjit.backends.cpu.cost import MIN_PARALLEL_WORK, work

    arrjit.config.update("num_threads", 2)
    try:
        x = np.linspace(0.0, 1.0, MIN_PARALLEL_WORK // 2)
        f = arrjit.jit(lambda x: x * 3.0 - 1.0)
        (call,) = [c for seg in f.lower(x)._entry.rendered.runs for c in seg.calls]
        assert call.chunked and work(call.kernel) >= MIN_PARALLEL_WORK
        assert_same(f(x), x * 3.0 - 1.0)
        background.wait()
        for _ in range(6):
            assert_same(f(x), x * 3.0 - 1.0)
        assert call.choice.settled and call.choice.most == 2 and call.choice.count in (1, 2)
    finally:
        arrjit.config.update("num_threads", 0)



def test_a_threaded_kernel_runs_serially_until_its_worker_compiles(tmp_path):
    """With the default ``parallel_threshold`` a chunked kernel's first call compiles only
    the kernel and runs it on one thread; its worker compiles in the background, and the
    kernel runs on threads from then on. A split sum compiles its worker at once (its serial
    run goes through it). Results never change. A later process, the worker in the disk
    cache, loads both at once."""
    from arrjit.backends.cpu.cost import MIN_PARALLEL_WORK
    from arrjit.backends.cpu.steps import not_compiled

    arrjit.config.update("num_threads", 2)
    arrjit.config.update("cache_dir", str(tmp_path))
    compiler.clear()   # modules loaded before this test would have their workers
    gate = threading.Event()
    background.submit(gate.wait)   # the background thread busy until the test sets it
    try:
        x = np.linspace(0.0, 1.0, MIN_PARALLEL_WORK // 2)
        program = lambda x: (x * 3.0 - 1.0, anp.sum(x))  # noqa: E731
        f = arrjit.jit(program)
        mapped, summed = [c for run in f.lower(x)._entry.rendered.runs for c in run.calls]
        assert (mapped.chunked, summed.split) == (True, True)
        for _ in range(4):
            result = f(x)
            assert_same(result[0], x * 3.0 - 1.0)
            assert mapped.worker_pending and mapped.worker is not_compiled
            assert mapped.choice.serial == mapped.choice.parallel == []
        assert not summed.worker_pending and summed.worker is not not_compiled
        gate.set()
        background.wait()
        assert not mapped.worker_pending and mapped.worker is not not_compiled
        for _ in range(6):
            assert_same(f(x)[0], x * 3.0 - 1.0)
        assert mapped.choice.settled and mapped.choice.most == 2
        assert_same(f(x)[1], result[1])

        arrjit.clear_caches()   # as a later process finds the disk cache
        again = arrjit.jit(program)
        (mapped, _) = [c for run in again.lower(x)._entry.rendered.runs for c in run.calls]
        assert_same(again(x)[0], x * 3.0 - 1.0)
        assert not mapped.worker_pending and mapped.worker is not not_compiled
    finally:
        gate.set()
        arrjit.config.update("num_threads", 0)
        arrjit.config.update("cache_dir", None)
        compiler.clear()


def test_a_worker_that_fails_to_compile_leaves_its_kernel_on_one_thread(monkeypatch):
    """A worker whose background compile fails warns, naming its kernel, and the kernel
    keeps running on one thread with the same results."""
    from arrjit.backends.cpu import steps
    from arrjit.backends.cpu.cost import MIN_PARALLEL_WORK

    compile_entry = steps.compile_entry

    def failing_workers(loaded, name, args, stats, on_error=None):
        if name.endswith("_worker"):
            raise RuntimeError("no worker today")
        return compile_entry(loaded, name, args, stats, on_error)

    monkeypatch.setattr(steps, "compile_entry", failing_workers)
    arrjit.config.update("num_threads", 2)
    arrjit.config.update("disable_disk_cache", True)
    compiler.clear()
    try:
        x = np.linspace(0.0, 1.0, MIN_PARALLEL_WORK // 2)
        f = arrjit.jit(lambda x: x * 5.0 + 0.25)
        (call,) = [c for run in f.lower(x)._entry.rendered.runs for c in run.calls]
        with pytest.warns(RuntimeWarning, match=f"{call.rendered.name}.*no worker today"):
            assert_same(f(x), x * 5.0 + 0.25)
            background.wait()
        for _ in range(4):
            assert_same(f(x), x * 5.0 + 0.25)
        assert call.worker_pending and call.choice.parallel == []
    finally:
        arrjit.config.update("num_threads", 0)
        arrjit.config.update("disable_disk_cache", False)


def test_threaded_kernels_run_on_the_hot_path_and_settle_there():
    """A plan whose kernels may run on threads has a generated runner, so its calls take the
    hot path; the runner settles each kernel's thread count (a chunked map and a split sum)
    as the general path does, and results never change."""
    from arrjit.backends.cpu.cost import MIN_PARALLEL_WORK
    from arrjit.hotpath import NOT_FAST

    arrjit.config.update("num_threads", 2)
    try:
        x = np.linspace(0.0, 1.0, MIN_PARALLEL_WORK // 2)
        f = arrjit.jit(lambda x: (x * 3.0 - 1.0, anp.sum(x)))
        executable = f.lower(x)._entry.rendered
        calls = [c for run in executable.runs for c in run.calls]
        assert [(c.chunked, c.split) for c in calls] == [(True, False), (False, True)]
        f(x)
        background.wait()
        assert executable.fast_run is not None
        for _ in range(6):
            result = f._fast_hit((x,))
            assert result is not NOT_FAST
            assert_same(result[0], x * 3.0 - 1.0)
            np.testing.assert_allclose(result[1], np.sum(x), rtol=1e-12)
        assert all(c.choice.settled and c.choice.most == 2 for c in calls)
    finally:
        arrjit.config.update("num_threads", 0)



@pytest.mark.parametrize("native", [True, False])
def test_a_kernel_is_timed_on_threads_only_once_its_dispatch_is_ready(monkeypatch, native):
    """Before a kernel's first timed run on threads, what that first run would set up besides
    the kernel (its native parallel entry, or the helper threads) is ready, so the thread
    count is chosen on the kernel's own time."""
    from arrjit.backends.cpu import dispatch, steps
    from arrjit.backends.cpu.cost import MIN_PARALLEL_WORK, ThreadCosts

    events = []
    prepare = steps.prepare_chunks

    def spy_prepare(worker, args, count):
        prepare(worker, args, count)
        bound = dispatch.parallel_entry(worker, args + [1, 1, threads.chunk_state(1, 2), 0, 2,
                                                        threads.QUIET_BELL])
        helpers = threads._helpers is not None and threads._helpers.size >= 1
        events.append(("ready", bound is not None or helpers))

    monkeypatch.setattr(steps, "prepare_chunks", spy_prepare)
    monkeypatch.setattr(steps, "measured_costs", lambda: ThreadCosts({2: 1e-9}))
    arrjit.config.update("num_threads", 2)
    arrjit.config.update("native_threads", native)
    dispatch.forget_entries()
    try:
        x = np.linspace(0.0, 1.0, MIN_PARALLEL_WORK // 2)
        f = arrjit.jit(lambda x: (x * 3.0 - 1.0, anp.sum(x)))
        calls = [c for run in f.lower(x)._entry.rendered.runs for c in run.calls]
        for call in calls:
            record = call.choice.record
            monkeypatch.setattr(call.choice, "record", lambda t, s, record=record:
                                (events.append(("timed", t)), record(t, s)))
        f(x)
        background.wait()
        for _ in range(6):
            result = f(x)
        assert_same(result[0], x * 3.0 - 1.0)
        parallel = [k for k, e in enumerate(events) if e[0] == "timed" and e[1] > 1]
        assert len(parallel) == 2 * len(calls)
        assert all(events[k - 1] == ("ready", True) for k in parallel)
    finally:
        arrjit.config.update("num_threads", 0)
        arrjit.config.update("native_threads", True)
        dispatch.forget_entries()

def test_a_chunk_error_on_the_hot_path_reaches_the_caller(two_threads_either_dispatch):
    """A chunk that raises, its kernel run from the generated runner, raises NumPy's error
    in the caller; the next call runs."""
    base = np.full(50_000, 2, dtype=np.int64)
    exponent = np.ones(50_000, dtype=np.int64)
    exponent[40_000] = -1
    power = arrjit.jit(lambda a, b: a ** b + 1)
    assert _chunked(power, base, exponent) == [True]
    assert_same(power(base, np.ones_like(exponent)), np.full(50_000, 3, dtype=np.int64))
    assert power.lower(base, exponent)._entry.rendered.fast_run is not None
    with pytest.raises(ValueError, match="negative integer powers"):
        power(base, exponent)
    assert_same(power(base, np.ones_like(exponent)), np.full(50_000, 3, dtype=np.int64))


def test_more_threads_start_from_less_work():
    """A kernel whose work lies between the thresholds of two and thirteen threads compiles
    a worker only where thirteen may run it."""
    from arrjit.backends.cpu.cost import min_parallel_work, work

    x = np.linspace(0.0, 1.0, 200_000)
    chunked = {}
    for count in (2, 13):
        arrjit.config.update("num_threads", count)
        try:
            f = arrjit.jit(lambda x: x * 3.0 - 1.0)
            (call,) = [c for run in f.lower(x)._entry.rendered.runs for c in run.calls]
            assert min_parallel_work(13) <= work(call.kernel) < min_parallel_work(2)
            chunked[count] = call.chunked
            assert_same(f(x), x * 3.0 - 1.0)
        finally:
            arrjit.config.update("num_threads", 0)
    assert chunked == {2: False, 13: True}


COLUMN_REDUCTIONS = {
    "sum": lambda ns, x: ns.sum(x, axis=0),
    "max": lambda ns, x: ns.max(x, axis=0),
    "min": lambda ns, x: ns.min(x, axis=0),
    "norm": lambda ns, x: ns.sqrt(ns.sum(x * x, axis=0)),
    "any": lambda ns, x: ns.any(x > 2.5, axis=0),
    "leading two": lambda ns, x: ns.sum(x.reshape(x.shape[0] // 4, 4, x.shape[1]), axis=0),
    "sum and max": lambda ns, x: (ns.sum(x, axis=0), ns.max(x, axis=0)),
}


@pytest.mark.parametrize("shape", [(3000, 7), (516, 2000)])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
@pytest.mark.parametrize("name", sorted(COLUMN_REDUCTIONS))
def test_column_reductions_on_threads_are_numpy_s_bit_for_bit(two_threads_either_dispatch,
                                                               shape, dtype, name):
    """A reduction over leading axes runs in column order. On threads, one whose folds are
    exact in any grouping (extremes, logic, integer sums) splits its rows (per-chunk partials
    for every column, folded in chunk order); a float sum keeps NumPy's row-by-row order by
    splitting its columns into one slab a thread. Either way the result is NumPy's exactly."""
    reduce = COLUMN_REDUCTIONS[name]
    x = (np.random.default_rng(3).standard_normal(shape) * 3).astype(dtype)
    f = arrjit.jit(lambda x: reduce(anp, x))
    call = [c for seg in f.lower(x)._entry.rendered.runs for c in seg.calls
            if c.kernel.reductions][0]
    assert call.rendered.column_order
    float_sum = dtype == np.float64 and name in ("sum", "norm", "leading two", "sum and max")
    if float_sum:
        assert call.chunked and not call.split
    else:
        assert call.split and call.splitting.rows
        assert call.splitting.slots == call.kernel.sizes[0] and call.splitting.extent > 1
    got, expected = f(x), reduce(np, x)
    for g, e in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, expected))):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
