"""Pytrees: nested tuples, lists, dicts, namedtuples and None, flattened to leaves and back.

>>> leaves, tree = flatten({"b": [1, 2], "a": (3, None)})
>>> leaves
[3, 1, 2]
>>> unflatten(tree, [30, 10, 20])
{'a': (30, None), 'b': [10, 20]}
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

# type -> (to_children(obj) -> (children, aux), from_children(aux, children) -> obj)
_REGISTRY: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable) -> None:
    """Register a container type: ``flatten_fn(obj) -> (children, aux_data)`` and
    ``unflatten_fn(aux_data, children) -> obj``. Structures compare their aux data by
    equality (``jit`` keys its cache by it): static configuration belongs there, arrays in
    the children."""
    _REGISTRY[cls] = (flatten_fn, unflatten_fn)


register_pytree_node(tuple, lambda t: (list(t), None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda _, c: list(c))
register_pytree_node(dict, lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                     lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda _: ([], None), lambda _, c: None)


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _same_aux(a: Any, b: Any) -> bool:
    """Aux data compared by equality, as JAX compares it; a comparison that does not give
    one truth value (arrays) falls back to identity."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _aux_hash(aux: Any) -> int:
    """A hash consistent with ``_same_aux``: the value's own where it has one, else its
    type's (unhashable aux data, such as a dict, still keys caches; equality decides)."""
    try:
        return hash(aux)
    except TypeError:
        return hash(type(aux))


@dataclass(frozen=True, eq=False)
class TreeDef:
    """The structure of a pytree: node type, aux data, child structures. ``None`` = a leaf.

    Two structures are equal when their node types and children are, and their aux data
    compare equal (aux data need not be hashable).

    >>> _, tree = flatten({"a": 1, "b": (2, 3)})
    >>> tree.num_leaves, str(tree)
    (3, 'dict(*, tuple(*, *))')
    >>> tree.unflatten([10, 20, 30])
    {'a': 10, 'b': (20, 30)}
    """

    kind: type | None
    aux: Any
    children: tuple["TreeDef", ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeDef):
            return NotImplemented
        return (self.kind is other.kind and self.children == other.children
                and _same_aux(self.aux, other.aux))

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:   # computed once: structures key every call's cache lookup
        return hash((self.kind, _aux_hash(self.aux), self.children))

    def unflatten(self, leaves) -> Any:
        """The pytree of this structure with ``leaves`` (as ``jax.tree.unflatten``)."""
        return unflatten(self, leaves)

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def __str__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(str(c) for c in self.children)
        return f"{self.kind.__name__}({inner})"


LEAF = TreeDef(None, None, ())


def _node_functions(obj: Any):
    if _is_namedtuple(obj):
        cls = type(obj)
        return (lambda t: (list(t), None)), (lambda _, c: cls(*c))
    return _REGISTRY.get(type(obj))


def node_children(obj: Any) -> tuple[type, Any, list[Any]] | None:
    """A container's type, aux data and children (one level); None for a leaf."""
    fns = _node_functions(obj)
    if fns is None:
        return None
    children, aux = fns[0](obj)
    return type(obj), aux, list(children)


def flatten_with_paths(obj: Any, path: str = "", is_leaf: Callable[[Any], bool] | None = None
                       ) -> tuple[list[Any], list[str], TreeDef]:
    """Leaves, their paths (``"[0]"``, ``"['w']"``, ``".field"``) and the structure;
    ``is_leaf(node)`` true makes a node a leaf however it could be flattened further."""
    fns = _node_functions(obj)
    if fns is None or (is_leaf is not None and is_leaf(obj)):
        return [obj], [path], LEAF
    children, aux = fns[0](obj)
    if _is_namedtuple(obj):
        labels = [f".{f}" for f in type(obj)._fields]
    elif isinstance(obj, dict):
        labels = [f"[{k!r}]" for k in sorted(obj)]
    else:
        labels = [f"[{i}]" for i in range(len(children))]
    leaves: list[Any] = []
    paths: list[str] = []
    subtrees = []
    for child, label in zip(children, labels):
        l, p, t = flatten_with_paths(child, path + label, is_leaf)
        leaves.extend(l)
        paths.extend(p)
        subtrees.append(t)
    return leaves, paths, TreeDef(type(obj), aux, tuple(subtrees))


def flatten(obj: Any, is_leaf: Callable[[Any], bool] | None = None
            ) -> tuple[list[Any], TreeDef]:
    leaves, _, tree = flatten_with_paths(obj, "", is_leaf)
    return leaves, tree


def unflatten(tree: TreeDef, leaves) -> Any:
    return _build(tree, iter(leaves))


def _build(tree: TreeDef, it) -> Any:
    if tree.kind is None:
        return next(it)
    children = [_build(c, it) for c in tree.children]
    if tree.kind in _REGISTRY:
        return _REGISTRY[tree.kind][1](tree.aux, children)
    return tree.kind(*children)  # a namedtuple


def tree_map(fn: Callable, obj: Any) -> Any:
    leaves, tree = flatten(obj)
    return unflatten(tree, [fn(x) for x in leaves])


def subtrees_at(prefix: TreeDef, obj: Any) -> list[Any]:
    """The subtrees of ``obj`` at the places of ``prefix``'s leaves (``prefix`` is the
    structure of a tree whose nodes ``obj`` shares down to those leaves); ValueError naming
    both structures when they do not match.

    >>> _, prefix = flatten((0, 0))
    >>> subtrees_at(prefix, (1, {"a": 2, "b": 3}))
    [1, {'a': 2, 'b': 3}]
    """
    if prefix.kind is None:
        return [obj]
    parts = node_children(obj)
    if (parts is None or parts[0] is not prefix.kind or not _same_aux(parts[1], prefix.aux)
            or len(parts[2]) != len(prefix.children)):
        _, obj_tree = flatten(obj)
        raise ValueError(f"the structure {obj_tree} does not match {prefix}")
    return [sub for child_prefix, child in zip(prefix.children, parts[2])
            for sub in subtrees_at(child_prefix, child)]

