"""Whole Jacobians and Hessians: ``jacfwd``, ``jacrev`` (``jacobian``) and ``hessian``, as in
JAX: ``vmap`` of ``jvp`` over the standard basis of the inputs (forward mode, one column per
input element) or of ``vjp`` over the basis of the outputs (reverse mode, one row per output
element). Each Jacobian leaf has the output leaf's shape followed by the input leaf's.

>>> import numpy as np, arrjit, arrjit.numpy as anp
>>> arrjit.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
array([[2., 0.],
       [0., 4.]])
>>> arrjit.hessian(lambda x: anp.sum(x ** 3))(np.array([1.0, 2.0]))
array([[ 6.,  0.],
       [ 0., 12.]])
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from .. import numpy as anp
from ..batching import vmap
from ..core import primitives as p
from ..core.tree import TreeDef, flatten, unflatten
from .transforms import _argnums, _name, jvp, vjp

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian"]


def _check_inputs(leaves: Sequence[Any], holomorphic: bool, name: str) -> np.dtype:
    """The dtype of the standard basis; inputs must be real floating point (complex with
    ``holomorphic=True``), as JAX requires."""
    dtypes = [p.aval_of(x).dtype for x in leaves]
    for dtype in dtypes:
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires complex inputs, got "
                            f"{dtype.name}")
        if not holomorphic and dtype.kind != "f":
            hint = (" (use holomorphic=True for a holomorphic function of complex inputs)"
                    if dtype.kind == "c" else "; pass it as floats (x.astype(float))")
            raise TypeError(f"{name} requires real-valued inputs (a floating-point dtype), "
                            f"got {dtype.name}{hint}")
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def _split_basis(flat: Any, leaves: Sequence[Any], axis: int) -> list[Any]:
    """``flat``'s ``axis`` (one entry per element of ``leaves``) cut into one piece per leaf,
    each reshaped to its leaf's shape and cast to its dtype."""
    pieces, start = [], 0
    for leaf in leaves:
        aval = p.aval_of(leaf)
        size = math.prod(aval.shape)
        index = [slice(None)] * anp.ndim(flat)
        index[axis] = slice(start, start + size)
        piece = flat[tuple(index)]
        shape = list(anp.shape(piece))
        shape[axis:axis + 1] = aval.shape
        pieces.append(anp.astype(anp.reshape(piece, tuple(shape)), aval.dtype))
        start += size
    return pieces


def _partial(fun: Callable, args: tuple, kwargs: dict, nums: tuple[int, ...]) -> Callable:
    def partial_fun(*diff_args):
        full = list(args)
        for k, a in zip(nums, diff_args):
            full[k] = a
        return fun(*full, **kwargs)
    return partial_fun


def _nest(out_tree: TreeDef, in_tree: TreeDef, blocks: list[list[Any]], single: bool) -> Any:
    """The Jacobian pytree: the output's structure, each of its leaves the inputs' structure
    (a tuple over ``argnums`` when it is a tuple)."""
    per_output = []
    for row in blocks:
        args = unflatten(in_tree, row)
        per_output.append(args[0] if single else tuple(args))
    return unflatten(out_tree, per_output)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``fun`` by forward mode (``vmap`` of ``jvp``): efficient for functions
    with fewer inputs than outputs. ``jacfwd(f)(x)[i..., j...] = d f(x)[i...] / d x[j...]``.
    With ``has_aux=True``, ``fun`` returns ``(output, aux)`` and so does the Jacobian
    function."""
    name = f"jacfwd({_name(fun)})"

    @functools.wraps(fun)
    def jacfwd_fun(*args, **kwargs):
        nums = _argnums(argnums, len(args), name)
        diff = tuple(args[k] for k in nums)
        in_leaves, in_tree = flatten(diff)
        dtype = _check_inputs(in_leaves, holomorphic, name)
        size = sum(math.prod(p.aval_of(x).shape) for x in in_leaves)
        partial_fun = _partial(fun, args, kwargs, nums)

        def push_forward(column):
            tangents = unflatten(in_tree, _split_basis(column, in_leaves, 0))
            result = jvp(partial_fun, diff, tangents, has_aux=has_aux)
            return (result[1], result[2]) if has_aux else result[1]

        out_axes = (-1, None) if has_aux else -1
        pushed = vmap(push_forward, out_axes=out_axes)(np.eye(size, dtype=dtype))
        columns, aux = pushed if has_aux else (pushed, None)
        out_leaves, out_tree = flatten(columns)
        blocks = [_split_basis(leaf, in_leaves, anp.ndim(leaf) - 1) for leaf in out_leaves]
        jac = _nest(out_tree, in_tree, blocks, isinstance(argnums, int))
        return (jac, aux) if has_aux else jac

    jacfwd_fun.__name__ = name
    return jacfwd_fun


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The Jacobian of ``fun`` by reverse mode (``vmap`` of ``vjp``): efficient for functions
    with fewer outputs than inputs. Same layout and arguments as ``jacfwd``."""
    name = f"jacrev({_name(fun)})"

    @functools.wraps(fun)
    def jacrev_fun(*args, **kwargs):
        nums = _argnums(argnums, len(args), name)
        diff = tuple(args[k] for k in nums)
        in_leaves, in_tree = flatten(diff)
        if not allow_int:
            _check_inputs(in_leaves, holomorphic, name)
        result = vjp(_partial(fun, args, kwargs, nums), *diff, has_aux=has_aux)
        y, pull_back = result[0], result[1]
        out_leaves, out_tree = flatten(y)
        dtype = np.result_type(*[p.aval_of(x).dtype for x in out_leaves])
        size = sum(math.prod(p.aval_of(x).shape) for x in out_leaves)

        def pull(row):
            cotangent = unflatten(out_tree, _split_basis(row, out_leaves, 0))
            return flatten(pull_back(cotangent))[0]

        rows = vmap(pull)(np.eye(size, dtype=dtype))
        blocks: list[list[Any]] = [[] for _ in out_leaves]
        for column in rows:           # one per input leaf: (size,) + its shape
            for k, piece in enumerate(_split_basis(column, out_leaves, 0)):
                blocks[k].append(piece)
        jac = _nest(out_tree, in_tree, blocks, isinstance(argnums, int))
        return (jac, result[2]) if has_aux else jac

    jacrev_fun.__name__ = name
    return jacrev_fun


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian of a scalar ``fun``: ``jacfwd(jacrev(fun))`` (forward over reverse)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
