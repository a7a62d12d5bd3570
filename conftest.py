"""The test processes' environment, set before arrjit is imported; the README's ``python``
code blocks run as a test (Sybil; the guide's are in docs/).

The whole package is imported before pytest collects its doctests. Collecting
``arrjit/x/y.py`` under ``--import-mode=importlib`` imports the parent package first and then
runs the file as a new module even when the parent's import has just loaded it: code bound to
the first copy (a backend imported by its package) then disagrees with code that imports the
second (isinstance checks, module state such as the buffer pool). With the package and the
CPU backend (which the package imports on first use) already in ``sys.modules``, collection
reuses their modules.
"""
import atexit
import os
import shutil
import tempfile

# Tests never touch the user's cache: one private temporary cache per test process. Under
# pytest-xdist the workers inherit the controller's environment, so the marker says the
# directory was ours to replace: each worker gets a fresh one (compile counts need it).
if "ARRJIT_CACHE_DIR" not in os.environ or os.environ.get("ARRJIT_TEST_PRIVATE_CACHE"):
    os.environ["ARRJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="arrjit-test-cache-")
    os.environ["ARRJIT_TEST_PRIVATE_CACHE"] = "1"
    atexit.register(shutil.rmtree, os.environ["ARRJIT_CACHE_DIR"], ignore_errors=True)
# The tests describe the default entry points (arrjit's wrapper, native entries); a run with
# ARRJIT_TEST_NATIVE_ENTRIES=0 describes numba's own (tests/test_native_entries.py starts one).
os.environ.pop("ARRJIT_NATIVE_ENTRIES", None)
if os.environ.get("ARRJIT_TEST_NATIVE_ENTRIES"):
    os.environ["ARRJIT_NATIVE_ENTRIES"] = os.environ["ARRJIT_TEST_NATIVE_ENTRIES"]
# Test processes already fill the cores (pytest-xdist): they compile without compile workers,
# except the tests of the workers themselves (tests/test_compile_workers.py).
os.environ.setdefault("ARRJIT_COMPILE_WORKERS", "0")
# Every graph that enters the passes is checked (SSA form, order, avals): ``core.verify``.
os.environ.setdefault("ARRJIT_VERIFY_IR", "1")

from sybil import Sybil  # noqa: E402
from sybil.parsers.myst import PythonCodeBlockParser  # noqa: E402

import arrjit  # noqa: E402,F401
import arrjit.backends.cpu  # noqa: E402,F401

pytest_collect_file = Sybil(parsers=[PythonCodeBlockParser()], patterns=["README.md"]).pytest()
