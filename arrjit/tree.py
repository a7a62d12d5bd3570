"""``arrjit.tree``: pytree utilities, as ``jax.tree``.

A pytree is a nest of tuples, lists, dicts, namedtuples, None and registered containers
(``arrjit.register_pytree_node``) whose leaves are anything else.

>>> import arrjit
>>> params = {"w": [1.0, 2.0], "b": 3.0}
>>> arrjit.tree.map(lambda x: x * 10, params)
{'b': 30.0, 'w': [10.0, 20.0]}
>>> arrjit.tree.leaves(params)
[3.0, 1.0, 2.0]
>>> leaves, treedef = arrjit.tree.flatten(params)
>>> arrjit.tree.unflatten(treedef, [0, 1, 2])
{'b': 0, 'w': [1, 2]}
>>> arrjit.tree.reduce(lambda a, b: a + b, params)
6.0
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable

from .core.tree import (TreeDef, flatten as _flatten, flatten_with_paths, subtrees_at,
                        unflatten as _unflatten)

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all",
           "transpose", "leaves_with_path", "map_with_path", "flatten_with_path", "TreeDef"]

IsLeaf = Callable[[Any], bool] | None
_NO_INITIALIZER = object()


def flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], TreeDef]:
    """``(leaves, treedef)``: the leaves in order and the structure that rebuilds the tree."""
    return _flatten(tree, is_leaf)


def unflatten(treedef: TreeDef, leaves) -> Any:
    """The pytree of structure ``treedef`` with ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"the structure {treedef} has {treedef.num_leaves} leaves, but "
                         f"{len(leaves)} were given")
    return _unflatten(treedef, leaves)


def leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """The leaves of ``tree``, in flattening order (dict keys sorted)."""
    return _flatten(tree, is_leaf)[0]


def structure(tree: Any, is_leaf: IsLeaf = None) -> TreeDef:
    """The structure of ``tree`` (its ``TreeDef``)."""
    return _flatten(tree, is_leaf)[1]


def map(f: Callable, tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:  # noqa: A001
    """``f`` applied leaf by leaf: ``f(leaf, *matching leaves of rest)``; every tree of
    ``rest`` has ``tree``'s structure (or a leaf of ``tree`` stands for a whole subtree).

    >>> map(lambda a, b: a + b, (1, [2]), (10, [20]))
    (11, [22])
    """
    found, treedef = _flatten(tree, is_leaf)
    others = [_leaves_like(treedef, other, k) for k, other in enumerate(rest, 1)]
    return _unflatten(treedef, [f(*args) for args in zip(found, *others)])


def _leaves_like(treedef: TreeDef, other: Any, position: int) -> list[Any]:
    """``other``'s subtrees at the places of ``treedef``'s leaves."""
    try:
        return subtrees_at(treedef, other)
    except ValueError:
        raise ValueError(f"tree.map: argument {position + 1} has the structure "
                         f"{structure(other)}, which does not match the first tree's "
                         f"{treedef}") from None


def reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIALIZER,
           is_leaf: IsLeaf = None) -> Any:
    """``functools.reduce(function, leaves(tree)[, initializer])``."""
    found = leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, found)
    return functools.reduce(function, found, initializer)


def all(tree: Any, is_leaf: IsLeaf = None) -> bool:  # noqa: A001
    """Whether every leaf is truthy."""
    return builtins.all(leaves(tree, is_leaf))


def transpose(outer_treedef: TreeDef, inner_treedef: TreeDef, tree: Any) -> Any:
    """A tree of structure outer-of-inner turned into inner-of-outer.

    >>> transpose(structure([0, 0]), structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    found = leaves(tree)
    n_inner = inner_treedef.num_leaves
    if len(found) != outer_treedef.num_leaves * n_inner:
        raise ValueError(f"tree.transpose: the tree has {len(found)} leaves, not "
                         f"{outer_treedef.num_leaves} x {n_inner}")
    rows = [found[k * n_inner:(k + 1) * n_inner] for k in range(outer_treedef.num_leaves)]
    return _unflatten(inner_treedef, [_unflatten(outer_treedef, [row[j] for row in rows])
                                      for j in range(n_inner)])


def flatten_with_path(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[tuple[str, Any]],
                                                                    TreeDef]:
    """``([(path, leaf), ...], treedef)``; a path reads like the indexing that reaches the
    leaf: ``"['w'][0]"``, ``".field"``."""
    found, paths, treedef = flatten_with_paths(tree, "", is_leaf)
    return list(zip(paths, found)), treedef


def leaves_with_path(tree: Any, is_leaf: IsLeaf = None) -> list[tuple[str, Any]]:
    """``[(path, leaf), ...]`` (see ``flatten_with_path``)."""
    return flatten_with_path(tree, is_leaf)[0]


def map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """``f(path, leaf, *matching leaves of rest)`` leaf by leaf."""
    pairs, treedef = flatten_with_path(tree, is_leaf)
    others = [_leaves_like(treedef, other, k) for k, other in enumerate(rest, 1)]
    return _unflatten(treedef, [f(path, leaf, *more)
                                for (path, leaf), *more in zip(pairs, *others)])

