"""Compile workers: processes that compile a program's uncached kernels into the disk cache
while the caller compiles the rest; the caller loads what they stored. Results never depend
on them: a job that fails in a worker is compiled (and its error raised) by the caller."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.backends.cpu.runner import CpuExecutable, compile_ahead, example_buffers
from arrjit.backends.cpu.steps import compile_in_worker
from arrjit.passes.lower import lower
from arrjit.plan import build_plan
from arrjit.runtime import cache as disk
from arrjit.runtime import workers
from arrjit.runtime.compile import CompileStats

from helpers import assert_same


def three_kernels(x):
    """Three kernels no other test compiles (each sort ends one)."""
    a = anp.sort(anp.cos(x) * 1.25 - 0.5)
    b = anp.sort(anp.sin(a) * 0.75 + 2.5)
    return anp.arctan(b) * 3.5


def numpy_three_kernels(x):
    a = np.sort(np.cos(x) * 1.25 - 0.5)
    return np.arctan(np.sort(np.sin(a) * 0.75 + 2.5)) * 3.5


@pytest.fixture
def one_worker(tmp_path):
    arrjit.config.update("cache_dir", str(tmp_path))
    arrjit.config.update("compile_workers", 1)
    pool = workers.compile_workers()
    assert pool.drain(timeout=300) and pool.warm   # started: numba imported, compiler ready
    yield pool
    arrjit.config.update("compile_workers", 0)
    arrjit.config.update("cache_dir", "")
    arrjit.clear_caches()


def _uncompiled_executable(fn, *args):
    jitted = arrjit.jit(fn)
    _, leaves = jitted._key(args)
    graph = jitted._trace(args, leaves)[0]
    return CpuExecutable(build_plan(lower(graph)))


def test_workers_compile_every_kernel_and_the_caller_loads_them(one_worker):
    x = np.linspace(-2, 2, 300)
    executable = _uncompiled_executable(three_kernels, x)
    examples = example_buffers(executable.plan)
    assert compile_ahead(executable.runs, examples)
    assert one_worker.drain(timeout=300)
    stats = CompileStats()
    executable.compile(stats)
    assert stats.compiles == 0 and stats.disk_hits == 3 and stats.kernels == 3
    assert_same(executable.run([x])[0], numpy_three_kernels(x), rtol=1e-13)
    # stored now: nothing is left for the workers
    assert not compile_ahead(executable.runs, examples)


def test_a_program_compiled_alongside_workers_matches_numpy(one_worker):
    x = np.linspace(-3, 3, 257)
    f = arrjit.jit(three_kernels)
    assert_same(f(x), numpy_three_kernels(x), rtol=1e-13)
    info = f.cache_info()
    assert info.kernels == 3 and info.compiles + info.disk_hits >= 3
    assert one_worker.drain(timeout=300)


def test_a_job_that_fails_in_a_worker_is_dropped_and_the_workers_go_on(one_worker):
    one_worker.submit(compile_in_worker, "this is not python", [("f", [], True)],
                      str(disk.root_dir()))
    assert one_worker.drain(timeout=300)
    x = np.linspace(0, 1, 100)
    executable = _uncompiled_executable(three_kernels, x)
    assert compile_ahead(executable.runs, example_buffers(executable.plan))
    assert one_worker.drain(timeout=300)
    stats = CompileStats()
    executable.compile(stats)
    assert stats.compiles == 0 and stats.disk_hits == 3


def test_no_workers_when_configured_off_or_for_a_single_kernel(tmp_path):
    """Off by configuration (the tests' default), and a one-kernel program compiles alone.
    (A program of a few kernels does not wait for workers to start: they start for the
    programs that come later, ``MODULES_TO_START_WORKERS``.)"""
    arrjit.config.update("cache_dir", str(tmp_path))
    try:
        assert workers.worker_count() == 0 and workers.compile_workers() is None
        arrjit.config.update("compile_workers", 2)
        single = _uncompiled_executable(lambda x: anp.tan(x) * 0.5 - 7.0, np.ones(10))
        assert not compile_ahead(single.runs, example_buffers(single.plan))
    finally:
        arrjit.config.update("compile_workers", 0)
        arrjit.config.update("cache_dir", "")


def test_without_the_disk_cache_nothing_is_handed_to_the_workers(one_worker):
    """Workers hand over through the disk cache: without it there is nothing to load."""
    several = _uncompiled_executable(three_kernels, np.ones(10))
    examples = example_buffers(several.plan)
    arrjit.config.update("disable_disk_cache", True)
    try:
        assert not compile_ahead(several.runs, examples)
    finally:
        arrjit.config.update("disable_disk_cache", False)
    assert compile_ahead(several.runs, examples)
    assert one_worker.drain(timeout=300)


def test_without_native_entries_no_job_is_handed_out(tmp_path):
    """Workers hand over native entries; with numba's own entries (``native_entries`` off, or
    a numba the wrapper was not tested with) the caller compiles alone."""
    x = np.linspace(-1, 1, 100)
    executable = _uncompiled_executable(three_kernels, x)
    examples = example_buffers(executable.plan)
    arrjit.config.update("cache_dir", str(tmp_path))
    arrjit.config.update("compile_workers", 1)
    native = arrjit.config.native_entries
    try:
        arrjit.config.update("native_entries", False)
        assert not compile_ahead(executable.runs, examples)
    finally:
        arrjit.config.update("native_entries", native)
        arrjit.config.update("compile_workers", 0)
        arrjit.config.update("cache_dir", "")
