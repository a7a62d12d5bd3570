"""What differentiation must know about a traced value that the graph itself does not say.

Both are stored in ``Graph.annotations`` under the id of the var they mark; the compiler
ignores them, so a ``stop_gradient`` or a custom rule costs nothing in a program that is not
differentiated.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .ir import Op, Var
from .trace import Tracer
from .tree import TreeDef, tree_map


@dataclass(frozen=True)
class StopGradient:
    """The marked value is a constant to differentiation (``arrjit.stop_gradient``)."""


@dataclass(frozen=True)
class CustomVJP:
    """The nodes ``start`` to ``end`` (exclusive) of the graph compute a ``custom_vjp``
    function's outputs with its ``fwd``; reverse mode calls ``bwd`` instead of
    differentiating them. Marked on the var of the region's last node."""

    name: str
    start: int
    end: int
    inputs: tuple[Any, ...]          # per flattened differentiable argument: a Var or None
    input_tree: TreeDef
    outputs: tuple[Var, ...]
    output_tree: TreeDef
    residuals: tuple[Any, ...]       # per residual leaf: a Var, or a concrete value
    residual_tree: TreeDef
    bwd: Callable
    nondiff: tuple[Any, ...]         # values of the nondiff_argnums arguments, in order


def stop_gradient(x: Any) -> Any:
    """``x`` unchanged, but a constant to differentiation: no derivative flows through it.

    >>> import numpy as np, arrjit, arrjit.numpy as anp
    >>> arrjit.grad(lambda x: x * arrjit.stop_gradient(x))(3.0)
    array(3.)
    """
    def stop(leaf):
        if not isinstance(leaf, Tracer):
            return leaf
        ctx = leaf.ctx
        out = ctx.add_node(Op.CAST, (leaf.ir_var,), leaf.aval, dtype=leaf.dtype)
        ctx.annotations[out.id] = StopGradient()
        return Tracer(ctx, out, leaf.sources)

    return tree_map(stop, x)
