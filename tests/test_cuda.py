"""The CUDA backend without a GPU: the CUDA test folder run on numba-cuda's simulator (in its
own process: the simulator is chosen before numba is imported), and every kernel the backend
table and the programs below generate compiled to PTX for sm_80 and sm_90 and linked into a
cubin (the type check the simulator does not do). Nothing here needs a GPU."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import arrjit
import arrjit.numpy as anp
from arrjit import lax
from arrjit.scipy import special, stats
from arrjit.backends.cuda.ptx import compile_ptx, link_cubin, plan_kernels
from arrjit.core.ir import BINARY, UNARY
from arrjit.passes.lower import lower
from arrjit.plan import build_plan

from helpers import ALL_DTYPES, sample

pytest.importorskip("numba.cuda", reason="the cuda extra (numba-cuda) is not installed")

ROOT = Path(__file__).resolve().parents[1]


def test_cuda_suite_passes_on_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-m", "not gpu", "tests/cuda"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=900)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in summary and "skipped" not in summary, summary


def plan_of(f, *args):
    """The target-neutral plan of ``f`` for ``args`` (traced and lowered; nothing compiled)."""
    jitted = arrjit.jit(f)
    values = jitted._bind(args, {})
    _, leaves = jitted._key(values)
    graph = jitted._trace(values, leaves)[0]
    return build_plan(lower(graph))


def _unary_program(dtype):
    x = sample(dtype)
    names = []
    for name in sorted(op.value for op in UNARY):
        try:
            with np.errstate(all="ignore"):
                if getattr(np, name)(x).dtype != np.float16:
                    names.append(name)
        except (TypeError, ValueError):
            pass
    return (lambda x: tuple(getattr(anp, n)(x) for n in names)), (x,)


def _binary_program(d1, d2):
    x, y = sample(d1, seed=1), sample(d2, seed=2)
    names = []
    for name in sorted(op.value for op in BINARY):
        try:
            with np.errstate(all="ignore"):
                if getattr(np, name)(x, y).dtype != np.float16:
                    names.append(name)
        except (TypeError, ValueError):
            pass
    return (lambda x, y: tuple(getattr(anp, n)(x, y) for n in names)), (x, y)


def _reductions(x):
    return (x.sum(), x.prod(axis=0), x.max(axis=1, keepdims=True), x.min(axis=(0, 2)),
            anp.argmax(x), anp.argmin(x, axis=1), x.mean(axis=-1), x.var(axis=0),
            anp.any(x > 0, axis=1), anp.all(x > 0))


PROGRAMS = {
    **{f"unary-{d}": _unary_program(d) for d in ALL_DTYPES},
    **{f"binary-{d}": _binary_program(d, d) for d in ALL_DTYPES},
    "binary-mixed": _binary_program("int32", "float32"),
    **{f"reductions-{d}": (_reductions, (sample(d, n=60).reshape(3, 4, 5),))
       for d in ("float64", "float32", "int64", "uint8", "bool")},
    "softmax-layernorm-lse": (lambda x: (
        anp.exp(x - x.max(axis=1, keepdims=True)) /
        anp.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True),
        (x - x.mean(axis=-1, keepdims=True)) / anp.sqrt(x.var(axis=-1, keepdims=True) + 1e-5),
        anp.log(anp.exp(x - x.max(axis=1)[:, None]).sum(axis=1))),
        (np.ones((4, 8), np.float32),)),
    "region-updates": (lambda x: (
        anp.zeros((6, 6, 2)).at[:, :, 0].set(x.reshape(-1, 1)).at[:, :, 1].set(x),
        anp.cos(x).at[1:].add(x[:-1] * 2.0).at[-1].max(0.5),
        anp.ones((2, 3)).at[0].set(x.reshape(2, 3).sum(axis=0)).at[1, 0].set(x.max())),
        (np.linspace(0.0, 1.0, 6),)),
    "loops-and-library": (lambda a, b: (
        lax.fori_loop(0, 3, lambda i, v: anp.tanh(v @ b) + 1.0, a),
        lax.while_loop(lambda v: v.sum() < 10.0, lambda v: v * 2.0, anp.abs(a))),
        (np.ones((3, 3)), np.eye(3))),
    "special-functions": (lambda x, a: (
        special.erf(x), special.erfc(x), special.gammaln(x), special.digamma(x),
        special.gammainc(a, x), special.gammaincc(a, x), special.digamma(x.astype(np.float32)),
        stats.norm.logcdf(x) + stats.poisson.cdf(a, x)),
        (np.linspace(0.1, 5.0, 8), np.linspace(0.5, 9.0, 8))),
    "linear-algebra": (lambda a, b: (
        anp.exp(anp.linalg.solve(a * 2.0, b)), anp.linalg.eigh(a + a.T)[0].sum(),
        anp.linalg.norm(a, 2) + anp.linalg.slogdet(a)[1]),
        (np.eye(3) + 0.1, np.ones(3))),
    "gradients": (arrjit.value_and_grad(lambda x, w: (
        anp.sum(anp.log(anp.sum(anp.exp(x - x.max(axis=1, keepdims=True)), axis=1)))
        + anp.sum(lax.fori_loop(0, 2, lambda i, v: anp.tanh(v @ w), x) ** 2)
        + anp.sum((x - x.mean(axis=-1, keepdims=True)) / anp.sqrt(x.var(axis=-1,
                                                                        keepdims=True) + 1e-5))),
        argnums=(0, 1)), (np.ones((4, 4)) * np.arange(4.0), np.eye(4) * 0.5)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_generated_kernel_compiles_to_ptx_and_links(name):
    f, args = PROGRAMS[name]
    kernels = plan_kernels(plan_of(f, *args))
    assert kernels
    for cc, arch in (((8, 0), "sm_80"), ((9, 0), "sm_90")):
        compiled = compile_ptx(kernels, cc)
        assert len(compiled) >= len(kernels)
        for k in compiled:
            assert f".target {arch}" in k.ptx, k.name
            assert len(link_cubin(k.ptx, arch)) > 0, k.name


def test_library_kernels_compile_to_ptx_and_link():
    from arrjit.backends.cuda.ptx import library_ptx

    for cc, arch in (((8, 0), "sm_80"), ((9, 0), "sm_90")):
        for k in library_ptx(cc):
            assert len(link_cubin(k.ptx, arch)) > 0, k.name


def test_cuda_arrays_are_keyed_by_their_interface_without_touching_a_device():
    from arrjit.core.foreign import device_info
    from arrjit.signature import leaf_aval, leaf_key

    class Foreign:      # what CuPy or PyTorch expose
        def __init__(self, shape, strides=None):
            self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4",
                                             "strides": strides, "data": (0, False),
                                             "version": 3}

    assert device_info(Foreign((2, 3))) == ((2, 3), np.dtype("float32"), True)
    assert device_info(Foreign((2, 3), (12, 4))) == ((2, 3), np.dtype("float32"), True)
    assert device_info(Foreign((2, 3), (4, 8)))[2] is False          # a transposed view
    assert leaf_key(Foreign((2, 3))) != leaf_key(Foreign((3, 2)))
    assert leaf_aval(Foreign((2, 3)), "x").shape == (2, 3)
    assert device_info(np.zeros(3)) is None


def test_the_launch_rule_and_cache_key_name_the_device():
    from arrjit.backends.cuda.launch import LaunchRule

    rule = LaunchRule(256, 132 * 32)
    assert rule.blocks(10) == 1 and rule.blocks(256 * 5000) == 132 * 32
    assert rule.blocks(7, per_block=1) == 7


def test_cuda_without_a_device_says_how_to_use_the_simulator():
    from arrjit.backends.cuda.device import unavailable_reason

    if unavailable_reason() is None:
        pytest.skip("a CUDA device is present: this checks the message without one")
    with pytest.raises(arrjit.errors.DeviceUnavailableError,
                       match="device='cuda' is not available: no CUDA device.*"
                             "NUMBA_ENABLE_CUDASIM=1"):
        arrjit.jit(lambda x: x, device="cuda")
    with pytest.raises(arrjit.errors.DeviceUnavailableError, match="NUMBA_ENABLE_CUDASIM"):
        arrjit.device_put(np.ones(2), "cuda")
