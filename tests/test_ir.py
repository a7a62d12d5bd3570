"""Pure tests: the IR, its printer and verifier, op tables, simplification. No compilation."""
import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit.core import interpret
from arrjit.backends.cpu import expressions as cpu
from arrjit.core.dtypes import Aval
from arrjit.core.ir import ALL_OPS, ELEMENTWISE, Graph, Node, Op, Var
from arrjit.core.verify import verify
from arrjit.passes.simplify import simplify

F64 = np.dtype("float64")


def test_every_op_has_an_interpreter_and_a_cpu_expression():
    assert set(interpret.IMPLS) == set(ALL_OPS)
    assert set(cpu.EXPRESSIONS) == set(ELEMENTWISE)


def test_every_ufunc_op_is_in_the_namespace():
    from arrjit.core.ir import UFUNC_OPS
    for op in UFUNC_OPS:
        assert callable(getattr(anp, op.value)), op


def test_make_graph_prints_a_readable_graph():
    text = str(arrjit.make_graph(lambda x, y: anp.sin(x) * y + 1)(np.zeros(3), np.ones(3)))
    assert text.splitlines()[0] == "graph(a: float64[3], b: float64[3]) {"
    assert "sin a" in text and "multiply" in text and text.rstrip().endswith("}")


def test_verify_rejects_use_before_definition():
    x, y, z = (Var(i, Aval((2,), F64)) for i in range(3))
    bad = Graph((x,), (Node(Op.ADD, (x, z), y), Node(Op.EXP, (x,), z)), (y,))
    with pytest.raises(AssertionError, match="defined later"):
        verify(bad)


def test_simplify_removes_dead_code_and_duplicates():
    def f(x):
        unused = anp.cos(x)  # noqa: F841
        return anp.exp(x) + anp.exp(x)

    g = simplify(arrjit.make_graph(f)(np.zeros(4)))
    ops = [n.op for n in g.nodes]
    assert ops.count(Op.EXP) == 1 and Op.COS not in ops
    verify(g)


def test_simplify_folds_small_constants():
    g = simplify(arrjit.make_graph(lambda x: x * (anp.float32(2) + 3))(np.zeros(3, np.float32)))
    consts = [n for n in g.nodes if n.op is Op.CONST]
    assert len(consts) == 1 and consts[0].param["value"].array == 5


def test_promotion_follows_nep50_weak_scalars():
    g = arrjit.make_graph(lambda x: x * 2.0)(np.zeros(3, np.float32))
    assert g.outputs[0].dtype == np.float32
    g = arrjit.make_graph(lambda x: x + 1)(np.zeros(3, np.int8))
    assert g.outputs[0].dtype == np.int8
    g = arrjit.make_graph(lambda x, y: x + y)(np.zeros(3, np.int8), np.zeros(3, np.uint8))
    assert g.outputs[0].dtype == np.int16
    g = arrjit.make_graph(lambda x: x / 2)(np.zeros(3, np.int32))
    assert g.outputs[0].dtype == np.float64


def test_python_integer_out_of_range_for_the_array_dtype_raises_like_numpy():
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        arrjit.make_graph(lambda x: x + 1000)(np.zeros(3, np.int8))


def test_float16_is_rejected_clearly():
    with pytest.raises(arrjit.errors.UnsupportedDtypeError, match="float16"):
        arrjit.jit(lambda x: x + 1)(np.zeros(3, np.float16))
    with pytest.raises(arrjit.errors.UnsupportedDtypeError, match="float16.*astype"):
        arrjit.make_graph(anp.exp)(np.zeros(3, np.int8))  # NumPy: exp(int8) is float16
    with pytest.raises(arrjit.errors.UnsupportedDtypeError):
        anp.zeros(3, dtype=np.float16)


def test_broadcast_mismatch_uses_numpy_text():
    with pytest.raises(ValueError, match=r"operands could not be broadcast together with "
                                         r"shapes \(3,\) \(4,\)"):
        arrjit.make_graph(lambda x, y: x + y)(np.zeros(3), np.zeros(4))
