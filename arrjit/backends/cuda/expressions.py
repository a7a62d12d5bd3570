"""The CUDA expression table: the target-neutral entries (``backends.source``) plus the ops
that call math functions, as ``_m.<name>``: on a GPU numba-cuda's math, which is libdevice
(full precision; no approximate fast-math); on the simulator NumPy's (``simmath``).

>>> import numpy as np
>>> EXPRESSIONS[Op.EXP](("a",), (np.dtype("float32"),))
'_m.exp(a)'
"""
from __future__ import annotations

import numpy as np

from ...core.ir import SPECIAL, Op
from ...passes.kernel import Compute, Const
from ..source import (INTEGER_FMOD, NEUTRAL_EXPRESSIONS, Expr, by_kind, expression as _expression,
                      literal, special_call, type_name)


def _math(name: str, integer: Expr | None = None, float32: str | None = None) -> Expr:
    """``_m.<name>`` (``gpumath`` or ``simmath``; ``float32`` names a float32-only variant)
    for float operands; ``integer`` for integer operands (fusion casts the operands of
    float-only ops to float first)."""
    def render(args, dts):
        if dts[0].kind == "f":
            fn = float32 if float32 is not None and dts[0].itemsize == 4 else name
            return f"_m.{fn}({', '.join(args)})"
        if integer is None:
            raise TypeError(f"no CUDA expression for {name} of {dts[0]}")
        return integer(args, dts)
    return render


def _rounding(kind: str) -> Expr:
    """floor/ceil/trunc/rint of floats below 2**52 (2**23 for float32; larger values are integers
    already, and inf/NaN pass through), keeping the sign of zero as NumPy does:
    floor/ceil through ``_m.floor`` (an integer on a GPU), rint by adding and removing
    2**52 (round half to even in the default rounding mode)."""
    def render(args, dts):
        a = args[0]
        if dts[0].kind != "f":
            return a
        big = f"{type_name(dts[0])}({2.0 ** (23 if dts[0].itemsize == 4 else 52)!r})"
        if kind == "floor":
            value = f"_m.floor({a})"
        elif kind == "ceil":
            value = f"(-_m.floor(-{a}))"
        elif kind == "trunc":
            value = f"_m.floor(abs({a}))"
        else:
            value = f"((abs({a}) + {big}) - {big})"
        return f"({a} if not abs({a}) < {big} else _m.copysign({value}, {a}))"
    return render



EXPRESSIONS: dict[Op, Expr] = {
    **NEUTRAL_EXPRESSIONS,
    # NumPy: sign(-0.0) is +0.0; NaN stays NaN
    Op.SIGN: by_kind("({a} if {a} != {a} else ({O} if {a} > {Z} else (-{O} if {a} < {Z} else {Z})))",
                     "({O} if {a} > {Z} else ({Z} - {O} if {a} < {Z} else {Z}))",
                     uint="({a} != {Z})", bool_="{a}"),
    Op.EXP: _math("exp"),
    Op.LOG: _math("log"),
    Op.LOG1P: _math("log1p"),
    Op.LOG2: _math("log2"),
    Op.LOG10: _math("log10"),
    Op.EXPM1: _math("expm1"),
    Op.SQRT: _math("sqrt"),
    Op.CBRT: _math("cbrt", float32="cbrtf"),
    Op.SIN: _math("sin"),
    Op.COS: _math("cos"),
    Op.TAN: _math("tan"),
    Op.TANH: _math("tanh"),
    Op.SINH: _math("sinh"),
    Op.COSH: _math("cosh"),
    Op.ARCSIN: _math("asin"),
    Op.ARCCOS: _math("acos"),
    Op.ARCTAN: _math("atan"),
    Op.ARCSINH: _math("asinh"),
    Op.ARCCOSH: _math("acosh"),
    Op.ARCTANH: _math("atanh"),
    Op.TRUNC: _rounding("trunc"),
    # the sign bit of floats (of -0.0 and of a negative NaN too); fusion casts other operands
    Op.SIGNBIT: lambda a, d: f"(_m.copysign(1.0, {a[0]}) < 0.0)",
    Op.COPYSIGN: _math("copysign"),
    Op.NEXTAFTER: _math("nextafter", float32="nextafterf"),
    Op.FMOD: _math("fmod", integer=INTEGER_FMOD),
    Op.LDEXP: lambda a, d: (f"_m.ldexp({a[0]}, (-2200 if {a[1]} < -2200 else (2200 if "
                            f"{a[1]} > 2200 else {a[1]})))"),
    Op.GCD: lambda a, d: f"_m.gcd({a[0]}, {a[1]})",
    Op.LCM: lambda a, d: f"_m.lcm({a[0]}, {a[1]})",
    Op.FLOOR: _rounding("floor"),
    Op.CEIL: _rounding("ceil"),
    Op.RINT: _rounding("rint"),
    Op.ISNAN: by_kind("({a} != {a})", "False"),
    Op.ISINF: by_kind("(abs({a}) == np.inf)", "False"),
    Op.ISFINITE: by_kind("(({a} - {a}) == {Z})", "True"),
    # integer powers are statements (``statement_lines``)
    Op.POW: _math("pow"),
    **{op: special_call(op, "_m") for op in SPECIAL},
    Op.ARCTAN2: _math("atan2"),
    Op.HYPOT: _math("hypot"),
    # NumPy's logaddexp; x + y is NaN when either is (neither branch taken)
    Op.LOGADDEXP: lambda a, d: (
        f"({a[0]} + {type_name(d[0])}(0.6931471805599453) if {a[0]} == {a[1]} else "
        f"({a[0]} + _m.log1p(_m.exp({a[1]} - {a[0]})) if {a[0]} > {a[1]} else "
        f"({a[1]} + _m.log1p(_m.exp({a[0]} - {a[1]})) if {a[0]} < {a[1]} else "
        f"{a[0]} + {a[1]})))"),
}


def checks_negative_power(stmt: object, constants: dict[str, Const]) -> bool:
    """Whether ``stmt`` is an integer power whose exponent may be negative at run time (a
    signed exponent that is not a non-negative literal): NumPy raises for those, so the
    kernel flags them (``ERROR_FLAG``) and the launch raises NumPy's error."""
    if not (isinstance(stmt, Compute) and stmt.op is Op.POW
            and stmt.arg_dtypes[0].kind in "iub" and stmt.arg_dtypes[1].kind == "i"):
        return False
    exponent = constants.get(stmt.args[1])
    literal_ok = (exponent is not None and not exponent.runtime
                  and isinstance(exponent.value, (int, np.integer)) and exponent.value >= 0)
    return not literal_ok


ERROR_FLAG = "err"          # an int8[1] device array, set to 1 by a negative integer exponent
NEGATIVE_POWER_ERROR = "Integers to negative integer powers are not allowed."


def _integer_power(stmt: Compute, check_negative: bool) -> str:
    """Exponentiation by squaring in the operands' dtype (wrapping as NumPy's does); with
    ``check_negative``, a negative exponent sets the kernel's error flag."""
    a, b = stmt.args
    dt = stmt.arg_dtypes[0]
    one, zero, n = literal(1, dt), literal(0, dt), stmt.name
    flag = [f"if {b} < 0:", f"    {ERROR_FLAG}[0] = 1"] if check_negative else []
    return "\n".join([
        *flag, f"{n}_r = {one}", f"{n}_a = {a}", f"{n}_e = {b}",
        f"while {n}_e > {zero}:",
        f"    if ({n}_e & {one}) != {zero}:",
        f"        {n}_r = {n}_r * {n}_a",
        f"    {n}_a = {n}_a * {n}_a",
        f"    {n}_e = {n}_e >> {one}",
        f"{n} = {type_name(stmt.dtype)}({zero} if {b} < {zero} else {n}_r)"])


def statement_lines(stmt: Compute, check_negative: bool = False) -> str:
    """``stmt`` as source: an assignment of its expression, or for the ops that need a loop
    (CUDA kernels cannot call device functions when compiled without a device), lines."""
    if stmt.op is Op.POW and stmt.arg_dtypes[0].kind in "iub":
        return _integer_power(stmt, check_negative)
    return f"{stmt.name} = {expression(stmt)}"


def expression(stmt: Compute) -> str:
    return _expression(stmt, EXPRESSIONS)
