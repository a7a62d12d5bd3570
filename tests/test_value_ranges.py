"""Bounds of integer values (``passes/ranges.py``): a position whose bounds lie inside its axis
is not checked at run time (``Position.in_range``, ``LibraryCall.in_range``); every other
position still raises NumPy's ``IndexError``."""
import math

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from arrjit.core.ir import Op
from arrjit.passes.kernel import Kernel, LibraryCall, Position
from arrjit.passes.lower import Lowered, lower
from arrjit.passes.ranges import loop_entry, value_ranges

from helpers import assert_same, numpy_point_sweep, point_sweep


def _graph(fn, *args):
    return arrjit.make_graph(fn)(*args)


def _while(graph):
    (node,) = [n for n in graph.nodes if n.op is Op.WHILE]
    return node


def _counter_bounds(fn, *args):
    """The bounds of the first carry (a fori_loop's counter) inside the body."""
    graph = _graph(fn, *args)
    node = _while(graph)
    _, body = loop_entry(node, value_ranges(graph, {}))
    return body.get(node.param["body"].inputs[0])


def test_a_counter_with_static_bounds_lies_between_them_inside_the_body():
    x = np.zeros(4)
    assert _counter_bounds(lambda x: lax.fori_loop(2, 9, lambda i, x: x + i, x), x) == (2, 8)
    # a counter counting down, by a while loop: its lower bound comes from the condition
    down = lambda x: lax.while_loop(lambda c: c[0] > 0, lambda c: (c[0] - 3, c[1] * 2.0),  # noqa
                                    (20, x))
    assert _counter_bounds(down, x) == (1, 20)


def test_no_bounds_where_the_limit_is_traced_the_start_unknown_or_the_carry_keeps_growing():
    x = np.zeros(4)
    traced_limit = lambda x, n: lax.fori_loop(0, n, lambda i, x: x + i, x)      # noqa: E731
    assert _counter_bounds(traced_limit, x, 5)[1] == math.inf
    traced_start = lambda x, n: lax.fori_loop(n, 5, lambda i, x: x + i, x)      # noqa: E731
    assert _counter_bounds(traced_start, x, 5)[0] == -math.inf

    def doubling(x):
        return lax.while_loop(lambda c: c[1].sum() < 1e9, lambda c: (c[0] * 2, c[1] + 1.0),
                              (1, x))
    assert _counter_bounds(doubling, x)[1] == math.inf


def test_bounds_never_assume_a_wrap():
    from arrjit.core.dtypes import Aval
    from arrjit.core.ir import Graph, Node, Var, make_params

    u8 = np.dtype("uint8")
    k, one, less, more = (Var(n, Aval((), u8)) for n in range(4))
    graph = Graph((k,), (Node(Op.CONST, (), one, make_params(value=np.uint8(1))),
                         Node(Op.SUB, (k, one), less), Node(Op.ADD, (k, one), more)),
                  (less, more))
    found = value_ranges(graph, {k: (0, 254)})
    assert less not in found                 # 0 - 1 wraps to 255 in uint8
    assert found[more] == (1, 255)
    assert more not in value_ranges(graph, {k: (0, 255)})


def _loop_body(lowered: Lowered) -> Lowered:
    (loop,) = lowered.loops.values()
    return loop.body


def test_a_point_sweep_checks_none_of_its_positions():
    rng = np.random.default_rng(0)
    u, source = rng.random((9, 7)), rng.random((9, 7))
    inner = _loop_body(_loop_body(lower(_graph(point_sweep, u, source), positions=True)))
    steps = inner.partition.steps
    positions = [s for k in steps if isinstance(k, Kernel) for s in k.stmts
                 if isinstance(s, Position)]
    assert len(positions) == 6 and all(p.in_range for p in positions)
    (scatter,) = [s for s in steps if isinstance(s, LibraryCall) and s.node.op is Op.SCATTER]
    assert scatter.in_range == (0, 1)
    jitted = arrjit.jit(point_sweep)
    assert jitted.lower(u, source).loops[0].startswith("natively")
    assert_same(jitted(u, source), numpy_point_sweep(u, source), rtol=1e-14)


@pytest.mark.parametrize("shift", [1, -1, 2])
def test_positions_that_may_leave_the_axis_are_checked_and_raise_as_numpy(shift):
    """``x[i + shift]`` over ``i`` in ``0..4`` of a 5-vector: ``+1`` and ``+2`` pass the end
    (NumPy's ``IndexError``), ``-1`` counts from the end at ``i = 0``."""
    def f(x):
        return lax.fori_loop(0, 5, lambda i, acc: acc.at[i].add(x[i + shift]), anp.zeros(5))

    x = np.arange(5.0) + 1.0
    body = _loop_body(lower(_graph(f, x), positions=True))
    positions = [s for k in body.partition.steps if isinstance(k, Kernel) for s in k.stmts
                 if isinstance(s, Position)]
    assert positions and not any(p.in_range for p in positions)
    want = np.zeros(5)
    try:
        for i in range(5):
            want[i] += x[i + shift]
    except IndexError as error:
        with pytest.raises(IndexError, match=str(error)):
            arrjit.jit(f)(x)
    else:
        assert_same(arrjit.jit(f)(x), want)


def test_a_remainder_bounds_a_position_by_its_divisor():
    def f(x):
        return lax.fori_loop(0, 12, lambda k, acc: acc.at[k % 3].add(x[(k * 7) % 4]),
                             anp.zeros(3))

    x = np.arange(4.0)
    body = _loop_body(lower(_graph(f, x), positions=True))
    library = [s for s in body.partition.steps if isinstance(s, LibraryCall)]
    kernels = [s for s in body.partition.steps if isinstance(s, Kernel)]
    assert all(s.in_range == (0,) for s in library if s.node.op is Op.SCATTER)
    assert all(p.in_range for k in kernels for p in k.stmts if isinstance(p, Position))
    want = np.zeros(3)
    for k in range(12):
        want[k % 3] += x[(k * 7) % 4]
    assert_same(arrjit.jit(f)(x), want)
