"""Kernels that only fill their outputs with constants (``zeros``, ``full``, a ``scan``'s
stacked output before the loop) run as NumPy fills, compiling nothing, unless they are big
enough to split across threads."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import jit, lax
from arrjit.backends.cpu.steps import KernelRun

from helpers import assert_same


def _kernel_calls(f, *args):
    runs = f.lower(*args)._entry.rendered.runs
    return [call for run in runs if isinstance(run, KernelRun) for call in run.calls]


@pytest.mark.parametrize("make, want", [
    (lambda: anp.zeros((100, 3)), np.zeros((100, 3))),
    (lambda: anp.full((4,), 7, np.int8), np.full((4,), 7, np.int8)),
    (lambda: anp.ones((2, 2), bool), np.ones((2, 2), bool)),
    (lambda: anp.full((3, 1), 1 + 2j, np.complex64), np.full((3, 1), 1 + 2j, np.complex64)),
    (lambda: anp.full((5,), -np.inf, np.float32), np.full((5,), -np.inf, np.float32)),
    (lambda: anp.full((2, 3), np.nan), np.full((2, 3), np.nan)),
])
def test_a_constant_output_is_filled_without_compiling(make, want):
    f = jit(make)
    (call,) = _kernel_calls(f)
    assert call.kernel.fill_values() is not None and call.filled
    assert f.lower().as_text().count("def kernel_") == 0    # no source to compile
    assert_same(f(), want)
    info = f.cache_info()
    assert (info.kernels, info.kernels_compiled, info.compiles) == (1, 0, 0)


def test_fills_beside_computed_outputs_and_repeated_calls_are_fresh():
    f = jit(lambda x: (anp.zeros(5), x * 2.0, anp.full((7,), 3.0)))
    x = np.arange(6.0).reshape(2, 3)
    first = f(x)
    first[0][0] = 99.0         # the caller owns its arrays: the next call fills anew
    second = f(x)
    assert_same(second[0], np.zeros(5))
    assert_same(second[1], x * 2.0)
    assert_same(second[2], np.full(7, 3.0))
    assert sorted(c.filled for c in _kernel_calls(f, x)) == [False, True, True]


def test_a_kernel_that_computes_or_fills_part_of_a_buffer_is_not_a_fill():
    x = np.arange(4.0)
    computed = jit(lambda x: anp.zeros(4) + x)
    assert [c.filled for c in _kernel_calls(computed, x)] == [False]
    # a constant row stored into part of a zeros buffer: the region store is no fill
    region = jit(lambda x: anp.zeros((3, 4)).at[1].set(5.0) + x)
    assert_same(region(x), np.zeros((3, 4)) + np.array([0, 1, 0])[:, None] * 5.0 + x)


def test_a_fill_big_enough_for_threads_is_a_compiled_kernel(two_threads_from_1000_elements):
    f = jit(lambda: anp.full((5000,), 2.5))
    (call,) = _kernel_calls(f)
    assert call.kernel.fill_values() == (2.5,) and not call.filled
    assert_same(f(), np.full(5000, 2.5))
    small = jit(lambda: anp.full((10,), 2.5))
    assert [c.filled for c in _kernel_calls(small)] == [True]


def test_a_scans_stacked_output_starts_as_a_fill():
    def rows(v):
        return lax.scan(lambda c, _: (c + 1.0, c * 2.0), v, None, length=5)

    f = jit(rows)
    v = np.array([1.0, 2.0])
    assert [c.filled for c in _kernel_calls(f, v)] == [True]
    carry, ys = f(v)
    assert_same(carry, v + 5.0)
    assert_same(ys, np.stack([(v + k) * 2.0 for k in range(5)]))
    assert arrjit.jit(rows)(v)[1].shape == (5, 2)
