"""The one run loop (``arrjit.executor``) and the split between lowering and compiling."""
import ast
from pathlib import Path

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import executor
from arrjit.errors import DonationWarning
from arrjit.executor import HOST, HostDevice, Scheduled, run_plan
from arrjit.plan import LibraryStep, LoopStep

from helpers import assert_same


class RecordingDevice(HostDevice):
    """Host arrays, recording every fresh buffer and copy the run loop asks for."""

    def __init__(self):
        super().__init__()
        self.fresh: list[tuple[tuple[int, ...], np.dtype]] = []
        self.copies = 0

    def empty(self, shape, dtype):
        self.fresh.append((tuple(shape), np.dtype(dtype)))
        return np.empty(shape, dtype)

    def copy(self, x):
        self.copies += 1
        return x.copy()


def test_the_cpu_schedule_runs_on_any_device_through_the_shared_loop():
    f = arrjit.jit(lambda x, y: anp.sort(anp.exp(x) * y)[::-1] + anp.sum(y))
    x, y = np.linspace(0, 1, 50), np.linspace(2, 3, 50)
    expected = f(x, y)
    executable = f.lower(x, y)._entry.rendered
    assert all(isinstance(s, Scheduled) for s in executable.schedule)
    assert len(executable.schedule) == len(executable.runs) >= 3   # kernels, sort, kernels
    device = RecordingDevice()
    (out,) = run_plan(executable.plan, executable.schedule, executable.plan.constants,
                      device, [x, y])
    assert_same(out, expected)
    fresh = [(a.shape, a.dtype) for s in executable.schedule for a in s.memory.allocs
             if a.donor < 0 and a.reuse < 0]
    assert device.fresh == fresh and device.copies == 0


@pytest.mark.parametrize("native", [True, False])
def test_a_one_carry_loop_runs_through_the_shared_loop(native):
    def f(x):
        def body(i, v):
            return v * 0.5 + i if native else v[anp.argsort(v)] * 0.5 + i
        return arrjit.lax.fori_loop(0, 4, body, x)

    x = np.array([3.0, 1.0, 2.0])
    jitted = arrjit.jit(f)
    expected = jitted(x)
    executable = jitted.lower(x)._entry.rendered
    (out,) = run_plan(executable.plan, executable.schedule, executable.plan.constants,
                      RecordingDevice(), [x])
    assert_same(out, expected)


def test_an_aliased_donor_scatters_into_a_copy_and_stays_unchanged():
    f = arrjit.jit(lambda x, y: x.at[2:5].set(y[:3] * 2), donate_argnums=0)
    a = np.arange(8.0)
    executable = f.lower(a, a)._entry.rendered
    (scatter,) = [s for s in executable.schedule if s.in_place_donor >= 0]
    assert scatter.in_place_donor == 0
    with pytest.warns(DonationWarning, match="also passed as another argument"):
        out = f(a, a)
    expected = np.arange(8.0)
    expected[2:5] = np.arange(3.0) * 2
    assert_same(out, expected)
    assert_same(a, np.arange(8.0))                     # the aliased argument is untouched
    b, c = np.arange(8.0), np.ones(8)
    assert f(b, c) is b and b[3] == 2.0                # unaliased: in place, as before


def test_loops_run_from_the_host_share_the_run_loop(monkeypatch):
    calls = []
    real = executor.run_loop

    def counting(*args, **kwargs):
        calls.append(args[5])                          # the trip count
        return real(*args, **kwargs)

    monkeypatch.setattr("arrjit.backends.cpu.loops.run_loop", counting)

    def f(x):       # an unstable argsort in the body keeps the loop in Python
        return arrjit.lax.fori_loop(0, 3, lambda i, v: v[anp.argsort(v)] + i, x)

    x = np.array([3.0, 1.0, 2.0])
    out = arrjit.jit(f)(x)
    ref = x.copy()
    for i in range(3):
        ref = ref[np.argsort(ref)] + i
    assert_same(out, ref)
    assert calls == [3]                                # static bounds: the body runs 3 times


def test_lower_renders_without_compiling_and_the_first_call_compiles():
    f = arrjit.jit(lambda x: anp.tanh(x) * 3.0 - 0.25)
    x = np.linspace(-1, 1, 9)
    lowered = f.lower(x)
    info = f.cache_info()
    assert (info.compiles, info.disk_hits, info.kernels) == (0, 0, 0)
    assert "def kernel_" in lowered.as_text() and len(lowered.kernels) == 1
    assert lowered._entry.executable is None and lowered._entry.uncompiled
    assert_same(f(x), np.tanh(x) * 3.0 - 0.25)
    info = f.cache_info()
    assert info.kernels == 1 and info.compiles + info.disk_hits >= 1
    assert info.traces == 1 and info.misses == 1 and info.hits == 1
    assert f._cache[next(iter(f._cache))].run is not None   # the hot path serves it now


def test_lowered_compile_compiles_now():
    f = arrjit.jit(lambda x: anp.cos(x) + 0.5, compile="background")
    x = np.linspace(0, 1, 5)
    lowered = f.lower(x)
    assert f.cache_info().compiles + f.cache_info().disk_hits == 0
    compiled = lowered.compile()
    assert lowered._entry.executable is not None and not lowered._entry.uncompiled
    assert f.cache_info().compiles + f.cache_info().disk_hits >= 1
    assert_same(compiled(x), np.cos(x) + 0.5)
    assert f.cache_info().interpreted == 0            # compiled before the first call


def test_a_lowered_loop_reports_how_it_runs_before_compiling():
    def f(x):
        return arrjit.lax.fori_loop(0, 4, lambda i, v: v * 2.0 + i, x)

    jitted = arrjit.jit(f)
    lowered = jitted.lower(np.ones(3))
    assert lowered.loops == ["natively, one compiled driver for every iteration"]
    assert jitted.cache_info().compiles + jitted.cache_info().disk_hits == 0
    assert_same(jitted(np.ones(3)), f(np.ones(3)))


def test_the_cpu_loop_module_does_not_import_the_runner():
    """Loops compile their plans through the backend's plan compiler, handed to them: no
    import of the runner, not even for type checking."""
    source = Path(arrjit.__file__).parent / "backends" / "cpu" / "loops.py"
    imported = {node.module for node in ast.walk(ast.parse(source.read_text()))
                if isinstance(node, ast.ImportFrom)}
    assert "runner" not in imported and not any(m and m.endswith(".runner") for m in imported)


def test_plan_steps_and_runs_share_one_vocabulary():
    def f(x):
        y = anp.sort(x * 2.0)
        return arrjit.lax.fori_loop(0, 2, lambda i, v: v + 1.0, y)

    x = np.array([2.0, 1.0])
    executable = arrjit.jit(f).lower(x)._entry.rendered
    steps = [type(s).__name__ for s in executable.plan.steps]
    runs = [type(r).__name__ for r in executable.runs]
    assert steps == ["KernelStep", "LibraryStep", "LoopStep"]
    assert runs == ["KernelRun", "LibraryRun", "LoopRun"]
    assert any(isinstance(s, LibraryStep) for s in executable.plan.steps)
    assert any(isinstance(s, LoopStep) for s in executable.plan.steps)


def test_host_device_is_numpy():
    x = np.arange(6.0)
    assert HOST.reshape(x, (2, 3)).base is x and HOST.copy(x) is not x
    assert HOST.overlap(x, x[1:]) and not HOST.overlap(x, np.arange(6.0))
    assert HOST.constant(np.float64(2.0)).shape == ()


def test_the_interpreter_tier_answers_through_the_shared_loop(monkeypatch):
    from arrjit import tiers

    calls = []

    def counting(plan, schedule, constants, device, args):
        calls.append(len(schedule))
        return run_plan(plan, schedule, constants, device, args)

    monkeypatch.setattr(tiers, "run_plan", counting)
    f = arrjit.jit(lambda x, y: (anp.sin(x) * 2 + y, y, (y * 3).reshape(2, 3)),
                   donate_argnums=0, compile="background")
    x, y = np.linspace(0, 1, 6), np.ones(6)
    first, passed, view = f(x, y)                      # answered by the interpreter
    assert calls == [1] and f.cache_info().interpreted == 1
    assert first is x and passed is y                  # the donated buffer; the input itself
    assert_same(first, np.sin(np.linspace(0, 1, 6)) * 2 + 1)
    assert_same(view, np.full((2, 3), 3.0))
    f.block_until_compiled()


def test_a_library_result_owns_its_buffer():
    """A plan hands a dead operand's buffer to a later value: a library step's result that
    were a view of its operand (a gather of a slice, a transposing einsum) would change with
    it. A scatter's in-place result is its operand's buffer, as the plan asked."""
    from arrjit.core import library
    from arrjit.core.ir import Op

    x = np.arange(12.0).reshape(3, 4)
    picked = library.call(Op.GATHER, [x], {"index": (("slice", 1, 3, None),)}, x.dtype)
    swapped = library.call(Op.EINSUM, [x], {"subscripts": "ij->ji"}, x.dtype)
    x_before = x.copy()
    x[:] = -1.0
    np.testing.assert_array_equal(picked, x_before[1:3])
    np.testing.assert_array_equal(swapped, x_before.T)
    y = np.zeros(4)
    updated = library.call(Op.SCATTER, [y, np.ones(1)], {"index": ((("slice", 0, 1, None)),),
                                                        "mode": "set", "in_place": True},
                           y.dtype)
    assert updated is y and y[0] == 1.0
