import atexit
import os
import shutil
import tempfile
import warnings

# Tests never touch the user's cache: one private temporary cache per test process. Under
# pytest-xdist the workers inherit the controller's environment, so the marker says the
# directory was ours to replace: each worker gets a fresh one (compile counts need it).
if "ARRJIT_CACHE_DIR" not in os.environ or os.environ.get("ARRJIT_TEST_PRIVATE_CACHE"):
    os.environ["ARRJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="arrjit-test-cache-")
    os.environ["ARRJIT_TEST_PRIVATE_CACHE"] = "1"
    atexit.register(shutil.rmtree, os.environ["ARRJIT_CACHE_DIR"], ignore_errors=True)
# The tests describe the default entry points (arrjit's wrapper, native entries); the tests of
# numba's own entries and cache set ARRJIT_NATIVE_ENTRIES=0 in their processes.
os.environ.pop("ARRJIT_NATIVE_ENTRIES", None)
# Test processes already fill the cores (pytest-xdist): they compile without compile workers,
# except the tests of the workers themselves (tests/test_compile_workers.py).
os.environ.setdefault("ARRJIT_COMPILE_WORKERS", "0")
# Every graph that enters the passes is checked (SSA form, order, avals): ``core.verify``.
os.environ.setdefault("ARRJIT_VERIFY_IR", "1")

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _quiet_numpy():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.fixture
def two_threads_from_1000_elements():
    """Kernels of 1000 elements and more run on two threads (full reductions split)."""
    import arrjit
    from arrjit.config import OPTIONS

    arrjit.config.update("parallel_threshold", 1000)
    arrjit.config.update("num_threads", 2)
    yield
    for name in ("parallel_threshold", "num_threads", "spin_wait_us", "native_threads"):
        arrjit.config.update(name, OPTIONS[name].default)


@pytest.fixture(params=["native", "helpers"])
def two_threads_either_dispatch(request, two_threads_from_1000_elements):
    """As ``two_threads_from_1000_elements``, the chunks dispatched on numba's threading layer
    (where this process has one) or by arrjit's Python helper threads."""
    import arrjit
    from arrjit.backends.cpu import dispatch

    arrjit.config.update("native_threads", request.param == "native")
    dispatch.forget_entries()
    yield request.param
    dispatch.forget_entries()


@pytest.fixture
def two_helper_threads(two_threads_from_1000_elements):
    """As ``two_threads_from_1000_elements``, on arrjit's Python helper threads."""
    import arrjit
    from arrjit.backends.cpu import dispatch

    arrjit.config.update("native_threads", False)
    dispatch.forget_entries()
    yield
    dispatch.forget_entries()
