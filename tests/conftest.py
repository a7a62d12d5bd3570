import os
import tempfile
import warnings

# Tests never touch the user's cache: one private temporary cache for the whole session.
os.environ.setdefault("ARRJIT_CACHE_DIR", tempfile.mkdtemp(prefix="arrjit-test-cache-"))

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _quiet_numpy():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
