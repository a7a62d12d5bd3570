"""The CPU expression table: how each elementwise op reads as numba source.

Each entry takes (argument names, argument dtypes) and returns an expression. Operands
already have the op's loop dtype (fusion inserted the casts); ``expression`` casts the result
to the node's dtype.

>>> import numpy as np
>>> EXPRESSIONS[Op.ADD](("a", "b"), (np.dtype("float64"),) * 2)
'(a + b)'
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...core.ir import Op
from ...passes.kernel import Compute


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


# Each entry: (argument names, argument dtypes) -> expression text. Operands already have the
# op's loop dtype (fusion inserted the casts); the result is cast to the node's dtype after.
Expr = Callable[[tuple[str, ...], tuple[np.dtype, ...]], str]


def _by_kind(float_: str, int_: str, uint: str | None = None, bool_: str | None = None) -> Expr:
    def render(args, dts):
        kind = dts[0].kind
        template = {"f": float_, "i": int_, "u": uint or int_, "b": bool_ or int_}[kind]
        names = dict(zip("ab", args))
        names["Z"] = literal(0, dts[0])
        names["O"] = literal(1, dts[0])
        names["bits"] = dts[0].itemsize * 8
        return template.format(**names)
    return render


def _math(name: str, libm: str, integer: Expr | None = None) -> Expr:
    """A float function of ``mathlib`` (vectorisable) by width; for other kinds ``integer``
    or the C library's ``libm``."""
    suffix = {4: "32", 8: "64"}

    def render(args, dts):
        if dts[0].kind == "f" and dts[0].itemsize in suffix:
            joiner = "_" if name[-1].isdigit() else ""
            return f"_M.{name}{joiner}{suffix[dts[0].itemsize]}({', '.join(args)})"
        if integer is not None:
            return integer(args, dts)
        return f"{libm}({', '.join(args)})"
    return render


def _call(fn: str) -> Expr:
    return lambda args, dts: f"{fn}({', '.join(args)})"


def _infix(sym: str) -> Expr:
    return lambda args, dts: f"({args[0]} {sym} {args[1]})"


EXPRESSIONS: dict[Op, Expr] = {
    Op.NEG: _by_kind("(-{a})", "(-{a})", uint="({Z} - {a})"),
    Op.ABS: _by_kind("abs({a})", "abs({a})", uint="{a}", bool_="{a}"),
    # NumPy: sign(-0.0) is +0.0 (numba's np.sign keeps -0.0); NaN stays NaN
    Op.SIGN: _by_kind("({a} if {a} != {a} else ({O} if {a} > {Z} else (-{O} if {a} < {Z} else {Z})))",
                      "np.sign({a})", uint="({a} != {Z})", bool_="{a}"),
    Op.EXP: _math("exp", "np.exp"),
    Op.LOG: _math("log", "np.log"),
    Op.LOG1P: _math("log1p", "np.log1p"),
    Op.LOG2: _math("log2", "np.log2"),
    Op.LOG10: _math("log10", "np.log10"),
    Op.EXPM1: _math("expm1", "np.expm1"),
    Op.SQRT: _call("np.sqrt"),
    Op.CBRT: _call("np.cbrt"),
    Op.SQUARE: _by_kind("({a} * {a})", "({a} * {a})", bool_="{a}"),
    Op.SIN: _math("sin", "np.sin"),
    Op.COS: _math("cos", "np.cos"),
    Op.TAN: _math("tan", "np.tan"),
    Op.TANH: _math("tanh", "np.tanh"),
    Op.SINH: _math("sinh", "np.sinh"),
    Op.COSH: _math("cosh", "np.cosh"),
    Op.ARCSIN: _call("np.arcsin"),
    Op.ARCCOS: _call("np.arccos"),
    Op.ARCTAN: _math("arctan", "np.arctan"),
    Op.FLOOR: _by_kind("np.floor({a})", "{a}"),
    Op.CEIL: _by_kind("np.ceil({a})", "{a}"),
    Op.RINT: _by_kind("np.rint({a})", "{a}"),
    Op.LOGICAL_NOT: _by_kind("({a} == 0)", "({a} == 0)", bool_="(not {a})"),
    Op.INVERT: _by_kind("(~{a})", "(~{a})", bool_="(not {a})"),
    Op.ISNAN: _by_kind("np.isnan({a})", "False"),
    Op.ISINF: _by_kind("np.isinf({a})", "False"),
    Op.ISFINITE: _by_kind("np.isfinite({a})", "True"),
    Op.ADD: _by_kind("({a} + {b})", "({a} + {b})", bool_="({a} | {b})"),
    Op.SUB: _infix("-"),
    Op.MUL: _by_kind("({a} * {b})", "({a} * {b})", bool_="({a} & {b})"),
    Op.DIV: _infix("/"),
    # INT_MIN // -1 overflows to INT_MIN in NumPy; an idiv would trap, so negate instead.
    Op.FLOORDIV: _by_kind("({a} // {b})", "(-{a} if {b} == -1 else {a} // {b})",
                          uint="({a} // {b})"),
    Op.MOD: _infix("%"),
    Op.POW: _math("power", "({a} ** {b})", integer=_by_kind(
        "", "_ipow_signed({a}, {b})", uint="({a} ** {b})")),
    Op.MAXIMUM: _by_kind("({a} if ({a} >= {b} or {a} != {a}) else {b})",
                         "({a} if {a} >= {b} else {b})", bool_="({a} | {b})"),
    Op.MINIMUM: _by_kind("({a} if ({a} <= {b} or {a} != {a}) else {b})",
                         "({a} if {a} <= {b} else {b})", bool_="({a} & {b})"),
    Op.ARCTAN2: _math("arctan2", "np.arctan2"),
    Op.HYPOT: _call("np.hypot"),
    Op.LOGADDEXP: _call("np.logaddexp"),
    Op.EQ: _infix("=="),
    Op.NE: _infix("!="),
    Op.LT: _infix("<"),
    Op.LE: _infix("<="),
    Op.GT: _infix(">"),
    Op.GE: _infix(">="),
    Op.LOGICAL_AND: lambda a, d: f"(({a[0]} != 0) & ({a[1]} != 0))",
    Op.LOGICAL_OR: lambda a, d: f"(({a[0]} != 0) | ({a[1]} != 0))",
    Op.LOGICAL_XOR: lambda a, d: f"(({a[0]} != 0) != ({a[1]} != 0))",
    Op.BITWISE_AND: _infix("&"),
    Op.BITWISE_OR: _infix("|"),
    Op.BITWISE_XOR: _by_kind("", "({a} ^ {b})", bool_="({a} != {b})"),
    # NumPy defines shifts by >= the bit width (or negative amounts): 0, or -1 for a negative
    # signed value shifted right.
    Op.LEFT_SHIFT: _by_kind("", "({a} << {b} if ({b} >= 0 and {b} < {bits}) else {Z})",
                            uint="({a} << {b} if {b} < {bits} else {Z})"),
    Op.RIGHT_SHIFT: _by_kind(
        "", "({a} >> {b} if ({b} >= 0 and {b} < {bits}) else ({Z} - 1 if {a} < 0 else {Z}))",
        uint="({a} >> {b} if {b} < {bits} else {Z})"),
    Op.SELECT: lambda a, d: f"({a[1]} if {a[0]} else {a[2]})",
    Op.CAST: lambda a, d: a[0],  # the result cast below does the conversion
}


def expression(stmt: Compute) -> str:
    if stmt.op is Op.CAST and stmt.dtype == np.bool_:
        return f"({stmt.args[0]} != 0)"
    inner = EXPRESSIONS[stmt.op](stmt.args, stmt.arg_dtypes)
    return f"{type_name(stmt.dtype)}({inner})"
