"""Pytrees: nested tuples, lists, dicts, namedtuples and None, flattened to leaves and back.

>>> leaves, tree = flatten({"b": [1, 2], "a": (3, None)})
>>> leaves
[3, 1, 2]
>>> unflatten(tree, [30, 10, 20])
{'a': (30, None), 'b': [10, 20]}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable

# type -> (to_children(obj) -> (children, aux), from_children(aux, children) -> obj)
_REGISTRY: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable) -> None:
    """Register a container type: ``flatten_fn(obj) -> (children, aux_data)`` and
    ``unflatten_fn(aux_data, children) -> obj`` (aux_data must be hashable)."""
    _REGISTRY[cls] = (flatten_fn, unflatten_fn)


register_pytree_node(tuple, lambda t: (list(t), None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda _, c: list(c))
register_pytree_node(dict, lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                     lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda _: ([], None), lambda _, c: None)


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree: node type, aux data, child structures. ``None`` = a leaf."""

    kind: type | None
    aux: Hashable
    children: tuple["TreeDef", ...]

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


def flatten_with_paths(obj: Any, path: str = "") -> tuple[list[Any], list[str], TreeDef]:
    """Leaves, their paths (``"[0]"``, ``"['w']"``, ``".field"``) and the structure."""
    fns = _node_functions(obj)
    if fns is None:
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
        l, p, t = flatten_with_paths(child, path + label)
        leaves.extend(l)
        paths.extend(p)
        subtrees.append(t)
    return leaves, paths, TreeDef(type(obj), aux, tuple(subtrees))


def flatten(obj: Any) -> tuple[list[Any], TreeDef]:
    leaves, _, tree = flatten_with_paths(obj)
    return leaves, tree


def unflatten(tree: TreeDef, leaves) -> Any:
    it = iter(leaves)
    out = _build(tree, it)
    return out


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
