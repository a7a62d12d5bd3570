"""A generated function's body as statements of its caller (a loop driver calls each kernel
of its body this way): the function's locals renamed apart, its parameters bound to the
caller's expressions.

numba compiles a function a driver calls as a function of its own (typed, lowered and
optimised) before LLVM inlines it; statements of the driver are typed and lowered once, with
the driver.
"""
from __future__ import annotations

import ast
import copy
from functools import lru_cache
from typing import Sequence


class NotInlinable(ValueError):
    """The function's body cannot stand as statements of its caller (it returns, assigns a
    parameter inside a loop or branch, or calls a function its own source defines)."""


def inline_body(source: str, name: str, prefix: str, arguments: Sequence[str]) -> list[str]:
    """The statements of function ``name`` of module ``source`` called with the expressions
    ``arguments``: each local ``v`` renamed ``<prefix>v``, each parameter read as its
    argument (until the body assigns it: a kernel's views, ``w0 = _M.flat(w0)``, at its top
    level).

    >>> source = "def f(w0, n):\\n    w0 = flat(w0)\\n    for i in range(n):\\n" \\
    ...          "        w0[i] = i\\n"
    >>> inline_body(source, "f", "a1_", ["now2", "E[0]"])
    ['a1_w0_1 = flat(now2)', 'for a1_i in range(E[0]):', '    a1_w0_1[a1_i] = a1_i']
    """
    function = _function(source, name)
    params = [a.arg for a in function.args.args]
    if len(params) != len(arguments) or function.args.vararg or function.args.kwonlyargs:
        raise ValueError(f"inline_body: {name} takes {params}, not {len(arguments)} arguments")
    stored = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)}
    bound = {p: ast.parse(a, mode="eval").body for p, a in zip(params, arguments)}
    renamer = _Renamer(prefix, bound, stored - set(params))
    lines: list[str] = []
    for stmt in function.body:
        if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            raise NotInlinable(f"{name} returns")
        assigned = _assigned_params(stmt, params)
        if assigned and not isinstance(stmt, ast.Assign):
            raise NotInlinable(f"{name} assigns {sorted(assigned)} inside a block")
        stmt = renamer.statement(stmt, assigned)
        lines.extend(ast.unparse(stmt).split("\n"))
    return lines


@lru_cache(maxsize=256)
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


def _function(source: str, name: str) -> ast.FunctionDef:
    functions = {node.name: node for node in _parsed(source).body
                 if isinstance(node, ast.FunctionDef)}
    if name not in functions:
        raise ValueError(f"inline_body: no function {name!r} in the source")
    if len(functions) > 1:     # its helpers would be missing from the caller's module
        raise NotInlinable(f"{name}'s source defines {sorted(set(functions) - {name})} too")
    return functions[name]


def _assigned_params(stmt: ast.stmt, params: list[str]) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store) and n.id in params}


class _Renamer(ast.NodeTransformer):
    """Renames a function's names as ``inline_body`` describes; a new tree per statement (the
    parsed module is shared)."""

    def __init__(self, prefix: str, bound: dict[str, ast.expr], locals_: set[str]):
        self.prefix = prefix
        self.bound = bound          # parameter -> what it reads as now
        self.locals = locals_
        self.versions: dict[str, int] = {}

    def statement(self, stmt: ast.stmt, assigned: set[str]) -> ast.stmt:
        stmt = copy.deepcopy(stmt)     # renamed in place
        if not assigned:
            return self.visit(stmt)
        assert isinstance(stmt, ast.Assign)
        stmt.value = self.visit(stmt.value)      # reads the parameter's current value
        for p in sorted(assigned):
            self.versions[p] = self.versions.get(p, 0) + 1
            self.bound[p] = ast.Name(f"{self.prefix}{p}_{self.versions[p]}", ast.Load())
        stmt.targets = [self.visit(t) for t in stmt.targets]
        return stmt

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.bound:
            target = self.bound[node.id]
            if isinstance(node.ctx, ast.Store):
                assert isinstance(target, ast.Name)
                return ast.Name(target.id, ast.Store())
            return target
        if node.id in self.locals:
            return ast.Name(self.prefix + node.id, node.ctx)
        return node
