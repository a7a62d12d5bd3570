"""Property-based differential tests: random elementwise/broadcast/view programs over real and
complex dtypes, compiled by arrjit and run by NumPy, must agree in dtype and value (and a new
size must not recompile)."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import arrjit
import arrjit.numpy as anp

from helpers import assert_same

UNARY = ["negative", "absolute", "sin", "tanh", "square", "floor", "sqrt_abs", "exp_clip"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "where_gt", "true_divide_safe"]
VIEWS = ["reverse0", "reverse_last", "transpose", "none_front"]
DTYPES = ["float64", "float32", "int32", "int64", "uint8", "complex64", "complex128"]


def apply_unary(ns, name, x):
    if name == "sqrt_abs":
        return ns.sqrt(ns.absolute(x))
    if name == "exp_clip":
        return ns.exp(ns.clip(x, -5, 5))
    return getattr(ns, name)(x)


def apply_binary(ns, name, x, y):
    if name == "where_gt":
        return ns.where(x > y, x, y)
    if name == "true_divide_safe":
        return ns.true_divide(x, ns.absolute(y) + 1)
    return getattr(ns, name)(x, y)


def apply_view(name, x):
    if x.ndim == 0:
        return x
    if name == "reverse0":
        return x[::-1]
    if name == "reverse_last":
        return x[..., ::-2]
    if name == "transpose":
        return x.T
    return x[None]


instruction = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(UNARY), st.integers(0, 9)),
    st.tuples(st.just("binary"), st.sampled_from(BINARY), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("view"), st.sampled_from(VIEWS), st.integers(0, 9)),
    st.tuples(st.just("scalar"), st.sampled_from(["add", "multiply", "maximum"]),
              st.integers(0, 9), st.sampled_from([2, -1, 0.5, 3.0])),
)


def run_program(ns, program, inputs, keep=3):
    values = list(inputs)
    for ins in program:
        kind, name, i = ins[0], ins[1], ins[2] % len(values)
        try:
            if kind == "unary":
                values.append(apply_unary(ns, name, values[i]))
            elif kind == "binary":
                values.append(apply_binary(ns, name, values[i], values[ins[3] % len(values)]))
            elif kind == "view":
                values.append(apply_view(name, values[i]))
            else:
                values.append(getattr(ns, name)(values[i], ins[3]))
        except ValueError:  # shapes that do not broadcast: skip this instruction
            continue
    return tuple(values[len(inputs):][-keep:]) or (values[0] + 0,)


REAL_DTYPES = [d for d in DTYPES if not d.startswith("complex")]


@st.composite
def programs(draw, dtypes=DTYPES):
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(3, 6))
    shapes = draw(st.lists(st.sampled_from([(rows, cols), (cols,), (rows, 1), ()]), min_size=1,
                           max_size=3))
    input_dtypes = st.sampled_from(dtypes)
    dtypes = draw(st.lists(input_dtypes, min_size=len(shapes), max_size=len(shapes)))
    program = draw(st.lists(instruction, min_size=1, max_size=7))
    seed = draw(st.integers(0, 2**16))
    return shapes, dtypes, program, seed


def make_inputs(shapes, dtypes, seed, grow=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in zip(shapes, dtypes):
        shape = tuple(d + grow if d > 1 else d for d in shape)
        value = rng.standard_normal(shape) * 4
        if np.dtype(dt).kind == "c":
            value = value + 4j * rng.standard_normal(shape)
        out.append(value.astype(dt))
    return out


@settings(max_examples=int(__import__("os").environ.get("ARRJIT_TEST_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_match_numpy(case):
    shapes, dtypes, program, seed = case
    inputs = make_inputs(shapes, dtypes, seed)
    with np.errstate(all="ignore"):
        try:
            refs = run_program(np, program, inputs)
        except (TypeError, OverflowError) as rejected:  # NumPy rejects it; so must arrjit
            try:
                arrjit.jit(lambda *xs: run_program(anp, program, xs))(*inputs)
            except (type(rejected), arrjit.errors.UnsupportedDtypeError):
                return  # the same error, or float16 refused before NumPy reached its error
            raise AssertionError(f"arrjit accepted a program NumPy rejects: {rejected}")
        every = run_program(np, program, inputs, keep=len(program))
        if any(np.asarray(r).dtype == np.float16 for r in every):
            return  # NumPy computes in float16 somewhere; arrjit rejects that (tested elsewhere)
        f = arrjit.jit(lambda *xs: run_program(anp, program, xs))
        outs = f(*inputs)
        for out, ref in zip(outs, refs):
            ref = np.asarray(ref)
            if ref.dtype.kind in "fc":
                scale = np.nanmax(np.abs(ref[np.isfinite(ref)]), initial=1.0)
                # a float64 result may come through a float32 value (abs of complex64:
                # NumPy's is not correctly rounded, arrjit's is), so any narrow value counts
                narrow = any(np.asarray(v).dtype in (np.float32, np.complex64)
                             for v in (*inputs, *every))
                tol = (1e-5 if narrow else 1e-12) * max(scale, 1.0)
                assert out.dtype == ref.dtype and out.shape == ref.shape
                np.testing.assert_allclose(out, ref, rtol=0, atol=tol, equal_nan=True)
            else:
                assert_same(out, ref)
        # Sizes are run-time values: the same structure at new sizes must not recompile.
        compiles = f.cache_info().compiles
        bigger = make_inputs(shapes, dtypes, seed, grow=3)
        if structure(program, inputs) == structure(program, bigger):
            f(*bigger)
            assert f.cache_info().compiles == compiles, "a new size recompiled"


def structure(program, inputs):
    """What a plan depends on besides the sizes themselves: which dimensions are 1, and which
    values have equal shapes (fusion joins values of one shape into one loop nest, so a slice
    that is square at one size and not at another changes the kernels)."""
    graph = arrjit.make_graph(lambda *xs: run_program(anp, program, xs))(*inputs)
    shapes = [n.out.shape for n in graph.nodes]
    return ([tuple(d == 1 for d in s) for s in shapes],
            [[a == b for b in shapes] for a in shapes])
