"""Fit a small two-layer regression model with gradient descent and momentum.

The whole training step (forward pass, gradients, parameter update) is one jitted function;
the parameters and the velocity are donated, so each step updates them in place.

    python examples/optimiser_step.py
"""
import numpy as np

import arrjit
import arrjit.numpy as anp


def predict(params, x):
    hidden = anp.tanh(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params, x, y):
    return anp.mean((predict(params, x) - y) ** 2)


@arrjit.jit(donate_argnums=(0, 1))
def train_step(params, velocity, x, y, rate=0.05, momentum=0.9):
    value, grads = arrjit.value_and_grad(loss)(params, x, y)
    velocity = arrjit.tree.map(lambda v, g: momentum * v - rate * g, velocity, grads)
    params = arrjit.tree.map(lambda p, v: p + v, params, velocity)
    return params, velocity, value


def main(steps: int = 300) -> float:
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, size=(512, 1))
    y = np.sin(2 * x) + 0.05 * rng.standard_normal(x.shape)
    params = {"w1": rng.standard_normal((1, 32)), "b1": np.zeros(32),
              "w2": rng.standard_normal((32, 1)) * 0.1, "b2": np.zeros(1)}
    velocity = arrjit.tree.map(np.zeros_like, params)
    first = float(loss(params, x, y))
    for step in range(steps):
        params, velocity, value = train_step(params, velocity, x, y)
    print(f"mean squared error: {first:.3f} at the start, {float(value):.4f} after {steps} steps")
    assert float(value) < first / 5
    return float(value)


if __name__ == "__main__":
    main()
