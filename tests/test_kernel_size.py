"""How much one kernel fuses: long arithmetic chains stay one kernel, chains of math-library
functions are cut where LLVM would compile them slowly and leave the loop scalar, and
identities that need no ``pow`` call are simplified away first."""
import numpy as np

import arrjit
import arrjit.numpy as anp
from arrjit.core.ir import Op
from arrjit.passes.kernel import Compute
from arrjit.passes.sizes import FUNCTION_WEIGHT, MAX_FUSED_WEIGHT

from helpers import assert_same


def state_equation(xp, t, p, terms):
    """A long one-expression polynomial in two variables (an equation of state's form)."""
    acc = 0.0 * t
    for k in range(terms):
        acc = acc + (0.5 + k / 300.0) * t ** (k % 4) * p ** (k % 3)
    return acc


def test_a_150_term_polynomial_is_one_kernel_and_matches_numpy():
    t, p = np.linspace(0, 1, 500), np.linspace(1, 2, 500)
    f = arrjit.jit(lambda t, p: state_equation(anp, t, p, 150))
    (kernel,) = f.lower(t, p).kernels
    powers = [s for s in kernel.stmts if isinstance(s, Compute) and s.op is Op.POW]
    assert len(powers) <= 3          # t**3 and p**... once each; **0..2 need no pow call
    assert_same(f(t, p), state_equation(np, t, p, 150), rtol=1e-13)


def test_a_chain_of_library_functions_is_cut_by_weight():
    x = np.linspace(0, 1, 100)
    per_kernel = MAX_FUSED_WEIGHT // FUNCTION_WEIGHT

    def sines(x):
        for k in range(3 * per_kernel):
            x = anp.sin(x) + k
        return x

    def ref(x):
        for k in range(3 * per_kernel):
            x = np.sin(x) + k
        return x

    f = arrjit.jit(sines)
    kernels = f.lower(x).kernels
    assert 3 <= len(kernels) <= 6
    for kernel in kernels:
        calls = [s for s in kernel.stmts if isinstance(s, Compute) and s.op is Op.SIN]
        assert len(calls) <= per_kernel
    assert_same(f(x), ref(x), rtol=1e-12)


def test_power_one_is_the_value_itself_nan_and_inf_included():
    x = np.array([np.nan, -np.inf, np.inf, -0.0, 2.5, -3.0])
    f = arrjit.jit(lambda x: (x + 0.0) ** 1 * 2)
    ops = {s.op for k in f.lower(x).kernels for s in k.stmts if isinstance(s, Compute)}
    assert Op.POW not in ops
    assert_same(f(x), (x + 0.0) ** 1 * 2)
    ints = np.arange(-3, 4)
    assert_same(arrjit.jit(lambda v: (v * 3) ** 1)(ints), (ints * 3) ** 1)


def test_cache_info_counts_kernels_and_a_recurring_kernel_compiles_once():
    """Identical kernels, in one program (unrolled steps cut apart by sorts) or in two
    functions, share one compile; ``cache_info`` says how many kernels and compiles."""
    x = np.random.default_rng(4).random(64)

    def steps(x):
        for _ in range(3):
            x = anp.sort(anp.tanh(x) * 0.5 + 0.25)
        return x

    f = arrjit.jit(steps)
    expected = x
    for _ in range(3):
        expected = np.sort(np.tanh(expected) * 0.5 + 0.25)
    assert_same(f(x), expected, rtol=1e-14)
    info = f.cache_info()
    assert info.kernels == 3 and info.kernels_compiled == 1
    g = arrjit.jit(lambda x: anp.sort(anp.tanh(x) * 0.5 + 0.25) * 2)
    assert_same(g(x), np.sort(np.tanh(x) * 0.5 + 0.25) * 2, rtol=1e-14)
    assert g.cache_info().kernels == 2 and g.cache_info().kernels_compiled <= 1


def test_rolls_weigh_more_than_arithmetic_when_a_chain_is_cut():
    """The same chain cut by the weight of its nodes: rolls (a wrap-around in every access)
    are cut several times where as many negations are not cut at all."""
    from arrjit.core.dtypes import Aval
    from arrjit.core.ir import Graph, Node, Var, make_params
    from arrjit.passes.sizes import ROLL_WEIGHT, chain_cuts

    aval = Aval((4, 5), np.dtype("float64"))

    def chain(op, params):
        x, *chain = [Var(k, aval) for k in range(101)]
        nodes = tuple(Node(op, (src,), dst, params) for src, dst in zip([x, *chain], chain))
        return chain_cuts(Graph((x,), nodes, (chain[-1],)), {x, chain[-1]})

    assert chain(Op.NEG, ()) == set()
    rolls = chain(Op.ROLL, make_params(axis=1, shift=2))
    assert len(rolls) >= 100 * ROLL_WEIGHT // MAX_FUSED_WEIGHT - 1
