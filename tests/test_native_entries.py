"""Native entries (``backends.cpu.native``): compiled functions stored with their own CPython
wrapper, loaded by a later process without importing numba."""
import json
import os
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import arrjit
from arrjit.runtime import cache as disk
from arrjit.runtime import compile as compiler
from arrjit.backends.cpu import entries
from arrjit.backends.cpu.native import abi, load, store
from arrjit.backends.cpu.native.objects import read_symbols

SOURCE = textwrap.dedent('''
    import numpy as np
    from numba import njit
    CACHE = False

    @njit(nogil=True, no_cfunc_wrapper=True, cache=CACHE)
    def scale(out, a, factor):
        if a.shape[0] and a[0] < 0:
            raise ValueError("the first value must not be negative")
        for i in range(a.shape[0]):
            out[i] = a[i] * factor

    @njit(nogil=True, no_cfunc_wrapper=True, cache=CACHE)
    def positive(a, at):
        return a[at] > 0

    @njit(nogil=True, no_cfunc_wrapper=True, cache=CACHE)
    def total(a):
        s = 0
        for v in np.nditer(a):
            s += v.item()
        return s

    @njit(nogil=True, no_cfunc_wrapper=True, cache=CACHE)
    def allocates(a):
        return np.zeros(3)[0] + a[0]

    @njit(nogil=True, no_cfunc_wrapper=True, cache=CACHE)
    def allocates_and_stores(out, a):
        out[0] = np.zeros(3)[0] + a[0]
''')


@pytest.fixture
def private_cache(tmp_path):
    arrjit.config.update("cache_dir", str(tmp_path))
    compiler.clear()
    yield tmp_path
    arrjit.config.update("cache_dir", None)
    compiler.clear()


def _entry(name, args):
    loaded = compiler.load_module(SOURCE, {"test": "native"})
    return entries.entry_point(loaded, name, args)


def _fresh_process_entry(name, args):
    """The entry as a new process gets it: this process's module table forgotten."""
    compiler.clear()
    return _entry(name, args)


def test_an_entry_compiled_with_the_disk_cache_is_reloaded_natively(private_cache):
    a, out = np.arange(1.0, 6.0), np.empty(5)
    compiled = _entry("scale", [out, a, 3])
    assert (compiled.compiled, compiled.disk_hits) == (1, 0)
    assert len(list(private_cache.glob("*/native/*"))) == 1
    native = _fresh_process_entry("scale", [out, a, 3])
    assert (native.compiled, native.disk_hits) == (0, 1)
    assert load.is_native(native.entry) and native.entry.__name__ == "scale"
    assert load.is_native(compiled.entry)    # numba compiled it without its own wrapper
    assert native.entry(out, a, 3) is None
    np.testing.assert_array_equal(out, a * 3)
    shorter = np.empty(2)             # shapes are read from the arrays on every call
    native.entry(shorter, np.array([4.0, 5.0]), 2)
    np.testing.assert_array_equal(shorter, [8.0, 10.0])


def test_an_error_status_raises_what_numba_raises(private_cache):
    a, out = np.array([-1.0, 2.0]), np.empty(2)
    _entry("scale", [out, a, 2])
    native = _fresh_process_entry("scale", [out, a, 2])
    assert native.disk_hits == 1 and load.is_native(native.entry)
    with pytest.raises(ValueError, match="must not be negative"):
        native.entry(out, a, 2)
    with pytest.raises(TypeError):          # a wrong argument count: numba's own message
        native.entry(out, a)


def test_boolean_and_integer_results_are_boxed(private_cache):
    a = np.array([3, -1, 4], np.int64)
    _entry("positive", [a, 0])
    _entry("total", [a])
    positive = _fresh_process_entry("positive", [a, 0]).entry
    total = _entry("total", [a]).entry
    assert load.is_native(positive) and load.is_native(total)
    assert positive(a, 0) is True and positive(a, 1) is False
    assert total(a) == 6 and type(total(a)) is int


def test_a_loop_driver_is_called_natively_and_raises_numpy_s_error_from_the_operands():
    """A driver returns whether the final carries lie in their second buffers, a bool that
    arrjit's wrapper boxes. On an error status numba's entry raises the error, running the
    loop again from the operands (the failed run had changed its copies of the carries)."""
    from arrjit.backends.cpu.loops import LoopRun
    from arrjit.lax import fori_loop

    def gather_sums(x, c, n):
        return fori_loop(0, n, lambda i, c: (c * 2.0).at[0].add(x[i * 3]), c)

    jitted = arrjit.jit(gather_sums, static_argnums=2)
    x, c = np.arange(10.0), np.ones(3)
    want = np.ones(3)
    for steps in (1, 2, 3, 4):
        want = want * 2.0
        want[0] += x[(steps - 1) * 3]
        np.testing.assert_array_equal(jitted(x, c, steps), want)
    (loop,) = [r for r in jitted.lower(x, c, 5)._entry.rendered.runs if isinstance(r, LoopRun)]
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 10"):
        jitted(x, c, 5)
    assert load.is_native(loop._driver) == entries.native_in_use()
    np.testing.assert_array_equal(c, np.ones(3))


def test_code_that_needs_numba_s_runtime_is_not_stored(private_cache):
    a = np.ones(2)
    _entry("allocates", [a])
    assert not list(private_cache.glob("*/native/*"))
    reloaded = _fresh_process_entry("allocates", [a])   # from numba's own cache
    assert reloaded.compiled == 0 and not load.is_native(reloaded.entry)
    assert reloaded.entry(a) == 1.0


def test_an_entry_arrjit_wraps_but_cannot_store_is_kept_in_numba_s_cache(private_cache):
    """Compiled without numba's wrapper and called through arrjit's; its code needs numba's
    runtime, so numba's cache keeps it for the next process (one compile, no lock wait),
    which calls numba's code through arrjit's wrapper too (a thread worker kept there is
    then dispatched natively)."""
    a, out = np.full(2, 3.0), np.empty(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = _entry("allocates_and_stores", [out, a])
    assert compiled.compiled == 1 and load.is_native(compiled.entry)
    assert compiled.entry(out, a) is None and out[0] == 3.0
    marked, = private_cache.glob("*/native/*")
    assert load.load(marked, lambda *args: None) is None   # a mark, not code
    reloaded = _fresh_process_entry("allocates_and_stores", [out, a])
    assert (reloaded.compiled, reloaded.disk_hits) == (0, 1)
    assert load.is_native(reloaded.entry)
    out[0] = 0.0
    reloaded.entry(out, a)
    assert out[0] == 3.0


def _older_format(record: bytes) -> bytes:
    old = pickle.loads(record)
    old["format"] = store.FORMAT - 1
    return pickle.dumps(old)


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "foreign", "older format"])
def test_a_damaged_native_entry_is_recompiled_and_stored_again(private_cache, damage):
    a, out = np.arange(3.0), np.empty(3)
    _entry("scale", [out, a, 2])
    stored, = private_cache.glob("*/native/*")
    intact = stored.read_bytes()
    data = {"flipped byte": intact[:len(intact) // 2] + bytes([intact[len(intact) // 2] ^ 255])
            + intact[len(intact) // 2 + 1:],
            "truncated": intact[:len(intact) // 3], "foreign": b"not a record",
            "older format": _older_format(intact)}[damage]
    stored.write_bytes(data)
    with pytest.raises(load.DamagedEntry, match="format" if damage == "older format" else None):
        load.load(stored, print)
    with pytest.warns(disk.CacheWarning, match="recompiling"):
        repaired = _fresh_process_entry("scale", [out, a, 2])
    assert (repaired.compiled, repaired.disk_hits) == (1, 0)
    repaired.entry(out, a, 2)
    np.testing.assert_array_equal(out, a * 2)
    native = _fresh_process_entry("scale", [out, a, 2])
    assert native.disk_hits == 1 and load.is_native(native.entry)


def test_a_failure_to_store_warns_and_the_compiled_entry_still_runs(private_cache,
                                                                   monkeypatch):
    def broken(*args):
        raise RuntimeError("no space for wrappers")

    monkeypatch.setattr(store, "store", broken)
    a, out = np.arange(3.0), np.empty(3)
    with pytest.warns(disk.CacheWarning, match="no space for wrappers"):
        compiled = _entry("scale", [out, a, 2])
    compiled.entry(out, a, 2)
    np.testing.assert_array_equal(out, a * 2)
    marked, = private_cache.glob("*/native/*")         # numba's cache keeps it instead
    assert load.load(marked, lambda *args: None) is None
    assert _fresh_process_entry("scale", [out, a, 2]).disk_hits == 1


def test_eviction_and_repair_remove_an_entry_s_native_files(private_cache):
    a, out = np.arange(3.0), np.empty(3)
    _entry("scale", [out, a, 2])
    loaded = compiler.load_module(SOURCE, {"test": "native"})
    stored, = private_cache.glob("*/native/*")
    entries = disk._all_entries(private_cache)
    assert any(stored in files for _, _, files in entries)
    loaded.cache.remove_compiled(loaded.entry)
    assert not stored.exists()


def test_numba_signatures_are_numba_s_typeof():
    """Arrays are typed without numba's typeof (which imports numpy.ma), to the same types."""
    from numba import typeof

    readonly = np.zeros(3)
    readonly.flags.writeable = False
    args = [np.zeros(3), np.zeros((2, 3)), np.zeros((2, 3)).T, np.zeros((4, 4))[::2],
            np.zeros(()), np.zeros(3, bool), np.zeros(3, np.complex64), np.zeros(2, "M8[s]"),
            np.zeros(2, object), readonly, 3, np.int32(2), 2.5, True]
    assert compiler.numba_signature(args) == tuple(typeof(a) for a in args)
    with pytest.raises(Exception, match="MaskedArray"):
        compiler.numba_signature([np.ma.zeros(3)])


def test_the_abi_describes_only_what_the_wrapper_reads():
    assert abi.describe([np.zeros((2, 3))[:, :2]]) is None          # not C-contiguous
    assert abi.describe([np.zeros(2, object)]) is None
    assert abi.describe([1.5]) is None and abi.describe([True]) is None
    assert abi.describe([np.zeros(()), np.int64(2)]) == (abi.ArrayArg(8, 0), abi.IntArg())
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    assert abi.signature_key([readonly]) != abi.signature_key([np.zeros(3)])


def test_the_object_reader_lists_what_the_wrapper_defines_and_needs():
    ir = abi.render_wrapper("some_kernel", [abi.ArrayArg(8, 1), abi.IntArg()], "bool", True)
    symbols = read_symbols(store.compile_wrapper(ir))
    assert abi.WRAPPER_NAME in symbols.defined and abi.FALLBACK_GLOBAL in symbols.defined
    assert {"some_kernel", "PyEval_SaveThread", "PyObject_Vectorcall"} <= symbols.undefined
    assert read_symbols(b"\xcf\xfa\xed\xfe" + bytes(60)) is None   # Mach-O: not read


WARM_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import arrjit, arrjit.numpy as anp
    x = np.linspace(-2, 2, 1001).reshape(7, 143)
    f = arrjit.jit(lambda x: (anp.tanh(x) * 2 + anp.exp(-x * x)).sum(axis=1))
    out = f(x)
    # a loop: its driver returns which buffers hold the final carries, a bool
    smooth = arrjit.jit(lambda x: arrjit.lax.fori_loop(
        0, 3, lambda i, c: (c[0] * 0.5 + x, c[1] + i), (x, 0)))
    smoothed, steps = smooth(x)
    out = out + smoothed.sum(axis=1) + steps
    numba_imported = "numba" in sys.modules
    transforms_imported = "arrjit.autodiff.transforms" in sys.modules
    # threaded: the helpers' park and the workers, which call kernels inside ``try``, are
    # native too (the wrapper's exception slot starts NULL, or ``try`` sees an error)
    arrjit.config.update("parallel_threshold", 1000)
    arrjit.config.update("num_threads", 2)
    y = np.linspace(-1, 1, 150000).reshape(300, 500)
    g = arrjit.jit(lambda y: (anp.exp(y).sum(), (y * 2).sum(axis=0), anp.tanh(y) + 1))
    total, columns, mapped = g(y)
    numba_imported = [numba_imported, "numba" in sys.modules]
    from arrjit.backends.cpu import dispatch
    dispatched = any(entry is not None for _, entry in dispatch._entries.values())
    print(json.dumps({"out": out.tolist(), "numba": numba_imported,
                      "transforms": transforms_imported,
                      "disk_hits": f.cache_info().disk_hits + g.cache_info().disk_hits,
                      "threaded": [float(total), columns.tolist(), float(mapped.sum())],
                      "layer": dispatch.threading_layer(), "dispatched": dispatched}))
""")


def test_a_disk_warm_process_runs_without_importing_numba(tmp_path):
    """Kernels and a loop's driver; then threaded kernels, their helpers and workers native
    too: the same results as compiled. Neither process imports differentiation's
    transformations (unused here)."""
    env = dict(os.environ, ARRJIT_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", WARM_CHILD], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert runs[0]["numba"] == [True, True] and runs[0]["disk_hits"] == 0
    assert runs[1]["numba"] == [False, False] and runs[1]["disk_hits"] >= 1
    assert runs[1]["out"] == runs[0]["out"] and runs[1]["threaded"] == runs[0]["threaded"]
    assert not runs[0]["transforms"] and not runs[1]["transforms"]
    # numba's threading layer, loaded without numba, where it is a safe one
    assert runs[1]["layer"] == runs[0]["layer"]
    assert runs[1]["dispatched"] == runs[0]["dispatched"] == bool(runs[0]["layer"])


def test_untested_numba_versions_get_numba_s_own_entries(private_cache, monkeypatch):
    """The wrapper reads numba's internals: with a numba outside ``TESTED_NUMBA`` every entry
    is numba's own, and kernels still run."""
    from arrjit.backends.cpu import native

    monkeypatch.setattr(disk, "installed_version", lambda package: "0.99.0")
    native.numba_tested.cache_clear()
    try:
        assert not native.numba_tested()
        a, out = np.arange(1.0, 6.0), np.empty(5)
        compiled = _entry("scale", [out, a, 3])
        assert not load.is_native(compiled.entry)
        assert not list(private_cache.glob("*/native/*"))
        compiled.entry(out, a, 3)
        np.testing.assert_array_equal(out, a * 3)
        f = arrjit.jit(lambda x: x * 2.0 + 1.0)
        np.testing.assert_array_equal(f(a), a * 2.0 + 1.0)
    finally:
        monkeypatch.undo()
        native.numba_tested.cache_clear()
    assert native.numba_tested()     # the installed one is tested


def test_entry_tests_pass_with_native_entries_off():
    """The tests that compile, cache, thread and call entries, with numba's entries only
    (compile workers hand over native entries: without them the caller compiles alone)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, ARRJIT_TEST_NATIVE_ENTRIES="0")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         "-m", "not native_entries",
         "tests/test_disk_cache.py", "tests/test_threads.py", "tests/test_pool.py",
         "tests/test_tiers.py", "tests/test_api.py",
         "tests/test_compile_workers.py::test_without_native_entries_no_job_is_handed_out",
         "tests/test_nested_loops.py::"
         "test_a_driver_raising_midway_leaves_its_operands_and_runs_again"],
        cwd=root, env=env, capture_output=True, text=True, timeout=900)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in summary and "skipped" not in summary, summary


RAISING_CHILD = textwrap.dedent("""
    import json
    import numpy as np
    import arrjit
    arrjit.config.update("parallel_threshold", 1000)
    arrjit.config.update("num_threads", 2)
    x = np.linspace(-1, 1, 20000).reshape(40, 500)
    f = arrjit.jit(lambda x, i: x * 2.0 + x[i])    # checks a position: its worker may raise
    out = f(x, 3)
    try:
        f(x, 40)
        error = None
    except IndexError as e:
        error = str(e)
    from arrjit.backends.cpu import dispatch
    from arrjit.backends.cpu.native import load
    workers = [c.worker for seg in f.lower(x, 3)._entry.rendered.runs
               for c in getattr(seg, "calls", []) if c.chunked or c.split]
    print(json.dumps({"sum": float(out.sum()), "error": error,
                      "native": [load.is_native(w) for w in workers],
                      "dispatched": [dispatch.parallel_entry(w, []) is not None
                                     for w in workers] if dispatch.threading_layer() else None,
                      "disk_hits": f.cache_info().disk_hits}))
""")


def test_a_worker_kept_in_numba_s_cache_is_dispatched_natively_in_a_warm_process(tmp_path):
    """A thread worker whose kernel may raise needs numba's runtime, so numba's cache keeps it;
    a later process calls it through arrjit's wrapper all the same, so numba's threading layer
    runs it (not helper threads that take the GIL per chunk), and it raises NumPy's error."""
    env = dict(os.environ, ARRJIT_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", RAISING_CHILD], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert runs[1]["disk_hits"] >= 1
    assert runs[0]["sum"] == runs[1]["sum"]
    assert runs[0]["error"] == runs[1]["error"] == \
        "index 40 is out of bounds for axis 0 with size 40"
    assert runs[0]["native"] == runs[1]["native"] and all(runs[1]["native"])
    assert runs[1]["dispatched"] == runs[0]["dispatched"]
