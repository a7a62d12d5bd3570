"""Jitted functions over dask arrays: the axis rules, the stage plan, results against NumPy on
the threaded scheduler (with hypothesis-drawn chunks), pickling, and a two-process cluster."""
import pickle
import re
import sys
import textwrap

import cloudpickle
import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import arrjit
import arrjit.numpy as anp
from arrjit.core.ir import Op
from arrjit.dask import ChunkingError, axes as axis_rules, blocks

RNG = np.random.default_rng(7)
XN = RNG.standard_normal((600, 24))
YN = RNG.standard_normal((600, 24))


@pytest.fixture(autouse=True)
def _threaded_scheduler():
    with dask.config.set(scheduler="threads"):
        yield


def softmax_rows(x):
    e = anp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# -- the rules and the plan ------------------------------------------------------------------------
def test_every_op_has_an_axis_rule():
    assert set(axis_rules.AXIS_RULES) == set(Op)


def _plan(fun, *args):
    from arrjit.dask import _plan, _stand_in_values

    jitted = arrjit.jit(fun)
    values = jitted._bind(args, {})
    _, leaves = jitted._key(values)
    return _plan(jitted, _stand_in_values(jitted, values), leaves)[2]


@pytest.mark.parametrize("fun, passes", [
    (lambda x: anp.exp(x) * 2, 1),                        # blockwise
    (lambda x: x.mean(), 1),                              # one partial, then a division
    (lambda x: anp.var(x, axis=0), 2),                    # mean, then the squared deviations
    (lambda x: softmax_rows(x.T).T, 3),                   # max, sum, normalise
    (softmax_rows, 1),                                    # rows are whole in each block
])
def test_a_reduction_over_a_chunked_axis_ends_a_pass(fun, passes):
    x = da.from_array(XN, chunks=(150, 24))
    assert _plan(fun, x).passes == passes


@pytest.mark.parametrize("fun, what", [
    (lambda x: x[1:] - x[:-1], "a slice"),
    (lambda x: anp.sort(x, axis=0), "sort"),
    (lambda x: anp.cumsum(x, axis=0), "cumsum"),
    (lambda x: anp.roll(x, 1, axis=0) + x, "roll"),
    (lambda x: x.T @ x, "matmul"),
    (lambda x: x.reshape(-1), "reshape"),
    (lambda x: x + anp.asarray(np.arange(600.0))[:, None], "a constant array"),
])
def test_reading_across_chunks_names_the_op_the_argument_the_axis_and_the_fix(fun, what):
    x = da.from_array(XN, chunks=(150, 24))
    with pytest.raises(ChunkingError) as err:
        arrjit.jit(fun)(x)
    message = str(err.value)
    assert what in message and "axis 0 of argument 'x'" in message
    assert "4 chunks (150, 150, 150, 150)" in message and "x.rechunk({0: -1})" in message


def test_a_square_array_against_its_own_transpose_is_refused():
    x = da.from_array(XN[:24], chunks=(6, 24))
    with pytest.raises(ChunkingError, match=r"with itself along axes 0 and 1"):
        arrjit.jit(lambda x: x + x.T)(x)


def test_the_same_ops_along_an_axis_in_one_chunk_run():
    x = da.from_array(XN, chunks=(600, 8))
    out = arrjit.jit(lambda x: anp.sort(x, axis=0)[1:] - anp.cumsum(x, axis=0)[:-1]
                     + anp.roll(x, 2, axis=0)[1:])(x)
    np.testing.assert_allclose(out.compute(), np.sort(XN, axis=0)[1:] - np.cumsum(XN, 0)[:-1]
                               + np.roll(XN, 2, axis=0)[1:])


# -- results on the threaded scheduler -------------------------------------------------------------
def test_elementwise_chain_is_lazy_and_keeps_the_chunks():
    x = da.from_array(XN, chunks=(100, 12))
    f = arrjit.jit(lambda x: anp.exp(-x * x) * anp.tanh(x) + 1)
    y = f(x)
    assert isinstance(y, da.Array) and y.chunks == x.chunks and y.dtype == np.float64
    np.testing.assert_allclose(y.compute(), np.exp(-XN * XN) * np.tanh(XN) + 1, rtol=1e-14)


def test_differently_chunked_inputs_numpy_arrays_scalars_and_static_values_mix():
    f = arrjit.jit(lambda x, y, c, s, flag: (x * y + c[:, None] * s) if flag else x,
                   static_argnames=("flag",))
    x, y = da.from_array(XN, chunks=(250, 10)), da.from_array(YN, chunks=(100, 12))
    c = RNG.standard_normal(600)
    out = f(x, y, c, 3.0, True)
    np.testing.assert_allclose(out.compute(), XN * YN + c[:, None] * 3.0, rtol=1e-14)
    assert out.chunks[0][:3] == (100, 100, 50)           # dask's unification of the chunks


AXES_AND_KEEPDIMS = [(None, False), (None, True), (0, False), (0, True), (1, False), (1, True)]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "any",
                                  "all", "argmax", "argmin", "logsumexp"])
def test_reductions_over_chunked_axes_match_numpy(name):
    data = 1 + XN / 50 if name == "prod" else XN
    arg = (data > 0.5) if name in ("any", "all") else data

    def one(x, xp, axis, keepdims):
        if name != "logsumexp":
            return getattr(xp, name)(x, axis=axis, keepdims=keepdims)
        m = x.max(axis=axis, keepdims=True)
        out = xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True)) + m
        return out if keepdims else xp.squeeze(out, axis=axis)

    def every(x, xp):      # one program: its passes serve all six outputs
        return [one(x, xp, axis, keepdims) for axis, keepdims in AXES_AND_KEEPDIMS]

    x = da.from_array(arg, chunks=(150, 8))
    got = dask.compute(*arrjit.jit(lambda x: every(x, anp))(x))
    for g, expected, case in zip(got, every(arg, np), AXES_AND_KEEPDIMS):
        assert g.shape == expected.shape and g.dtype == expected.dtype, case
        np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12, err_msg=str(case))


def test_integer_sums_are_exact():
    i = np.arange(1000, dtype=np.int32)
    got = arrjit.jit(lambda i: (i * i).sum())(da.from_array(i, chunks=300)).compute()
    assert got == (i * i).sum() and got.dtype == np.int64


def test_several_outputs_share_one_task_per_block():
    x = da.from_array(XN, chunks=(100, 8))
    f = arrjit.jit(lambda x: {"scaled": x * 2, "rows": anp.tanh(x).sum(axis=1),
                              "total": anp.exp(x).sum(axis=0)})
    out = f(x)
    before = blocks.blocks_run[0]
    scaled, rows, total = dask.compute(out["scaled"], out["rows"], out["total"])
    assert blocks.blocks_run[0] - before == x.npartitions        # one program run per block
    np.testing.assert_allclose(scaled, XN * 2)
    np.testing.assert_allclose(rows, np.tanh(XN).sum(axis=1), rtol=1e-13)
    np.testing.assert_allclose(total, np.exp(XN).sum(axis=0), rtol=1e-13)


def test_an_output_that_is_an_argument_is_returned_as_a_dask_array():
    x = da.from_array(XN, chunks=(100, 24))
    same, w = arrjit.jit(lambda x, w: (x, w))(x, np.ones(3))
    assert same is x and isinstance(w, da.Array)


@settings(max_examples=10, deadline=None)
@given(rows=st.lists(st.integers(2, 120), min_size=1, max_size=5),     # chunks of 1 element
       cols=st.lists(st.integers(2, 12), min_size=1, max_size=3))      # specialise kernels anew

def test_any_chunking_gives_numpy_s_answer(rows, cols):
    shape = (sum(rows), sum(cols))
    xn = RNG.standard_normal(shape)
    x = da.from_array(xn, chunks=(tuple(rows), tuple(cols)))
    f = arrjit.jit(lambda x: (softmax_rows(x) * x.mean(axis=0), anp.var(x), x.max(axis=1)))
    a, v, m = dask.compute(*f(x))
    np.testing.assert_allclose(a, np_softmax_rows(xn) * xn.mean(axis=0), rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(v, np.var(xn), rtol=1e-12)
    np.testing.assert_array_equal(m, xn.max(axis=1))


def test_block_programs_release_the_gil():
    jitted = arrjit.jit(lambda x: anp.exp(x))
    assert "nogil=True" in jitted.lower(XN).as_text()


# -- pickling ----------------------------------------------------------------------------------------
def test_a_jitted_closure_pickles_by_value_with_its_options_under_cloudpickle():
    scale = 3.0
    f = arrjit.jit(lambda x, k: x * scale + k, static_argnames=("k",))
    g = pickle.loads(cloudpickle.dumps(f))
    assert isinstance(g, arrjit.Jitted) and g.static_argnames == ("k",)
    np.testing.assert_array_equal(g(XN, k=2), XN * 3.0 + 2)


def test_a_module_level_jitted_function_pickles_by_reference(tmp_path, monkeypatch):
    (tmp_path / "arrjit_pickle_probe.py").write_text(textwrap.dedent("""
        import arrjit, arrjit.numpy as anp

        @arrjit.jit(static_argnames=("n",))
        def power(x, n=2):
            return x ** n
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import arrjit_pickle_probe as probe

    data = pickle.dumps(probe.power)
    assert b"arrjit_pickle_probe" in data and len(data) < 200
    assert pickle.loads(data) is probe.power
    del sys.modules["arrjit_pickle_probe"]


# -- a cluster of two worker processes -------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


def _on_cluster(client, *collections):
    return client.compute(list(collections), sync=True)


def test_on_a_cluster_chains_softmax_reductions_and_several_outputs_match_numpy(client):
    x = da.from_array(XN, chunks=(150, 24))
    f = arrjit.jit(lambda x, w, s: {
        "chain": anp.tanh(x * w) * s + 1,
        "softmax": softmax_rows(x),
        "total": x.sum(),
        "columns": x.mean(axis=0, keepdims=True),
        "spread": anp.std(x, axis=0),
    })
    w = RNG.standard_normal(24)
    out = f(x, w, 0.5)
    got = dict(zip(out, _on_cluster(client, *out.values())))
    np.testing.assert_allclose(got["chain"], np.tanh(XN * w) * 0.5 + 1, rtol=1e-14)
    np.testing.assert_allclose(got["softmax"], np_softmax_rows(XN), rtol=1e-14)
    np.testing.assert_allclose(got["total"], XN.sum(), rtol=1e-12)
    np.testing.assert_allclose(got["columns"], XN.mean(axis=0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(got["spread"], XN.std(axis=0), rtol=1e-12)
    with pytest.raises(ChunkingError, match=r"x.rechunk\(\{0: -1\}\)"):
        f = arrjit.jit(lambda x: anp.sort(x, axis=0))(x)


def _compute_in_this_worker(f, data):
    return f(da.from_array(data, chunks=(150, 24))).compute(scheduler="synchronous")


def test_on_a_cluster_workers_size_their_threads_and_the_second_loads_from_the_shared_cache(
        client, tmp_path):
    cache = str(tmp_path / "shared-cache")
    client.run(arrjit.config.update, "cache_dir", cache)
    first, second = sorted(client.scheduler_info()["workers"])
    f = arrjit.jit(lambda x: anp.log1p(anp.abs(x)) * 3.25 - x)   # shipped by value
    before = client.run(arrjit.dask.process_stats)
    a = client.submit(_compute_in_this_worker, f, XN, workers=[first], pure=False).result()
    b = client.submit(_compute_in_this_worker, f, XN, workers=[second], pure=False).result()
    after = client.run(arrjit.dask.process_stats)
    delta = {w: {k: after[w][k] - before[w][k] for k in after[w]} for w in after}
    assert delta[first]["compiles"] >= 1 and delta[first]["blocks"] == 4
    assert delta[second]["compiles"] == 0 and delta[second]["blocks"] == 4
    assert delta[second]["disk_hits"] >= 1
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, np.log1p(np.abs(XN)) * 3.25 - XN, rtol=1e-14)
    assert set(client.run(lambda: arrjit.config.num_threads).values()) == {1}


def test_through_the_scheduler_s_address_a_jitted_function_ships_to_map_blocks(client):
    from distributed import Client

    x = da.from_array(XN, chunks=(150, 24))
    f = arrjit.jit(lambda block: anp.sqrt(anp.abs(block)) + 1)
    with Client(client.scheduler.address) as remote:       # as with a real cluster
        by_blocks = remote.compute(x.map_blocks(f, dtype=np.float64, meta=np.empty((0, 0))),
                                   sync=True)
        planned = remote.compute(f(x), sync=True)
    np.testing.assert_allclose(by_blocks, np.sqrt(np.abs(XN)) + 1, rtol=1e-15)
    np.testing.assert_array_equal(planned, by_blocks)


def test_lower_with_a_dask_argument_says_how_to_see_a_block_s_program():
    x = da.from_array(XN, chunks=(150, 24))
    with pytest.raises(TypeError, match=r"x.blocks\[0\].compute\(\)"):
        arrjit.jit(lambda x: x + 1).lower(x)


def test_a_block_that_does_not_match_its_program_is_named_not_traced():
    """A block whose whole (unchunked) axes differ from the value's is refused with the input,
    both shapes and what to do, before anything is traced or compiled."""
    from arrjit.core.dtypes import Aval
    from arrjit.core.ir import Graph, Node, Op, Var
    from arrjit.dask.blocks import BlockProgram

    f64 = np.dtype("float64")
    x, y = Var(0, Aval((6, 4), f64)), Var(1, Aval((6, 4), f64))
    program = BlockProgram(Graph((x,), (Node(Op.SQRT, (x,), y),), (y,)),
                           {0: (7, 8), 1: (7, 8)}, frozenset({7}), ((None, ()),), "roots")
    (got,) = program(np.full((2, 4), 4.0))            # a block of 2 of the 6 rows
    np.testing.assert_array_equal(got, np.full((2, 4), 2.0))
    for block in (np.ones((2, 3)), np.ones(4)):
        with pytest.raises(ValueError, match=r"roots \(one block\): input 0 .* block of shape "
                                             rf"{re.escape(str(block.shape))}.*\(6, 4\)"):
            program(block)
