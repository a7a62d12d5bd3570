"""The 32 workloads of ``examples/science_suite.py`` at test sizes, through ``jit``, against
NumPy running the same programs; and the fixes they found, each on its own."""
import copy

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.errors import ConcretizationTypeError
from helpers import assert_same

import science_suite as suite      # examples/ is on pytest's pythonpath


TRACEABLE = sorted(set(suite.SUITE) - {"run_lengths"})


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


def test_the_suite_has_its_32_workloads():
    assert len(suite.SUITE) == 32


@pytest.mark.parametrize("name", TRACEABLE)
def test_workload_matches_numpy(name):
    w = suite.SUITE[name]
    args = w.make_test_args()
    want = w.program(suite.NUMPY, *copy.deepcopy(args))
    got = arrjit.jit(w.bind(suite.arrjit_arrays()), static_argnums=w.static)(*args)
    assert len(_leaves(got)) == len(_leaves(want))
    for g, v in zip(_leaves(got), _leaves(want)):
        v = np.asarray(v)
        rtol = 1e-6 if v.dtype in (np.float32, np.complex64) else 1e-12
        if v.dtype.kind in "fc":
            np.testing.assert_allclose(np.asarray(g), v, rtol=rtol, atol=rtol * 1e-3,
                                       equal_nan=True)
            assert np.asarray(g).dtype == v.dtype
        else:
            assert_same(g, v)


def test_run_lengths_depend_on_the_values_so_jit_refuses_them_by_name():
    """As in JAX: ``flatnonzero`` has as many entries as there are runs. The same program
    runs eagerly through ``arrjit.numpy`` outside ``jit``."""
    w = suite.SUITE["run_lengths"]
    (labels,) = w.make_test_args()
    with pytest.raises(ConcretizationTypeError, match=r"depends on the values.*size="):
        arrjit.jit(w.bind(suite.arrjit_arrays()))(labels)
    for g, v in zip(w.program(suite.arrjit_arrays(), labels), w.program(suite.NUMPY, labels)):
        assert_same(g, v)


def test_a_gather_in_a_transposed_layout_feeds_the_next_kernel():
    """NumPy answers ``a[:, idx]`` in a transposed memory layout; the kernel reading it
    assumed C order (``NotImplementedError: incompatible shape for array``)."""
    e = np.arange(300.0).reshape(2, 150) * (1 + 1j)
    idx = np.arange(21)

    def f(e, i):
        x = e[:, i * 2 + idx]
        return x, anp.sum(x * 2)

    got = arrjit.jit(f)(e, 3)
    assert_same(got[0], e[:, 6 + idx])
    assert_same(got[1], np.sum(e[:, 6 + idx] * 2))


@pytest.mark.parametrize("index", [(slice(None), slice(1, 3)), (np.array([0, 0, 2]),)])
@pytest.mark.parametrize("mode", ["add", "multiply", "min", "max"])
def test_an_update_wider_than_its_array_combines_in_the_wider_dtype(index, mode):
    """``u[i] += v`` with float32 ``u`` and float64 ``v`` adds in float64 and rounds once, in
    NumPy and in JAX's ``.at[i].add``; casting ``v`` first rounded twice (1 ulp off)."""
    u = np.random.default_rng(0).random((3, 4)).astype(np.float32) + 0.5
    v = np.random.default_rng(1).random((3, 2) if len(index) == 2 else (3, 4)) * 1.3
    want = u.astype(np.float64)
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
    ufunc[mode].at(want, index, v)
    got = arrjit.jit(lambda u, v: getattr(u.at[index], mode)(v))(u, v)
    assert_same(got, want.astype(np.float32), rtol=0)


def test_the_suite_docstring_example_runs():
    import doctest
    assert doctest.testmod(suite).failed == 0
