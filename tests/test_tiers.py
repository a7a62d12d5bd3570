"""Tiered execution: with compile="background" a new signature is answered by the reference
interpreter until its compiled plan is ready, with the same values, donations and errors.
The background compile is held by a test double, so nothing here depends on timing."""
import gc
import logging
from concurrent.futures import Future

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import tiers


@pytest.fixture
def held_compiles(monkeypatch):
    """Background compiles wait until the test releases them: ``release()`` runs them."""
    waiting: list = []

    class HeldCompile:
        def __init__(self, compile_plan):
            self.compile_plan, self.future, self.started = compile_plan, Future(), False
            waiting.append(self)

        def start(self):
            self.started = True

        def done(self):
            return self.future.done()

        def result(self):
            return self.future.result()

    def release(fail: Exception | None = None):
        while waiting:
            held = waiting.pop(0)
            assert held.started, "a compile was released before its first call started it"
            if fail is not None:
                held.future.set_exception(fail)
            else:
                held.future.set_result(held.compile_plan())

    monkeypatch.setattr(tiers, "BackgroundCompile", HeldCompile)
    return release


def program(x, w):
    h = anp.tanh(x @ w)
    h = (h - h.mean(axis=1, keepdims=True)) / (h.std(axis=1, keepdims=True) + 1e-5)
    z = h - h.max(axis=1, keepdims=True)
    p = anp.exp(z) / anp.sum(anp.exp(z), axis=1, keepdims=True)
    return -anp.mean(anp.log(p[:, 0])), anp.argmax(h, axis=1), p.sum(axis=0)


def test_the_interpreter_answers_until_the_compiled_plan_is_ready(held_compiles):
    x, w = np.random.default_rng(0).standard_normal((2, 6, 6))
    f = arrjit.jit(program, compile="background")
    first = f(x, w)
    second = f(x, w)
    info = f.cache_info()
    assert info.interpreted == 2 and info.compiles == 0 and info.traces == 1
    held_compiles()
    compiled = f(x, w)
    info = f.cache_info()
    assert info.interpreted == 2 and info.compiles >= 1 and info.traces == 1
    expected = arrjit.jit(program)(x, w)
    for a, b, c in zip(first, compiled, expected):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, c, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(b, c, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(second[1], compiled[1])


def test_donation_is_the_same_in_both_tiers(held_compiles):
    f = arrjit.jit(lambda x, y: anp.sin(x) * 2 + y, donate_argnums=(0,), compile="background")
    x, y = np.linspace(0, 1, 7), np.ones(7)
    out = f(x, y)
    assert out is x and f.cache_info().interpreted == 1
    np.testing.assert_allclose(out, np.sin(np.linspace(0, 1, 7)) * 2 + 1, rtol=1e-15)
    held_compiles()
    x2 = np.linspace(0, 1, 7)
    out2 = f(x2, y)
    assert out2 is x2
    np.testing.assert_allclose(out2, out, rtol=1e-15)
    with pytest.warns(arrjit.errors.DonationWarning):   # aliased: refused in both tiers
        g = arrjit.jit(lambda x, y: x + y, donate_argnums=(0,), compile="background")
        z = np.ones(3)
        assert g(z, z) is not z


def test_errors_are_the_same_in_both_tiers(held_compiles):
    f = arrjit.jit(lambda x, i: x[i], compile="background")
    with pytest.raises(IndexError):
        f(np.ones(3), np.array([5]))
    held_compiles()
    with pytest.raises(IndexError):
        f(np.ones(3), np.array([5]))


def test_a_failed_background_compile_raises_and_the_next_call_compiles_again(held_compiles):
    f = arrjit.jit(lambda x: x + 1, compile="background")
    f(np.ones(2))
    held_compiles(fail=RuntimeError("the compiler broke"))
    with pytest.raises(RuntimeError, match="the compiler broke"):
        f(np.ones(2))
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])   # traced again, interpreted
    assert f.cache_info().traces == 2


def test_block_until_compiled_and_the_default_from_config(caplog):
    arrjit.config.update("compile", "background")
    try:
        f = arrjit.jit(lambda x: anp.exp(x) + 1)
    finally:
        arrjit.config.update("compile", "auto")
    arrjit.config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="arrjit"):
            f(np.zeros(3))
    finally:
        arrjit.config.update("log_compiles", False)
    assert "ran by the interpreter while compiling in the background" in caplog.text
    f.block_until_compiled()
    before = f.cache_info().interpreted
    np.testing.assert_array_equal(f(np.zeros(3)), [2.0, 2.0, 2.0])
    assert f.cache_info().interpreted == before
    assert f.lower(np.zeros(3)).as_text().count("def kernel_") >= 1
    with pytest.raises(ValueError, match="compile='later'.*'eager'.*'background'"):
        arrjit.jit(lambda x: x, compile="later")


def test_auto_is_background_only_in_an_interactive_session(monkeypatch):
    import sys

    assert tiers.resolve("auto") == "eager"          # pytest is not a prompt
    monkeypatch.setattr(sys, "ps1", ">>> ", raising=False)
    assert tiers.resolve("auto") == "background"
    assert tiers.resolve("eager") == "eager"


def test_the_compile_starts_after_the_first_call_is_answered(monkeypatch):
    """The compile thread would take the GIL from the interpreter: it waits for the call."""
    seen = []
    interpret_plan = tiers.interpret_plan

    def observed(plan, graph, leaves):
        seen.extend(e.pending.started for e in f._cache.values())
        return interpret_plan(plan, graph, leaves)

    monkeypatch.setattr(tiers, "interpret_plan", observed)
    f = arrjit.jit(lambda x: anp.tanh(x) * 2, compile="background")
    out = f(np.linspace(-1, 1, 5))
    assert seen == [False]
    (entry,) = f._cache.values()
    assert entry.pending is None or entry.pending.started
    np.testing.assert_array_equal(f.block_until_compiled()(np.linspace(-1, 1, 5)), out)
    g = arrjit.jit(lambda x: x - 1, compile="background")
    g.lower(np.ones(2))                            # no call to answer: starts at once
    np.testing.assert_array_equal(g.block_until_compiled()(np.ones(2)), [0.0, 0.0])


def test_the_interpreter_drops_each_value_after_its_last_reader():
    import tracemalloc

    from arrjit.core import interpret

    def chain(x):
        for k in range(8):
            x = anp.sin(x) + k
        return x

    x = np.linspace(0, 1, 1 << 17)              # 1 MiB per value; the chain makes 16
    arrjit.config.update("disable_jit", True)     # traced, not compiled
    try:
        graph = arrjit.jit(chain).lower(x).graph
    finally:
        arrjit.config.update("disable_jit", False)
    tracemalloc.start()
    try:
        out = interpret.evaluate(graph, [x])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * x.nbytes
    expected = x
    for k in range(8):
        expected = np.sin(expected) + k
    np.testing.assert_allclose(out[0], expected, rtol=1e-15)


def test_the_garbage_collector_is_paused_while_numba_compiles():
    """A compile's many objects would start full collections over the whole heap: the
    collector is off while numba compiles and on again afterwards; off stays off."""
    from numba.core import event

    enabled_during_compiles = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            enabled_during_compiles.append(gc.isenabled())

        def on_end(self, ev):
            pass

    x = np.arange(5.0)
    with event.install_listener("numba:compile", Compiles()):
        out = arrjit.jit(lambda x: x * 3.1328125 + 1.0478515625)(x)   # a kernel new here
    np.testing.assert_array_equal(out, x * 3.1328125 + 1.0478515625)
    assert enabled_during_compiles and not any(enabled_during_compiles)
    assert gc.isenabled()
    gc.disable()
    try:
        arrjit.jit(lambda x: x * 5.1328125 - 2.0478515625)(x)
        assert not gc.isenabled()
    finally:
        gc.enable()
