"""The 32 numpy-benchmarks kernels of ``examples/ported_kernels.py``, at test sizes, through
``jit`` against NumPy running the same code; and the fixes they found, each on its own."""
import copy
import functools
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.errors import ConcretizationTypeError
from helpers import assert_same


def _load_ports():
    path = Path(__file__).resolve().parents[1] / "examples" / "ported_kernels.py"
    spec = importlib.util.spec_from_file_location("ported_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ported_kernels", module)
    spec.loader.exec_module(module)
    return module.KERNELS


KERNELS = _load_ports()
TRACEABLE = sorted(set(KERNELS) - {"grouping"})


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


def test_the_suite_has_its_32_kernels():
    assert len(KERNELS) == 32


@pytest.mark.parametrize("name", TRACEABLE)
def test_ported_kernel_matches_numpy(name):
    k = KERNELS[name]
    args = k.make_small_args()
    want = k.fn(np, *copy.deepcopy(args))
    got = arrjit.jit(functools.partial(k.fn, anp), static_argnums=k.static)(*args)
    assert len(_leaves(got)) == len(_leaves(want))
    for g, w in zip(_leaves(got), _leaves(want)):
        w = np.asarray(w)
        rtol = 1e-6 if w.dtype in (np.float32, np.complex64) else 1e-12
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=rtol * 1e-3,
                                       equal_nan=True)
            assert np.asarray(g).dtype == w.dtype
        else:
            assert_same(g, w)


def test_grouping_output_length_depends_on_values_so_jit_refuses_it_by_name():
    """As in JAX: ``where(diff)`` has as many entries as there are groups. The same port runs
    eagerly through ``arrjit.numpy`` outside ``jit``."""
    k = KERNELS["grouping"]
    (values,) = k.make_small_args()
    with pytest.raises(ConcretizationTypeError, match=r"anp.where\(condition, x, y\)"):
        arrjit.jit(functools.partial(k.fn, anp))(values)
    for g, w in zip(k.fn(anp, values), k.fn(np, values)):
        assert_same(g, w)


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
