"""``custom_vjp``: a user's own reverse-mode rule for a function.

It leaves the traced computation as it is and marks it (``marks``), so it costs nothing when
the function is only compiled or run.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ..core import primitives as p
from ..core.ir import Op
from ..core.trace import Tracer, current_trace
from ..core.tree import flatten, unflatten
from ..core.marks import CustomVJP


class custom_vjp:
    """A function with a reverse-mode derivative rule of its own, as ``jax.custom_vjp``.

    ``fwd(*args)`` returns ``(output, residuals)``; ``bwd(residuals, output_cotangent)``
    returns one cotangent per argument (``None`` for zero), each shaped like its argument.
    Arguments listed in ``nondiff_argnums`` are not differentiated and come first in
    ``bwd``'s arguments.

    >>> import numpy as np, arrjit, arrjit.numpy as anp
    >>> @arrjit.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def fwd(x):
    ...     return x, None
    >>> def bwd(_, g):
    ...     return (anp.clip(g, -1.0, 1.0),)
    >>> _ = clip_gradient.defvjp(fwd, bwd)
    >>> arrjit.grad(lambda x: 5.0 * clip_gradient(x))(2.0)
    array(1.)

    Forward mode (``jvp``) of such a function raises: the rule covers reverse mode only.
    Differentiating a second time differentiates ``bwd`` and ``fwd`` themselves.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self._in_fwd = 0     # fwd may call the function itself: that call is the plain one

    def defvjp(self, fwd: Callable, bwd: Callable) -> "custom_vjp":
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        name = getattr(self.fun, "__name__", "function")
        if self.fwd is None or self.bwd is None:
            raise TypeError(f"custom_vjp function {name!r} has no rule: call "
                            f"{name}.defvjp(fwd, bwd) before calling it")
        ctx = current_trace()
        if ctx is None or self._in_fwd:
            return self.fun(*args)
        nondiff = tuple(args[k] for k in self.nondiff_argnums)
        diff_args = tuple(a for k, a in enumerate(args) if k not in self.nondiff_argnums)
        in_leaves, in_tree = flatten(diff_args)
        start = len(ctx.nodes)
        self._in_fwd += 1
        try:
            result = self.fwd(*args)
        finally:
            self._in_fwd -= 1
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError(f"custom_vjp fwd of {name!r} must return a pair (output, "
                            f"residuals), got {type(result).__name__}")
        out, residuals = result
        out_leaves, out_tree = flatten(out)
        out_vars = []
        for leaf in out_leaves:
            var = p.as_var(ctx, leaf)
            out_vars.append(ctx.add_node(Op.CAST, (var,), var.aval, dtype=var.dtype))
        res_leaves, res_tree = flatten(residuals)
        inputs = tuple(p.as_var(ctx, x) if isinstance(x, Tracer) else None for x in in_leaves)
        res = tuple(p.as_var(ctx, r) if isinstance(r, Tracer) else r for r in res_leaves)
        if out_vars:
            ctx.annotations[out_vars[-1].id] = CustomVJP(
                name, start, len(ctx.nodes), inputs, in_tree, tuple(out_vars), out_tree, res,
                res_tree, self.bwd, nondiff)
        sources = p.sources_of(out_leaves)
        return unflatten(out_tree, [Tracer(ctx, v, sources) for v in out_vars])


def check_bwd_result(region: CustomVJP, result: Any) -> list:
    """Flattened input cotangents from what ``bwd`` returned, checked against the inputs."""
    n_args = len(region.input_tree.children)
    if not isinstance(result, (tuple, list)) or len(result) != n_args:
        got = (f"{len(result)} values" if isinstance(result, (tuple, list))
               else f"a {type(result).__name__}")
        raise TypeError(f"custom_vjp bwd of {region.name!r} must return a tuple with one "
                        f"cotangent per differentiable argument ({n_args}), got {got}")
    cts: list = []
    k = 0
    for arg, (sub, ct) in enumerate(zip(region.input_tree.children, result)):
        count = sub.num_leaves
        if ct is None:
            cts.extend([None] * count)
        else:
            leaves, _ = flatten(ct)
            if len(leaves) != count:
                raise TypeError(f"custom_vjp bwd of {region.name!r}: the cotangent for "
                                f"argument {arg} has {len(leaves)} leaves, the argument {count}")
            for leaf, var in zip(leaves, region.inputs[k:k + count]):
                shape = tuple(p.aval_of(leaf).shape) if leaf is not None else None
                if shape is not None and var is not None and shape != var.shape:
                    raise ValueError(
                        f"custom_vjp bwd of {region.name!r} returned a cotangent of shape "
                        f"{shape} for argument {arg} of shape {var.shape}; "
                        f"each cotangent must have its argument's shape")
            cts.extend(leaves)
        k += count
    return cts
