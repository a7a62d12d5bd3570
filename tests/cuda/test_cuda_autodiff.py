"""Gradients on the CUDA backend: the backward pass is primitives like any program, so
``jit(grad(f), device="cuda")`` compiles it to CUDA kernels; compared with the CPU."""
import numpy as np
import pytest

import arrjit
import arrjit.core.tree
import arrjit.numpy as anp
from arrjit import lax

pytestmark = pytest.mark.cuda

RNG = np.random.default_rng(11)


def softmax_cross_entropy(logits, labels):
    z = logits - anp.max(logits, axis=1, keepdims=True)
    lse = anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
    return -anp.mean(anp.sum(labels * (z - lse), axis=1))


def mlp(params, x, y):
    h = anp.tanh(x @ params["w1"] + params["b1"])
    return anp.mean((h @ params["w2"] - y) ** 2)


def looped(x, w):
    return anp.sum(lax.fori_loop(0, 3, lambda i, v: anp.sin(v) * w, x))


@pytest.mark.parametrize("f,args", [
    (softmax_cross_entropy, (RNG.standard_normal((4, 5)), np.eye(5)[[0, 3, 1, 4]])),
    (mlp, ({"w1": RNG.standard_normal((3, 4)), "b1": RNG.standard_normal(4),
            "w2": RNG.standard_normal((4, 2))}, RNG.standard_normal((5, 3)),
           RNG.standard_normal((5, 2)))),
    (looped, (RNG.standard_normal(3), RNG.standard_normal(3))),
], ids=["softmax_cross_entropy", "mlp", "fori_loop"])
def test_gradients_on_cuda_match_the_cpu(f, args):
    value, grads = arrjit.jit(arrjit.value_and_grad(f), device="cuda")(*args)
    ref_value, ref_grads = arrjit.jit(arrjit.value_and_grad(f))(*args)
    np.testing.assert_allclose(arrjit.device_get(value), ref_value, rtol=1e-12)
    got = arrjit.core.tree.flatten(grads)[0]
    want = arrjit.core.tree.flatten(ref_grads)[0]
    for g, r in zip(got, want):
        np.testing.assert_allclose(arrjit.device_get(g), r, rtol=1e-12, atol=1e-14)
