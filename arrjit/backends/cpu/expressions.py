"""The CPU expression table: the target-neutral entries (``backends.source``) plus the ops
that call math functions, through the vectorised ``mathlib`` where it has them.

>>> import numpy as np
>>> EXPRESSIONS[Op.EXP](("a",), (np.dtype("float64"),))
'_M.exp64(a)'
"""
from __future__ import annotations

import numpy as np

from ...core.ir import SPECIAL, Op
from ...passes.kernel import Compute
from .mathnames import COMPLEX_HELPERS
from ..source import (INTEGER_FMOD, NEUTRAL_EXPRESSIONS, TYPE_PRESERVING, Expr,
                      by_kind as _by_kind, call as _call, expression as _expression, literal,
                      special_call, type_name)

__all__ = ["EXPRESSIONS", "MATHLIB_OPS", "expression", "literal", "type_name"]


def _complex_helper(name: str, args, dts) -> str | None:
    """The ``mathlib.complex`` helper for complex operands, where it has one."""
    if dts[0].kind == "c" and name in COMPLEX_HELPERS:
        return f"_M.{name}_c{dts[0].itemsize * 8}({', '.join(args)})"
    return None


def _math(name: str, libm: str, integer: Expr | None = None) -> Expr:
    """A float function of ``mathlib`` (vectorisable) by width; for complex operands its
    ``mathlib.complex`` helper or numba's own (``libm``); for other kinds ``integer`` or the
    C library's ``libm``."""
    suffix = {4: "32", 8: "64"}

    def render(args, dts):
        if dts[0].kind == "f" and dts[0].itemsize in suffix:
            joiner = "_" if name[-1].isdigit() else ""
            return f"_M.{name}{joiner}{suffix[dts[0].itemsize]}({', '.join(args)})"
        helper = _complex_helper(name, args, dts)
        if helper is not None:
            return helper
        if integer is not None and dts[0].kind != "c":
            return integer(args, dts)
        return f"{libm}({', '.join(args)})"
    render.calls_mathlib = True   # type: ignore[attr-defined]
    return render


def _complex_or(name: str, other: Expr) -> Expr:
    """The ``mathlib.complex`` helper ``name`` for complex operands, else ``other``."""
    def render(args, dts):
        helper = _complex_helper(name, args, dts)
        return helper if helper is not None else other(args, dts)
    return render



def _LDEXP_RANGE(exponent: str) -> str:
    """An ``ldexp`` exponent clamped to where the result is already 0 or inf (C's ``ldexp``
    takes an int: a wider exponent would be truncated)."""
    return f"(-2200 if {exponent} < -2200 else (2200 if {exponent} > 2200 else {exponent}))"


EXPRESSIONS: dict[Op, Expr] = {
    **NEUTRAL_EXPRESSIONS,
    # NumPy: sign(-0.0) is +0.0 (numba's np.sign keeps -0.0); NaN stays NaN
    Op.SIGN: _complex_or("sign", _by_kind(
        "({a} if {a} != {a} else ({O} if {a} > {Z} else (-{O} if {a} < {Z} else {Z})))",
        "np.sign({a})", uint="({a} != {Z})", bool_="{a}")),
    Op.MUL: _complex_or("mul", NEUTRAL_EXPRESSIONS[Op.MUL]),
    Op.ABS: _complex_or("absolute", NEUTRAL_EXPRESSIONS[Op.ABS]),
    Op.SQUARE: _complex_or("square", NEUTRAL_EXPRESSIONS[Op.SQUARE]),
    Op.DIV: _complex_or("div", NEUTRAL_EXPRESSIONS[Op.DIV]),
    Op.EXP: _math("exp", "np.exp"),
    Op.LOG: _math("log", "np.log"),
    Op.LOG1P: _math("log1p", "np.log1p"),
    Op.LOG2: _math("log2", "np.log2"),
    Op.LOG10: _math("log10", "np.log10"),
    Op.EXPM1: _math("expm1", "np.expm1"),
    Op.SQRT: _call("np.sqrt"),
    Op.CBRT: _call("np.cbrt"),
    Op.SIN: _math("sin", "np.sin"),
    Op.COS: _math("cos", "np.cos"),
    Op.TAN: _math("tan", "np.tan"),
    Op.TANH: _math("tanh", "np.tanh"),
    Op.SINH: _math("sinh", "np.sinh"),
    Op.COSH: _math("cosh", "np.cosh"),
    Op.ARCSIN: _complex_or("arcsin", _call("np.arcsin")),
    Op.ARCCOS: _complex_or("arccos", _call("np.arccos")),
    Op.ARCTAN: _math("arctan", "np.arctan"),
    Op.ARCSINH: _complex_or("arcsinh", _call("np.arcsinh")),
    Op.ARCCOSH: _complex_or("arccosh", _call("np.arccosh")),
    Op.ARCTANH: _complex_or("arctanh", _call("np.arctanh")),
    Op.TRUNC: _by_kind("np.trunc({a})", "{a}"),
    Op.SIGNBIT: _call("np.signbit"),
    Op.COPYSIGN: _call("np.copysign"),
    Op.NEXTAFTER: _call("np.nextafter"),
    Op.FMOD: lambda a, d: f"np.fmod({a[0]}, {a[1]})" if d[0].kind == "f" else INTEGER_FMOD(a, d),
    Op.LDEXP: lambda a, d: f"np.ldexp({a[0]}, {_LDEXP_RANGE(a[1])})",
    Op.GCD: _call("_M.gcd"),
    Op.LCM: _call("_M.lcm"),
    Op.FLOOR: _by_kind("np.floor({a})", "{a}"),
    Op.CEIL: _by_kind("np.ceil({a})", "{a}"),
    Op.RINT: _complex_or("rint", _by_kind("np.rint({a})", "{a}")),
    Op.ISNAN: _by_kind("np.isnan({a})", "False"),
    Op.ISINF: _by_kind("np.isinf({a})", "False"),
    Op.ISFINITE: _by_kind("np.isfinite({a})", "True"),
    Op.POW: _math("power", "({a} ** {b})", integer=_by_kind(
        "", "_ipow_signed({a}, {b})", uint="({a} ** {b})")),
    Op.ARCTAN2: _math("arctan2", "np.arctan2"),
    Op.HYPOT: _call("np.hypot"),
    Op.LOGADDEXP: _call("np.logaddexp"),
    **{op: special_call(op, "_M") for op in SPECIAL},
    # one LLVM select rather than a ternary: numba's passes take time superlinear in the
    # number of branches of a function (100 unrolled where()s: 9 s)
    Op.SELECT: lambda a, d: f"_M.select({a[0]}, {a[1]}, {a[2]})",
}


# the ops whose float forms call a ``mathlib`` function: a long body LLVM inlines into the loop
MATHLIB_OPS = frozenset({*SPECIAL, *(op for op, render in EXPRESSIONS.items()
                                     if getattr(render, "calls_mathlib", False))})

_FLOATS = frozenset(np.dtype(t) for t in ("float64", "float32"))
# the math library's float functions return their argument's type
PRESERVING = {**TYPE_PRESERVING, Op.DIV: _FLOATS, Op.POW: _FLOATS, Op.ARCTAN2: _FLOATS,
              **{op: _FLOATS for op in (Op.EXP, Op.LOG, Op.LOG1P, Op.LOG2, Op.LOG10, Op.EXPM1,
                                        Op.SIN, Op.COS, Op.TAN, Op.TANH, Op.SINH, Op.COSH,
                                        Op.ARCTAN)}}


def expression(stmt: Compute) -> str:
    return _expression(stmt, EXPRESSIONS, PRESERVING)
