import warnings

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
