"""``arrjit.tree_util``: the ``jax.tree_util`` spellings of ``arrjit.tree``.

>>> from arrjit.tree_util import tree_map, tree_leaves
>>> tree_map(lambda x: x + 1, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (3, 4)}
>>> tree_leaves([1, (2, None)])
[1, 2]
"""
from __future__ import annotations

from .core.tree import TreeDef as PyTreeDef, register_pytree_node
from .tree import (all as tree_all, flatten as tree_flatten, flatten_with_path as
                   tree_flatten_with_path, leaves as tree_leaves, leaves_with_path as
                   tree_leaves_with_path, map as tree_map, map_with_path as tree_map_with_path,
                   reduce as tree_reduce, structure as tree_structure, transpose as
                   tree_transpose, unflatten as tree_unflatten)

__all__ = ["tree_map", "tree_leaves", "tree_structure", "tree_flatten", "tree_unflatten",
           "tree_reduce", "tree_all", "tree_transpose", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "register_pytree_node",
           "register_pytree_node_class", "PyTreeDef"]


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` with its ``tree_flatten`` method and
    ``tree_unflatten`` classmethod (as ``jax.tree_util.register_pytree_node_class``)."""
    register_pytree_node(cls, lambda obj: obj.tree_flatten(), cls.tree_unflatten)
    return cls
