"""The transformations ``grad``, ``value_and_grad``, ``vjp`` and ``jvp``.

A function is traced to a graph of primitives; forward mode pushes tangents through it with
a rule per primitive, reverse mode pulls cotangents back through it. The derivative
computation is itself made of primitives recorded in whatever trace is running, so under
``jit`` it goes through the same simplify, fuse and compile pipeline as any program (and
fuses), and the transformations compose with each other, with ``jit`` and with ``vmap``.

>>> import numpy as np, arrjit, arrjit.numpy as anp
>>> arrjit.grad(lambda x: anp.sum(anp.sin(x) * x))(np.array([0.0, 1.0]))
array([0.        , 1.38177329])
>>> arrjit.jvp(lambda x: x ** 3, (2.0,), (1.0,))
(array(8.), array(12.))
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ..core import primitives as p
from ..core.trace import Tracer
from ..core.tree import TreeDef, flatten, unflatten
from .custom import custom_vjp
from ..core.marks import stop_gradient
from .forward import jvp_graph
from .graphs import input_values, split_outputs, trace_function
from .reverse import Linearized
from .values import is_inexact

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "stop_gradient", "custom_vjp", "float0"]

float0 = np.dtype([("float0", np.void, 0)])
"""The dtype of the (empty) cotangent of an integer or boolean input, as JAX's."""


def _name(fun: Callable) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


def _param_names(fun: Callable) -> list[str]:
    try:
        return [p.name for p in inspect.signature(fun).parameters.values()]
    except (TypeError, ValueError):
        return []


def _zero_cotangent(leaf: Any) -> Any:
    aval = p.aval_of(leaf)
    if is_inexact(aval.dtype):
        return np.zeros(aval.shape, aval.dtype)
    return np.zeros(aval.shape, float0)


def _materialize(cts: Sequence, leaves: Sequence) -> list:
    return [_array(ct) if ct is not None else _zero_cotangent(leaf)
            for ct, leaf in zip(cts, leaves)]


def _array(x: Any) -> Any:
    """Concrete results as arrays (NumPy's 0-d results come back as scalars)."""
    return x if isinstance(x, Tracer) else np.asarray(x)


def _arrays(tree: Any) -> Any:
    leaves, tree_def = flatten(tree)
    return unflatten(tree_def, [_array(x) if isinstance(x, (np.ndarray, np.generic)) else x
                                for x in leaves])


def _check_like(what: str, got: Any, expected_tree: TreeDef, expected: Sequence, name: str):
    leaves, tree = flatten(got)
    if tree != expected_tree:
        raise TypeError(f"{name}: the {what} must have the structure {expected_tree} of the "
                        f"values it pairs with, got {tree}")
    for k, (leaf, ref) in enumerate(zip(leaves, expected)):
        a, b = p.aval_of(leaf), p.aval_of(ref)
        if tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"{name}: {what} leaf {k} has shape {tuple(a.shape)}, but its "
                             f"value has shape {tuple(b.shape)}; they must be equal")
        if is_inexact(b.dtype) and not is_inexact(a.dtype) and not a.weak:
            raise TypeError(f"{name}: {what} leaf {k} is {a.dtype}, its value {b.dtype}: "
                            f"give a floating-point {what}")
    return leaves


def vjp(fun: Callable, *primals: Any, has_aux: bool = False):
    """``(fun(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` returns the cotangent of each
    primal (a tuple, one pytree per argument). With ``has_aux=True``, ``fun`` returns
    ``(output, aux)`` and the result is ``(output, vjp_fn, aux)``.

    >>> import numpy as np, arrjit, arrjit.numpy as anp
    >>> y, pull = arrjit.vjp(lambda x: x * x, np.array([1.0, 2.0]))
    >>> pull(np.ones(2))
    (array([2., 4.]),)
    """
    name = f"vjp({_name(fun)})"
    traced = trace_function(fun, primals, name, _param_names(fun), has_aux)
    leaves, _ = flatten(tuple(primals))
    values = input_values(traced, leaves)
    active = [is_inexact(p.aval_of(x).dtype) for x in leaves] + [False] * len(traced.lifted)
    lin = Linearized(traced.graph, values, active)
    out, aux = split_outputs(traced, lin.outputs)
    out = _arrays(out)
    out_leaves = lin.outputs[:traced.n_out]
    n_aux = len(lin.outputs) - traced.n_out

    def vjp_fn(cotangent):
        ct_leaves = _check_like("cotangent", cotangent, traced.out_tree, out_leaves, name)
        cts = lin.backward(list(ct_leaves) + [None] * n_aux)[:len(leaves)]
        return tuple(unflatten(traced.in_tree, _materialize(cts, leaves)))

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False):
    """``(fun(*primals), tangent of the output)``: the directional derivative of ``fun`` at
    ``primals`` along ``tangents`` (forward mode). Works through ``lax.while_loop``.

    >>> import arrjit, arrjit.numpy as anp
    >>> arrjit.jvp(anp.sin, (0.0,), (2.0,))
    (array(0.), array(2.))
    """
    name = f"jvp({_name(fun)})"
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"{name}: primals and tangents must be tuples (one entry per argument), "
                        f"got {type(primals).__name__} and {type(tangents).__name__}")
    traced = trace_function(fun, tuple(primals), name, _param_names(fun), has_aux)
    leaves, _ = flatten(tuple(primals))
    t_leaves = _check_like("tangent", tuple(tangents), traced.in_tree, leaves, name)
    t_leaves = [t if is_inexact(p.aval_of(x).dtype) else None for t, x in zip(t_leaves, leaves)]
    values = input_values(traced, leaves)
    t_values = [_tangent_value(t, x)
                for t, x in zip(t_leaves, leaves)] + [None] * len(traced.lifted)
    outs, touts = jvp_graph(traced.graph, values, t_values)
    out, aux = split_outputs(traced, outs)
    t_out = [_array(t) if t is not None else _zero_cotangent(o)
             for t, o in zip(touts[:traced.n_out], outs[:traced.n_out])]
    result = (_arrays(out), unflatten(traced.out_tree, t_out))
    return result + (aux,) if has_aux else result


def _tangent_value(t: Any, x: Any) -> Any:
    if t is None:
        return None
    if isinstance(t, Tracer):
        return t
    return np.asarray(t, dtype=p.aval_of(x).dtype)


def _argnums(argnums, n_args: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for k in nums:
        if not -n_args <= k < n_args:
            raise TypeError(f"{name}: differentiating with respect to argnums={argnums} "
                            f"requires at least {max(nums) + 1} positional arguments, but got "
                            f"{n_args}")
    return tuple(k % n_args for k in nums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   allow_int: bool = False) -> Callable:
    """A function returning ``(fun(*args), gradient)``, the gradient of the scalar output
    with respect to the arguments at ``argnums`` (one pytree, or a tuple of them when
    ``argnums`` is a tuple). With ``has_aux=True``: ``((value, aux), gradient)``.

    >>> import numpy as np, arrjit, arrjit.numpy as anp
    >>> arrjit.value_and_grad(lambda w, x: anp.sum((x @ w) ** 2))(np.ones(2), np.eye(2))
    (array(2.), array([2., 2.]))
    """
    name = f"grad({_name(fun)})"

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = _argnums(argnums, len(args), name)
        names = _param_names(fun)
        diff = tuple(args[k] for k in nums)
        for k in nums:
            for leaf in flatten(args[k])[0]:
                dtype = p.aval_of(leaf).dtype
                if not is_inexact(dtype) and not allow_int:
                    arg = names[k] if k < len(names) else f"argument {k}"
                    raise TypeError(
                        f"{name} requires real- or complex-valued inputs (a floating-point or "
                        f"complex dtype), but got {dtype.name} for {arg!r}. Pass it as floats "
                        f"(x.astype(float)), leave it out of argnums, or use vjp or "
                        f"allow_int=True for a zero (float0) gradient.")

        def partial_fun(*diff_args):
            full = list(args)
            for k, a in zip(nums, diff_args):
                full[k] = a
            return fun(*full, **kwargs)

        arg_names = [names[k] if k < len(names) else f"args[{k}]" for k in nums]
        traced = trace_function(partial_fun, diff, name, arg_names, has_aux)
        if traced.n_out != 1:
            raise TypeError(f"{name}: gradient only defined for scalar-output functions; the "
                            f"function returned {traced.n_out} arrays ({traced.out_tree}). "
                            f"Return one scalar (has_aux=True returns more beside it), or "
                            f"use arrjit.vjp")
        out_var = traced.graph.outputs[0]
        if out_var.shape != ():
            raise TypeError(f"{name}: gradient only defined for scalar-output functions. "
                            f"Output had shape: {out_var.shape}. Reduce it (for example "
                            f".sum() or .mean()) or use arrjit.vjp for a vector-Jacobian "
                            f"product.")
        if out_var.dtype.kind != "f":
            raise TypeError(f"{name} requires real-valued outputs (a floating-point dtype), "
                            f"but got {out_var.dtype.name}. Take anp.real or anp.abs of a "
                            f"complex output; an integer output has no gradient.")
        leaves, _ = flatten(diff)
        values = input_values(traced, leaves)
        active = [is_inexact(p.aval_of(x).dtype) for x in leaves] + [False] * len(
            traced.lifted)
        lin = Linearized(traced.graph, values, active)
        value, aux = split_outputs(traced, lin.outputs)
        value = _arrays(value)
        seed = np.ones((), out_var.dtype)
        cts = lin.backward([seed] + [None] * (len(lin.outputs) - 1))[:len(leaves)]
        grads = unflatten(traced.in_tree, _materialize(cts, leaves))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((value, aux), g) if has_aux else (value, g)

    value_and_grad_fun.__name__ = f"value_and_grad({_name(fun)})"
    return value_and_grad_fun


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         allow_int: bool = False) -> Callable:
    """The gradient of a scalar-valued ``fun`` with respect to the arguments at ``argnums``
    (a pytree like the argument; a tuple of them when ``argnums`` is a tuple). With
    ``has_aux=True``, ``fun`` returns ``(value, aux)`` and the result is ``(gradient, aux)``.
    Composes with ``jit`` (either order), ``vmap`` and itself.

    >>> import numpy as np, arrjit, arrjit.numpy as anp
    >>> arrjit.grad(lambda p: anp.sum(p["w"] ** 2) + p["b"])({"w": np.ones(2), "b": 1.0})
    {'b': array(1.), 'w': array([2., 2.])}
    >>> arrjit.grad(arrjit.grad(anp.sin))(0.5)
    array(-0.47942554)
    """
    vg = value_and_grad(fun, argnums, has_aux, allow_int)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        result = vg(*args, **kwargs)
        if has_aux:
            (_, aux), g = result
            return g, aux
        return result[1]

    grad_fun.__name__ = f"grad({_name(fun)})"
    return grad_fun
