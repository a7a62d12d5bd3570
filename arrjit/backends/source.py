"""Numba-Python source text shared by the backends that generate it (CPU and CUDA): literals,
type names, and the elementwise ops whose expression is the same on every numba target.

Each expression entry takes (argument names, argument dtypes) and returns an expression.
Operands already have the op's loop dtype (fusion inserted the casts); ``expression`` casts
the result to the node's dtype. A backend's table is ``NEUTRAL_EXPRESSIONS`` plus its own
entries for the ops that call math functions.

>>> import numpy as np
>>> NEUTRAL_EXPRESSIONS[Op.ADD](("a", "b"), (np.dtype("float64"),) * 2)
'(a + b)'
>>> literal(float("inf"), np.dtype("float32"))
'np.float32(np.inf)'
"""
from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from ..core.ir import Op
from ..passes.kernel import Compute, Const


def type_name(dtype: np.dtype) -> str:
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def literal(value, dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return repr(bool(value))
    if dtype.kind == "f":
        v = float(value)
        if v != v:
            text = "np.nan"
        elif v in (float("inf"), float("-inf")):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(v)
        return f"{type_name(dtype)}({text})"
    return f"{type_name(dtype)}({int(value)})"


def constant_text(const: Const, slot: Callable[[int], str]) -> str:
    """A kernel constant: a literal, or for a value from shapes (``Const.runtime``, always an
    integer) the run-time parameter ``slot`` assigns it, so the source does not depend on
    sizes."""
    if const.runtime and float(const.value).is_integer():  # type: ignore[arg-type]
        return f"{type_name(const.dtype)}({slot(int(const.value))})"  # type: ignore[call-overload]
    return literal(const.value, const.dtype)


def extreme(dtype: np.dtype, largest: bool) -> str:
    """The largest (or smallest) value of ``dtype``: the identity of min (max) reductions."""
    if dtype == np.bool_:
        return repr(largest)
    if dtype.kind == "f":
        return f"{type_name(dtype)}({'np.inf' if largest else '-np.inf'})"
    info = np.iinfo(dtype)
    return literal(info.max if largest else info.min, dtype)


Expr = Callable[[tuple[str, ...], tuple[np.dtype, ...]], str]


def by_kind(float_: str, int_: str, uint: str | None = None, bool_: str | None = None) -> Expr:
    """A template per dtype kind: ``{a}``/``{b}`` are the operands, ``{Z}``/``{O}`` zero and
    one of the operand dtype, ``{bits}`` its width."""
    def render(args, dts):
        kind = dts[0].kind
        template = {"f": float_, "i": int_, "u": uint or int_, "b": bool_ or int_}[kind]
        names = dict(zip("ab", args))
        names["Z"] = literal(0, dts[0])
        names["O"] = literal(1, dts[0])
        names["bits"] = dts[0].itemsize * 8
        return template.format(**names)
    return render


def call(fn: str) -> Expr:
    return lambda args, dts: f"{fn}({', '.join(args)})"


def infix(sym: str) -> Expr:
    return lambda args, dts: f"({args[0]} {sym} {args[1]})"


NEUTRAL_EXPRESSIONS: dict[Op, Expr] = {
    Op.NEG: by_kind("(-{a})", "(-{a})", uint="({Z} - {a})"),
    Op.ABS: by_kind("abs({a})", "abs({a})", uint="{a}", bool_="{a}"),
    Op.SQUARE: by_kind("({a} * {a})", "({a} * {a})", bool_="{a}"),
    Op.LOGICAL_NOT: by_kind("({a} == 0)", "({a} == 0)", bool_="(not {a})"),
    Op.INVERT: by_kind("(~{a})", "(~{a})", bool_="(not {a})"),
    Op.ADD: by_kind("({a} + {b})", "({a} + {b})", bool_="({a} | {b})"),
    Op.SUB: infix("-"),
    Op.MUL: by_kind("({a} * {b})", "({a} * {b})", bool_="({a} & {b})"),
    Op.DIV: infix("/"),
    # INT_MIN // -1 overflows to INT_MIN in NumPy; an idiv would trap, so negate instead.
    Op.FLOORDIV: by_kind("({a} // {b})", "(-{a} if {b} == -1 else {a} // {b})",
                         uint="({a} // {b})"),
    Op.MOD: infix("%"),
    Op.MAXIMUM: by_kind("({a} if ({a} >= {b} or {a} != {a}) else {b})",
                        "({a} if {a} >= {b} else {b})", bool_="({a} | {b})"),
    Op.MINIMUM: by_kind("({a} if ({a} <= {b} or {a} != {a}) else {b})",
                        "({a} if {a} <= {b} else {b})", bool_="({a} & {b})"),
    Op.EQ: infix("=="),
    Op.NE: infix("!="),
    Op.LT: infix("<"),
    Op.LE: infix("<="),
    Op.GT: infix(">"),
    Op.GE: infix(">="),
    Op.LOGICAL_AND: lambda a, d: f"(({a[0]} != 0) & ({a[1]} != 0))",
    Op.LOGICAL_OR: lambda a, d: f"(({a[0]} != 0) | ({a[1]} != 0))",
    Op.LOGICAL_XOR: lambda a, d: f"(({a[0]} != 0) != ({a[1]} != 0))",
    Op.BITWISE_AND: infix("&"),
    Op.BITWISE_OR: infix("|"),
    Op.BITWISE_XOR: by_kind("", "({a} ^ {b})", bool_="({a} != {b})"),
    # NumPy defines shifts by >= the bit width (or negative amounts): 0, or -1 for a negative
    # signed value shifted right.
    Op.LEFT_SHIFT: by_kind("", "({a} << {b} if ({b} >= 0 and {b} < {bits}) else {Z})",
                           uint="({a} << {b} if {b} < {bits} else {Z})"),
    Op.RIGHT_SHIFT: by_kind(
        "", "({a} >> {b} if ({b} >= 0 and {b} < {bits}) else ({Z} - 1 if {a} < 0 else {Z}))",
        uint="({a} >> {b} if {b} < {bits} else {Z})"),
    Op.SELECT: lambda a, d: f"({a[1]} if {a[0]} else {a[2]})",
    Op.CAST: lambda a, d: a[0],  # the result cast below does the conversion
}


def expression(stmt: Compute, table: Mapping[Op, Expr]) -> str:
    """``stmt`` as an expression of ``table``, cast to its dtype."""
    if stmt.op is Op.CAST and stmt.dtype == np.bool_:
        return f"({stmt.args[0]} != 0)"
    inner = table[stmt.op](stmt.args, stmt.arg_dtypes)
    return f"{type_name(stmt.dtype)}({inner})"
