"""The jit API: decoration, binding, static arguments, pytrees, caches, errors, donation."""
import collections
import os
import subprocess
import sys

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import errors

from helpers import assert_same


def test_all_decorator_forms():
    def f(x, y=2.0):
        return x * y

    x = np.arange(3.0)
    for g in (arrjit.jit(f), arrjit.jit()(f), arrjit.jit(static_argnames="y")(f)):
        assert_same(g(x), x * 2.0)

    @arrjit.jit
    def h(x):
        return x + 1

    assert_same(h(x), x + 1)
    assert h.__name__ == "h"


def test_static_argnums_and_argnames_infer_each_other():
    def f(x, n, *, scale=1.0):
        return x * n * scale

    g = arrjit.jit(f, static_argnums=1)
    assert g.static_argnames == ("n",)
    g = arrjit.jit(f, static_argnames=("n", "scale"))
    assert g.static_argnums == (1,)
    assert_same(g(np.ones(2), 3, scale=2.0), np.full(2, 6.0))


def test_positional_keyword_and_default_calls_share_one_entry():
    @arrjit.jit(static_argnames="n")
    def f(x, n=2):
        return x * n

    x = np.ones(3)
    f(x, 2)
    f(x, n=2)
    f(x)
    f(n=2, x=x)
    info = f.cache_info()
    assert (info.traces, info.misses, info.hits) == (1, 1, 3)


def test_static_values_are_keyed_by_type_and_value():
    f = arrjit.jit(lambda x, k: x * k, static_argnums=1)
    x = np.ones(2)
    assert f(x, 2).dtype == np.float64
    f(x, 2.0)
    f(x, True)
    f(x, 2)
    assert f.cache_info().traces == 3


def test_unhashable_static_argument_error_names_argument_type_and_fix():
    f = arrjit.jit(lambda x, axes: x, static_argnames="axes")
    with pytest.raises(errors.NonHashableStaticArgError) as info:
        f(np.ones(2), [0, 1])
    msg = str(info.value)
    assert "'axes'" in msg and "list" in msg and "tuple" in msg
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("kwargs,match", [
    (dict(static_argnums=3), "out of range"),
    (dict(static_argnames="zz"), "not a parameter"),
    (dict(static_argnums=0, donate_argnums=0), "both static and donated"),
    (dict(static_argnames="x", donate_argnames="x"), "both static and donated"),
    (dict(donate_argnums=-5), "out of range"),
])
def test_bad_decoration_fails_at_decoration_time(kwargs, match):
    def f(x, y):
        return x

    with pytest.raises(ValueError, match=match):
        arrjit.jit(f, **kwargs)


def test_pytrees_in_and_out():
    Point = collections.namedtuple("Point", "x y")

    @arrjit.jit
    def f(params, pts, nothing):
        assert nothing is None
        out = {"w": params["w"] * 2, "pair": [pts.x + pts.y, (pts.x,)]}
        return Point(out, None)

    p = {"w": np.ones(2), "b": np.zeros(1)}
    res = f(p, Point(np.ones(3), np.full(3, 2.0)), None)
    assert isinstance(res, Point) and res.y is None
    assert_same(res.x["w"], np.full(2, 2.0))
    assert_same(res.x["pair"][0], np.full(3, 3.0))
    assert isinstance(res.x["pair"][1], tuple)


def test_new_length_of_same_rank_retraces_but_compiles_nothing():
    f = arrjit.jit(lambda x, y: anp.sin(x[::-1]) * y[None, :] + 1)
    f(np.ones((3, 4)), np.ones(4))
    compiles = f.cache_info().compiles
    assert compiles >= 1
    out = f(np.ones((5, 7)), np.ones(7))
    info = f.cache_info()
    assert info.traces == 2 and info.compiles == compiles
    assert_same(out, np.sin(np.ones((5, 7))[::-1]) * np.ones(7)[None, :] + 1)


def test_clear_cache_and_clear_caches():
    f = arrjit.jit(lambda x: x + 1)
    f(np.ones(2))
    f.clear_cache()
    f(np.ones(2))
    assert f.cache_info().traces == 2
    arrjit.clear_caches()
    assert f.cache_info().currsize == 0
    assert_same(f(np.ones(2)), np.full(2, 2.0))


def test_lower_shows_graph_and_source_and_compile_runs():
    f = arrjit.jit(lambda x: anp.exp(x) * 2)
    x = np.ones(4)
    lowered = f.lower(x)
    text = lowered.as_text()
    assert "graph(a: float64[4])" in text and "def kernel_" in text and "@njit" in text
    assert len(lowered.kernels) == 1
    assert_same(lowered.compile()(x), np.exp(x) * 2)
    with pytest.raises(TypeError, match="lowered for other"):
        lowered.compile()(np.ones(5))


@pytest.mark.parametrize("fn,exc,words", [
    (lambda x: 1 if x[0] > 0 else 0, errors.TracerBoolConversionError, ["if", "lax.cond"]),
    (lambda x: x if x[0] else x, errors.TracerBoolConversionError, ["anp.where"]),
    (lambda x: [1, 2, 3][x[0]], errors.TracerIntegerConversionError, ["fori_loop"]),
    (lambda x: range(x[0]), errors.TracerIntegerConversionError, ["fori_loop"]),
    (lambda x: int(x[0]), errors.TracerIntegerConversionError, ["cannot be static"]),
    (lambda x: float(x[0]), errors.ConcretizationTypeError, ["float()"]),
    (lambda x: np.asarray(x), errors.TracerArrayConversionError, ["arrjit.numpy"]),
    (lambda x: np.sin(x), errors.TracerArrayConversionError, ["arrjit.numpy"]),
])
def test_tracer_conversion_errors_name_the_argument_and_the_fix(fn, exc, words):
    def f(data):
        return fn(data)

    with pytest.raises(exc) as info:
        arrjit.jit(f)(np.ones(3, np.int64))
    msg = str(info.value)
    assert "'data'" in msg, msg
    # an array cannot be static (it is unhashable): no advice to make it so
    assert "static_argnames=('data',)" not in msg and "cannot be static" in msg, msg
    assert "Tracer<" not in msg, msg
    for w in words:
        assert w in msg, (w, msg)


@pytest.mark.parametrize("fn", [lambda x, n: x * int(n), lambda x, n: x if n else -x,
                                lambda x, n: sum(x for _ in range(n))])
@pytest.mark.parametrize("n", [2, True, np.int64(2)])
def test_python_and_numpy_scalars_are_advised_to_be_static(fn, n):
    with pytest.raises((errors.TracerBoolConversionError,
                        errors.TracerIntegerConversionError)) as info:
        arrjit.jit(fn)(np.ones(3), n)
    assert "static_argnames=('n',)" in str(info.value), str(info.value)
    assert_same(arrjit.jit(fn, static_argnames=("n",))(np.ones(3), n), fn(np.ones(3), n))


@pytest.mark.parametrize("make", [lambda n: anp.zeros(n), lambda n: anp.ones((n, 2)),
                                  lambda n: anp.full([2, n], 1.5)])
def test_a_traced_size_in_a_shape_names_the_argument_and_static_argnames(make):
    with pytest.raises(errors.ConcretizationTypeError,
                       match=r"shape must be known while tracing.*argument 'n'.*"
                             r"static_argnames=\('n',\)"):
        arrjit.jit(make)(3)
    assert arrjit.jit(make, static_argnames=("n",))(3).shape == make(3).shape


def test_iterating_over_a_traced_scalar_says_why_and_what_to_do():
    with pytest.raises(errors.ConcretizationTypeError, match="0-d value has no elements.*"
                                                             "fori_loop"):
        arrjit.jit(lambda x: [v for v in x.sum()])(np.ones(3))


def test_extended_precision_complex_input_is_told_to_convert_to_complex128():
    with pytest.raises(errors.UnsupportedDtypeError, match="argument 'x'") as info:
        arrjit.jit(lambda x: x * 2)(np.ones(3, np.clongdouble))
    msg = str(info.value)
    assert msg.endswith("convert first, e.g. x.astype(numpy.complex128)."), msg


def test_lowered_kernels_print_one_readable_line_each():
    f = arrjit.jit(lambda x: (anp.exp(x - x.max(axis=1, keepdims=True)), x + 1))
    text = repr(f.lower(np.ones((3, 4))).kernels)
    assert text == ("[<Kernel rows (3,) reducing (4,) in 2 passes (reduce_max): reads "
                    "float64[3,4]; writes float64[3,4]; 4 statements>, <Kernel elementwise "
                    "over (12,): reads float64[3,4]; writes float64[3,4]; 3 statements>]"), text


def test_item_assignment_on_tracer_points_to_at():
    def f(x):
        x[0] = 1
        return x

    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        arrjit.jit(f)(np.ones(3))


def test_leaked_tracer_is_reported():
    leaked = []

    @arrjit.jit
    def f(x):
        leaked.append(x)
        return x + 1

    f(np.ones(2))
    with pytest.raises(errors.UnexpectedTracerError, match="leaked"):
        anp.sin(leaked[0])


def test_out_of_range_static_index_and_mask_index():
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        arrjit.jit(lambda x: x[5])(np.ones(3))
    with pytest.raises(IndexError, match="anp.where"):
        arrjit.jit(lambda x: x[x > 0])(np.ones(3))


def test_invalid_argument_type_names_the_argument():
    with pytest.raises(TypeError, match="argument 'x'.*static_argnames"):
        arrjit.jit(lambda x: x)("hello")


def test_python_scalars_are_weak_and_shared_across_values():
    f = arrjit.jit(lambda x, s: x * s)
    x = np.ones(3, np.float32)
    assert f(x, 2.0).dtype == np.float32
    assert_same(f(x, 3.0), np.full(3, 3.0, np.float32))
    assert f.cache_info().traces == 1


def test_nested_jit_traces_through():
    inner = arrjit.jit(lambda x: x * 2)
    outer = arrjit.jit(lambda x: inner(x) + 1)
    assert_same(outer(np.ones(2)), np.full(2, 3.0))
    assert len(outer.lower(np.ones(2)).kernels) == 1


def test_donation_reuses_the_buffer_for_elementwise_updates():
    f = arrjit.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    x, y = np.arange(4.0), np.ones(4)
    out = f(x, y)
    assert out is x
    assert_same(out, np.array([1.0, 3.0, 5.0, 7.0]))


def test_unsafe_donation_is_refused_with_a_warning_and_stays_correct():
    f = arrjit.jit(lambda x: x[::-1] + 1, donate_argnames="x")
    x = np.arange(4.0)
    with pytest.warns(errors.DonationWarning,
                      match=r"Some donated buffers were not usable: float64\[4\] \(argument 'x'"):
        out = f(x)
    assert out is not x
    assert_same(out, np.arange(4.0)[::-1] + 1)


def test_donated_array_passed_twice_is_not_overwritten_early():
    f = arrjit.jit(lambda x, y: x + y[::-1], donate_argnums=0)
    x = np.arange(4.0)
    with pytest.warns(errors.DonationWarning):
        out = f(x, x)
    assert_same(out, np.arange(4.0) + np.arange(4.0)[::-1])


def test_eager_namespace_returns_numpy_results():
    x = np.linspace(-2, 2, 7, dtype=np.float32)
    assert_same(anp.exp(x) * 2.0, np.exp(x) * 2.0)
    assert isinstance(anp.where(x > 0, x, 0), np.ndarray)
    assert_same(anp.reshape(anp.arange(6), (2, 3)).T, np.arange(6).reshape(2, 3).T)
    assert_same(anp.clip(x, -1, 1), np.clip(x, -1, 1))
    assert anp.array([1.0, 2.0]).dtype == np.float64


def test_disable_jit_runs_the_reference_interpreter():
    code = ("import numpy as np, arrjit, arrjit.numpy as anp\n"
            "f = arrjit.jit(lambda x: anp.exp(x) + 1)\n"
            "print(float(f(np.zeros(3))[0]), f.cache_info().compiles, f.lower(np.zeros(3)).kernels)")
    env = dict(os.environ, ARRJIT_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["2.0", "0", "[]"]


def test_config_update_validates_names():
    with pytest.raises(ValueError, match="unknown arrjit option"):
        arrjit.config.update("no_such_option", 1)


def test_devices_and_device_put():
    assert arrjit.devices()[0] == "cpu" and set(arrjit.devices()) <= {"cpu", "cuda"}
    x = np.ones(2)
    assert arrjit.device_put(x) is x and arrjit.block_until_ready(x) is x
    with pytest.raises(ValueError, match="device='tpu' is not known.*'cpu', 'cuda'"):
        arrjit.jit(lambda x: x, device="tpu")


def test_unsupplied_defaults_are_python_constants_as_in_jax():
    @arrjit.jit
    def f(x, scale=2.0, flip=False, axis=None):
        y = x * scale
        return y[::-1] if flip else y.sum(axis=axis)

    x = np.arange(3.0)
    assert_same(f(x), np.asarray(6.0))            # flip=False is a Python bool: `if` works
    assert_same(f(x, 3.0), np.asarray(9.0))       # a supplied scale is traced
    with pytest.raises(errors.TracerBoolConversionError, match="'flip'"):
        f(x, 2.0, True)                           # a supplied non-static flag is traced


def test_created_arrays_inside_jit_are_traced_and_have_at():
    def f(x):
        ramp = anp.arange(4.0).at[0].set(9.0)
        grid = anp.linspace(0, 1, 4).at[-1].add(1.0)
        square = anp.eye(4).at[1, 2].set(5.0) + anp.identity(4) + anp.tri(4)
        return x + ramp + grid, square

    ramp, grid = np.arange(4.0), np.linspace(0, 1, 4)
    ramp[0], grid[-1] = 9.0, grid[-1] + 1.0
    square = np.eye(4)
    square[1, 2] = 5.0
    for out, ref in zip(arrjit.jit(f)(np.ones(4)), (1 + ramp + grid,
                                                     square + np.identity(4) + np.tri(4))):
        assert_same(out, ref)
    assert type(anp.arange(3)) is np.ndarray       # outside jit: NumPy's arrays


def test_the_hot_path_takes_scalar_arguments_keyed_as_the_general_path():
    """Python and NumPy scalars take the generated hot path (0-d arrays for the runner) and
    share the general path's cache entries; other leaves fall back to it."""
    f = arrjit.jit(lambda x, a, b: x * a + b)
    not_fast = f._fast_hit.__globals__["NOT_FAST"]   # the module's, however it was imported
    x = np.arange(4.0)
    assert_same(f(x, 2.0, np.float32(1.0)), x * 2.0 + np.float32(1.0))   # compiles
    traces = f.cache_info().traces
    assert_same(f._fast_hit((x, 3.0, np.float32(2.0))), x * 3.0 + 2.0)
    assert_same(f(x, 5, np.float32(1.0)), x * 5 + np.float32(1.0))       # an int: new entry
    assert f._fast_hit((x, 6, np.float32(0.0))) is not not_fast
    assert f._fast_hit((x, [2.0], np.float32(1.0))) is not_fast   # a list
    assert f._fast_hit((x[::2], 2.0, np.float32(1.0))) is not_fast  # converts first
    assert_same(f(x[::2], 2.0, np.float32(1.0)), x[::2] * 2.0 + 1.0)
    assert f.cache_info().traces == traces + 2
    assert_same(f(x, np.float64(2.0), True), x * 2.0 + 1.0)


def test_the_hot_path_takes_static_arguments_keyed_by_type_and_value():
    """Static arguments key the hot path as the general path keys them (type and value) and
    are not passed to the runner; an unhashable one still gets the general path's error."""
    f = arrjit.jit(lambda x, n, s: x * n + len(s), static_argnums=(1, 2))
    not_fast = f._fast_hit.__globals__["NOT_FAST"]
    x = np.arange(3.0)
    assert_same(f(x, 2, "ab"), x * 2 + 2)
    assert_same(f._fast_hit((x, 2, "ab")), x * 2 + 2)
    assert f._fast_hit((x, 3, "ab")) is not_fast          # not traced for 3 yet
    assert f._fast_hit((x, 2.0, "ab")) is not_fast        # 2.0 is not 2: another entry
    assert f._fast_hit((x, True, "ab")) is not_fast
    traces = f.cache_info().traces
    assert_same(f(x, 3, "abc"), x * 3 + 3)
    assert_same(f(x, 3, "abc"), x * 3 + 3)
    assert f.cache_info().traces == traces + 1
    assert f._fast_hit((x, [2], "ab")) is not_fast
    with pytest.raises(errors.NonHashableStaticArgError, match="'n'"):
        f(x, [2], "ab")


def test_the_hot_path_serves_varargs_and_defaults_keyed_as_the_general_path():
    """A function with ``*args``, keyword-only or defaulted parameters gets a hot path for the
    positional count of its first call without keywords: ``*args`` keys as its tuple, the
    defaults it leaves as constants, and its calls hit the general path's entries."""
    def spread(x, *rest, scale=2.0, **options):
        return x * scale + sum(rest)

    f = arrjit.jit(spread)
    x = np.arange(4.0)
    assert_same(f(x, 1.0, np.ones(4)), x * 2.0 + 1.0 + 1.0)     # compiles; makes the hot path
    not_fast = f._fast_hit.__globals__["NOT_FAST"]
    hits, traces = f.cache_info().hits, f.cache_info().traces
    assert_same(f._fast_hit((x, 3.0, np.full(4, 2.0))), x * 2.0 + 5.0)
    assert f._fast_hit((x, 3, np.ones(4))) is not_fast           # an int: another entry
    assert f._fast_hit((x, 3.0, np.ones(4, np.float32))) is not_fast
    assert_same(f(x, 3, np.ones(4)), x * 2.0 + 4.0)
    assert f._fast_hit((x, 2, np.ones(4))) is not not_fast
    assert_same(f(x, 1.0, np.ones(4), scale=3.0), x * 3.0 + 2.0)   # keywords: general path
    assert_same(f(x, 1.0), x * 2.0 + 1.0)                          # another count: general
    assert f.cache_info().hits == hits + 2 and f.cache_info().traces == traces + 3

    g = arrjit.jit(lambda *a: a[0] @ a[1])
    a, b = np.ones((2, 3)), np.arange(3.0)
    assert_same(g(a, b), a @ b)
    assert_same(g._fast_hit((a, b + 1)), a @ (b + 1))

    h = arrjit.jit(lambda x, n=3, *, k=2: x * n + k, static_argnames=("k",))
    assert_same(h(x), x * 3 + 2)
    assert_same(h._fast_hit((x + 1,)), (x + 1) * 3 + 2)
    assert_same(h(x, 4), x * 4 + 2)                                # another count


def test_calls_with_keywords_get_a_hot_path_per_way_of_passing_them():
    """Calls with keyword arguments get a generated hot path per positional count and keyword
    names, made on the first such call: a static keyword keys by type and value, an array
    keyword as an argument; the same keywords in another order get a hot path of their own
    onto the same entries; unknown keywords take the general path, which reports them."""
    def norm(x, scale, *, eps=1e-5, shift=0.0):
        return x * scale / (x.sum() + eps) + shift

    f = arrjit.jit(norm, static_argnames=("eps",))
    x, scale = np.arange(1.0, 5.0), np.full(4, 2.0)
    want = lambda x, scale, eps=1e-5, shift=0.0: x * scale / (x.sum() + eps) + shift  # noqa
    assert_same(f(x, scale, eps=0.5), want(x, scale, eps=0.5))        # makes the hot path
    (hit,) = [h for h in f._keyword_hits.values()]
    not_fast = hit.__globals__["NOT_FAST"]
    assert_same(hit((x + 1, scale, 0.5)), want(x + 1, scale, eps=0.5))
    assert hit((x, scale, 0.25)) is not_fast                # another static value
    assert_same(f(x, scale, eps=0.25), want(x, scale, eps=0.25))
    assert hit((x, scale, 0.25)) is not not_fast
    traces = f.cache_info().traces
    assert_same(f(x, scale, shift=np.ones(4), eps=0.5), want(x, scale, 0.5, np.ones(4)))
    assert_same(f(x, scale, eps=0.5, shift=np.ones(4)), want(x, scale, 0.5, np.ones(4)))
    assert len(f._keyword_hits) == 3
    hits = f.cache_info().hits
    assert_same(f(x, scale, eps=0.5, shift=np.zeros(4)), want(x, scale, 0.5, np.zeros(4)))
    assert f.cache_info().hits == hits + 1
    assert f.cache_info().traces == traces + 1    # both orders key one entry, as bound
    with pytest.raises(TypeError, match="scal"):
        f(x, scal=scale)
    with pytest.raises(TypeError, match="scal"):
        f(x, scal=scale)


def test_the_hot_path_leaves_array_defaults_to_the_general_path():
    """A default that is an array is a leaf the hot path does not pass: such calls take the
    general path, with the same answers."""
    weights = np.arange(3.0)
    f = arrjit.jit(lambda x, *, w=weights: x * w)
    x = np.ones(3)
    assert_same(f(x), x * weights)
    assert f._fast_hit is None
    assert_same(f(x + 1), (x + 1) * weights)


def test_the_hot_path_memo_keeps_the_least_recently_used_order():
    """Repeated calls of one signature skip the hot path's lookup (its memo); the signature
    evicted is still the least recently used one, whichever path served the calls, and a
    cleared cache is not answered from the memo."""
    arrjit.config.update("max_signatures_per_function", 2)
    try:
        f = arrjit.jit(lambda x: x * 2.0)
        a, b, c = np.ones(2), np.ones(3), np.ones(4)
        f(a), f(b), f(a), f(a)         # a: the memo's
        assert_same(f(x=b), b * 2.0)   # the general path's hit makes b the most recent
        f(a)                           # so a must be moved again
        traces = f.cache_info().traces
        f(c)                           # evicts b
        assert_same(f(a), a * 2.0)
        assert f.cache_info().traces == traces + 1
        f(b)
        assert f.cache_info().traces == traces + 2
        f.clear_cache()
        assert_same(f(b), b * 2.0)
        assert f.cache_info().traces == traces + 3
    finally:
        arrjit.config.update("max_signatures_per_function", 64)
