"""Loads nothing reads, dropped from a generated function.

A loop driver loads each small argument into registers at its entry (``loopfunctions``) and
binds each inlined kernel's operands to locals (``inlining``); a kernel that folded a constant
operand into literals leaves such a local, and the load behind it, unread. numba types and
lowers every statement before LLVM drops the dead ones, so each costs compile time.

>>> source = '''def driver(c0, now0):
...     c0_s = (_M.flat(c0)[0], _M.flat(c0)[1],)
...     now0_s = _M.flat(now0)[0]
...     while True:
...         k1_r0 = now0_s
...         k1_r1 = c0_s
...         now0_s = k1_r0 + 1.0
...     return now0_s
... '''
>>> print(without_unused_loads(source))
def driver(c0, now0):
    now0_s = _M.flat(now0)[0]
    while True:
        k1_r0 = now0_s
        now0_s = k1_r0 + 1.0
    return now0_s
<BLANKLINE>
"""
from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=256)
def without_unused_loads(source: str) -> str:
    """``source`` (functions) without the assignments of loads to locals that nothing reads:
    a local bound to a name, a constant, an element of an array (``_M.flat(x)[k]``, ``x[k]``)
    or a tuple of these, which cannot raise. A block keeps at least one statement."""
    lines = source.split("\n")
    while True:
        dead = _unused_loads(ast.parse("\n".join(lines)))
        if not dead:
            return "\n".join(lines)
        lines = [line for k, line in enumerate(lines, start=1) if k not in dead]


def _unused_loads(module: ast.Module) -> set[int]:
    """The line numbers of the unread loads of ``module`` (each a statement on one line)."""
    read = {n.id for n in ast.walk(module) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}
    dead: set[int] = set()
    for block in _blocks(module):
        removable = [s for s in block if isinstance(s, ast.Assign) and len(s.targets) == 1
                     and isinstance(s.targets[0], ast.Name) and s.targets[0].id not in read
                     and _pure(s.value) and s.lineno == s.end_lineno]
        if len(removable) == len(block):
            removable = removable[1:]
        dead.update(s.lineno for s in removable)
    return dead


def _blocks(module: ast.Module):
    for node in ast.walk(module):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _pure(value: ast.expr) -> bool:
    if isinstance(value, (ast.Name, ast.Constant)):
        return True
    if isinstance(value, ast.Tuple):
        return all(_pure(e) for e in value.elts)
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
        return isinstance(value.value, ast.Name) or _flat_of_name(value.value)
    return False


def _flat_of_name(value: ast.expr) -> bool:
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "flat" and isinstance(value.func.value, ast.Name)
            and value.func.value.id == "_M" and len(value.args) == 1
            and isinstance(value.args[0], ast.Name) and not value.keywords)
