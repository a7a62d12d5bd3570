"""The namespace table (``test_namespace.CASES``: every public function) through the CUDA
backend, against NumPy."""
import warnings

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp

from test_namespace import CASES, _inputs, _reference, check_table_results

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("dtype,three_d", [("float64", False), ("float64", True),
                                           ("float32", False), ("int32", True),
                                           ("uint8", False), ("bool", False)])
def test_table_matches_numpy_on_cuda(dtype, three_d):
    x, y = _inputs(dtype, three_d)
    valid = []
    for name in sorted(CASES):
        ref = _reference(name, x, y)
        outs = ref if isinstance(ref, tuple) else (ref,)
        # the CUDA backend compiles no complex values yet (it says so: test_cuda_backend)
        if not (isinstance(ref, Exception) or
                any(np.asarray(o).dtype == np.float16 or np.asarray(o).dtype.kind == "c"
                    for o in outs)):
            valid.append(name)
    f = arrjit.jit(lambda x, y: {n: CASES[n](anp, x, y) for n in valid}, device="cuda")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        results = f(x, y)
    check_table_results(results, valid, x, y, dtype, to_host=arrjit.device_get)
