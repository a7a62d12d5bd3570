"""``jit(value_and_grad(loss))`` against JAX's ``jax.jit(jax.value_and_grad(loss))`` and a
hand-written NumPy backward pass, on three losses: softmax cross-entropy (4096 x 256
logits), layer normalisation (4096 x 256, gradients for the input, scale and shift) and a
two-layer MLP (1024 x 256 inputs, 512 hidden, 64 outputs, tanh).

asv runs the classes; ``python benchmarks/bench_grad.py`` prints the ratios side by side
(medians of interleaved runs in one process)."""
import time

import numpy as np

import arrjit
import arrjit.numpy as anp

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # a missing peer is skipped, never faked
    jax = None


def softmax_xent(logits, labels):
    z = logits - anp.max(logits, axis=1, keepdims=True)
    lse = anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
    return -anp.mean(anp.sum(labels * (z - lse), axis=1))


def softmax_xent_numpy(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    loss = -np.mean(np.sum(labels * (z - np.log(s)), axis=1))
    n = logits.shape[0]
    grad = (e / s * labels.sum(axis=1, keepdims=True) - labels) / n
    return loss, grad


def layernorm(x, g, b):
    mu = anp.mean(x, axis=-1, keepdims=True)
    var = anp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return anp.sum(((x - mu) / anp.sqrt(var + 1e-5) * g + b) ** 2)


def layernorm_numpy(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    inv = 1 / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    xhat = (x - mu) * inv
    y = xhat * g + b
    dy = 2 * y
    dxhat = dy * g
    dx = inv * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return np.sum(y * y), (dx, np.sum(dy * xhat, axis=0), np.sum(dy, axis=0))


def mlp(w1, w2, x, y):
    return anp.mean((anp.tanh(x @ w1) @ w2 - y) ** 2)


def mlp_numpy(w1, w2, x, y):
    h = np.tanh(x @ w1)
    d = h @ w2 - y
    loss = np.mean(d * d)
    dout = 2 * d / d.size
    dw2 = h.T @ dout
    dh = dout @ w2.T * (1 - h * h)
    return loss, (x.T @ dh, dw2)


def _inputs(name):
    rng = np.random.default_rng(0)
    if name == "softmax_xent":
        return (rng.standard_normal((4096, 256)),
                np.eye(256)[rng.integers(0, 256, 4096)])
    if name == "layernorm":
        return rng.standard_normal((4096, 256)), rng.standard_normal(256), rng.standard_normal(
            256)
    return (rng.standard_normal((256, 512)) * 0.05, rng.standard_normal((512, 64)) * 0.05,
            rng.standard_normal((1024, 256)), rng.standard_normal((1024, 64)))


CASES = {"softmax_xent": (softmax_xent, softmax_xent_numpy, 0),
         "layernorm": (layernorm, layernorm_numpy, (0, 1, 2)),
         "mlp": (mlp, mlp_numpy, (0, 1))}


def _jax_loss(name):
    if name == "softmax_xent":
        return lambda a, b: -jnp.mean(jnp.sum(b * jax.nn.log_softmax(a, axis=1), axis=1))
    if name == "layernorm":
        return lambda x, g, b: jnp.sum(((x - x.mean(-1, keepdims=True)) / jnp.sqrt(
            x.var(-1, keepdims=True) + 1e-5) * g + b) ** 2)
    return lambda w1, w2, x, y: jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)


class ValueAndGrad:
    params = sorted(CASES)
    param_names = ["loss"]

    def setup(self, name):
        fn, self.numpy_fn, argnums = CASES[name]
        self.args = _inputs(name)
        self.f = arrjit.jit(arrjit.value_and_grad(fn, argnums=argnums))
        self.f(*self.args)
        if jax is not None:
            self.jargs = [jnp.asarray(a) for a in self.args]
            self.jf = jax.jit(jax.value_and_grad(_jax_loss(name), argnums=argnums))
            jax.block_until_ready(self.jf(*self.jargs))

    def time_arrjit(self, name):
        self.f(*self.args)

    def time_numpy_by_hand(self, name):
        self.numpy_fn(*self.args)

    def time_jax(self, name):
        if jax is None:
            raise NotImplementedError("jax is not installed")
        jax.block_until_ready(self.jf(*self.jargs))

    def track_kernels(self, name):
        return len(self.f.lower(*self.args).kernels)


def main(repeats: int = 31) -> None:
    for name in sorted(CASES):
        bench = ValueAndGrad()
        bench.setup(name)
        runners = {"arrjit": lambda: bench.time_arrjit(name),
                   "numpy": lambda: bench.time_numpy_by_hand(name)}
        if jax is not None:
            runners["jax"] = lambda: bench.time_jax(name)
        times = {k: [] for k in runners}
        for _ in range(repeats):
            for k, run in runners.items():
                t0 = time.perf_counter()
                run()
                times[k].append(time.perf_counter() - t0)
        med = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
        ratios = "  ".join(f"{k}/arrjit {med[k] / med['arrjit']:.2f}x" for k in med
                           if k != "arrjit")
        print(f"{name:13s} " + "  ".join(f"{k} {v:7.2f} ms" for k, v in med.items())
              + f"  kernels {bench.track_kernels(name)}  {ratios}")


if __name__ == "__main__":
    main()
