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
from ..passes.kernel import Affine, Compute, Const, Position


def type_name(dtype: np.dtype) -> str:
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def _float_text(v: float) -> str:
    if v != v:
        return "np.nan"
    if v in (float("inf"), float("-inf")):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def literal(value, dtype: np.dtype) -> str:
    """``value`` of ``dtype`` as source. A float64 is a bare Python float, which numba types
    as float64: a cast around it was typed and lowered once per constant.

    >>> literal(0.5, np.dtype("float64")), literal(2, np.dtype("int32"))
    ('0.5', 'np.int32(2)')
    """
    if dtype == np.bool_:
        return repr(bool(value))
    if dtype == np.float64:
        return _float_text(float(value))
    if dtype.kind == "f":
        return f"{type_name(dtype)}({_float_text(float(value))})"
    if dtype.kind == "c":
        v = complex(value)
        return f"{type_name(dtype)}(complex({_float_text(v.real)}, {_float_text(v.imag)}))"
    return f"{type_name(dtype)}({int(value)})"


def constant_text(const: Const, slot: Callable[[int], str]) -> str:
    """A kernel constant: a literal, or for a value from shapes (``Const.runtime``, always an
    integer) the run-time parameter ``slot`` assigns it, so the source does not depend on
    sizes."""
    value = complex(const.value)
    if const.runtime and value.imag == 0 and value.real.is_integer():
        return f"{type_name(const.dtype)}({slot(int(value.real))})"
    return literal(const.value, const.dtype)


def affine_text(access: Affine, slot: Callable[[int], str]) -> str:
    """An access's flat index as source over the loop indices ``i<j>``; its offset, strides
    and a roll's wrap-around bounds are run-time integers named by ``slot``.

    >>> slots = []
    >>> affine_text(Affine(2, (3, 1, 0), True), lambda v: slots.append(v) or f"p{len(slots) - 1}")
    'p0 + i0 * p1 + i1'
    """
    terms = []
    if access.offset != 0 or access.shifted:
        terms.append(slot(access.offset))
    for j, c in enumerate(access.coefs):
        if c == 1:
            terms.append(f"i{j}")
        elif c == -1:
            terms.append(f"-i{j}")
        elif c != 0:
            terms.append(f"i{j} * {slot(c)}")
    for w in access.wraps:   # a roll's wrap-around
        terms.append(f"({slot(w.add)} if {affine_text(w.value, slot)} < {slot(w.below)} else 0)")
    for name, stride in access.positions:   # run-time positions (``Position``)
        terms.append(name if stride == 1 else f"{name} * {slot(stride)}")
    return " + ".join(terms).replace("+ -", "- ") if terms else "0"


def position_lines(stmt: Position, slot: Callable[[int], str]) -> list[str]:
    """A ``Position`` as statements: NumPy's rule for one integer index, the error raised by
    a call on the error path only (a call of a raising function in every run kept loop
    drivers from optimising). The range test and the wrap are branch-free intrinsics: numba's
    passes cost time per basic block, and ``a < b or c`` is three.

    >>> for line in position_lines(Position("v1", "v0", 8, 1), lambda v: "p0"):
    ...     print(line)
    v1 = np.int64(v0)
    if _M.outside(v1, p0): _M.out_of_bounds(v1, 1, p0)
    v1 = _M.wrapped(v1, p0)

    A position known to lie in its axis (``in_range``) is only converted:

    >>> position_lines(Position("v1", "v0", 8, 1, in_range=True), lambda v: "p0")
    ['v1 = np.int64(v0)']
    """
    i = stmt.name
    if stmt.in_range:
        return [f"{i} = np.int64({stmt.value})"]
    n = slot(stmt.extent)
    return [f"{i} = np.int64({stmt.value})",
            f"if _M.outside({i}, {n}): _M.out_of_bounds({i}, {stmt.axis}, {n})",
            f"{i} = _M.wrapped({i}, {n})"]


def extreme(dtype: np.dtype, largest: bool) -> str:
    """The largest (or smallest) value of ``dtype``: the identity of min (max) reductions."""
    if dtype == np.bool_:
        return repr(largest)
    if dtype.kind == "f":
        return f"{type_name(dtype)}({'np.inf' if largest else '-np.inf'})"
    if dtype.kind == "c":   # the extreme of NumPy's lexicographic order
        return literal(complex(np.inf, np.inf) if largest else complex(-np.inf, -np.inf), dtype)
    info = np.iinfo(dtype)
    return literal(info.max if largest else info.min, dtype)


Expr = Callable[[tuple[str, ...], tuple[np.dtype, ...]], str]


def by_kind(float_: str, int_: str, uint: str | None = None, bool_: str | None = None,
            complex_: str | None = None) -> Expr:
    """A template per dtype kind: ``{a}``/``{b}`` are the operands, ``{Z}``/``{O}`` zero and
    one of the operand dtype, ``{bits}`` its width. Complex operands use ``complex_``, or the
    float template (arithmetic spelled the same for both)."""
    def render(args, dts):
        kind = dts[0].kind
        template = {"f": float_, "i": int_, "u": uint or int_, "b": bool_ or int_,
                    "c": complex_ or float_}[kind]
        names = dict(zip("ab", args))
        names["Z"] = literal(0, dts[0])
        names["O"] = literal(1, dts[0])
        names["bits"] = dts[0].itemsize * 8
        return template.format(**names)
    return render


def special_call(op: Op, module: str) -> Expr:
    """A special function of ``core.special`` as each backend imports it (``module``), its
    operands widened to float64."""
    def render(args, dts):
        wide = ", ".join(f"np.float64({a})" for a in args)
        if op in (Op.GAMMAINC, Op.GAMMAINCC):
            return f"{module}.incomplete_gamma({wide}, {op is Op.GAMMAINCC})"
        return f"{module}.{op.value}({wide})"
    return render


def call(fn: str) -> Expr:
    return lambda args, dts: f"{fn}({', '.join(args)})"


def infix(sym: str) -> Expr:
    return lambda args, dts: f"({args[0]} {sym} {args[1]})"


def _lexicographic(real: str, equal_imag: str) -> str:
    """NumPy's order of complex values: by real part, then imaginary part; a NaN part makes
    the real comparison false (NumPy's ``CLT``/``CGT`` family)."""
    return (f"((({{a}}.real {real} {{b}}.real) and ({{a}}.imag == {{a}}.imag) and "
            f"({{b}}.imag == {{b}}.imag)) or (({{a}}.real == {{b}}.real) and "
            f"({{a}}.imag {equal_imag} {{b}}.imag)))")


def isnan_complex(x: str) -> str:
    return f"(({x}.real != {x}.real) or ({x}.imag != {x}.imag))"


def comparison(sym: str) -> Expr:
    """``a <sym> b``; complex operands in NumPy's lexicographic order."""
    strict = sym.rstrip("=")
    return by_kind(f"({{a}} {sym} {{b}})", f"({{a}} {sym} {{b}})",
                   complex_=_lexicographic(strict, sym))


def _complex_extreme(order: str) -> str:
    """NumPy's complex maximum (``>=``) or minimum (``<=``): ``a`` if it holds a NaN or wins
    the comparison, else ``b`` (so a NaN in either propagates)."""
    return (f"({{a}} if ({isnan_complex('{a}')} or {_lexicographic(order[0], order)}) "
            f"else {{b}})")


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
                        "({a} if {a} >= {b} else {b})", bool_="({a} | {b})",
                        complex_=_complex_extreme(">=")),
    Op.MINIMUM: by_kind("({a} if ({a} <= {b} or {a} != {a}) else {b})",
                        "({a} if {a} <= {b} else {b})", bool_="({a} & {b})",
                        complex_=_complex_extreme("<=")),
    Op.EQ: infix("=="),
    Op.NE: infix("!="),
    Op.LT: comparison("<"),
    Op.LE: comparison("<="),
    Op.GT: comparison(">"),
    Op.GE: comparison(">="),
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
    # the result cast in ``expression`` does the conversion
    Op.CAST: lambda a, d: a[0],
    Op.CONJ: lambda a, d: f"{a[0]}.conjugate()",
    Op.REAL: lambda a, d: f"{a[0]}.real",
    Op.IMAG: lambda a, d: f"{a[0]}.imag",
    Op.COMPLEX: lambda a, d: f"complex({a[0]}, {a[1]})",
}


# C's remainder (the sign of the dividend) of integers, as NumPy's fmod computes it: 0 for a
# zero divisor and for INT_MIN % -1 (numba's np.fmod of integers answers Python's %)
# (from Python's %, which has the sign of the divisor, without an abs() that overflows)
INTEGER_FMOD: Expr = by_kind(
    "", "({Z} if ({b} == {Z} or {b} == -1) else (({a} % {b}) - {b} if (({a} % {b}) != {Z} and "
        "(({a} % {b}) < {Z}) != ({a} < {Z})) else ({a} % {b})))",
    uint="({Z} if {b} == {Z} else ({a} % {b}))")


# Ops whose numba result already has the operands' type when every operand has the result's
# dtype and that dtype is one listed: the result cast is left out (each cast is a call that
# numba must type and lower, a third of a kernel's compile time).
_ARITHMETIC_TYPES = frozenset(np.dtype(t) for t in ("float64", "float32", "complex128",
                                                      "complex64", "int64"))
TYPE_PRESERVING: dict[Op, frozenset[np.dtype]] = {
    op: _ARITHMETIC_TYPES for op in (Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.SQUARE, Op.SELECT,
                                     Op.MAXIMUM, Op.MINIMUM)}


def expression(stmt: Compute, table: Mapping[Op, Expr],
               preserving: Mapping[Op, frozenset[np.dtype]] = TYPE_PRESERVING) -> str:
    """``stmt`` as an expression of ``table``, cast to its dtype (unless ``preserving`` says
    the expression has that type already)."""
    if (stmt.dtype in preserving.get(stmt.op, ())
            and all(d == stmt.dtype for d in stmt.arg_dtypes[-2:])
            and (stmt.op is not Op.SELECT or stmt.arg_dtypes[0] == np.bool_)):
        return table[stmt.op](stmt.args, stmt.arg_dtypes)
    if stmt.op is Op.CAST and stmt.dtype == np.bool_:
        return f"({stmt.args[0]} != 0)"
    inner = table[stmt.op](stmt.args, stmt.arg_dtypes)
    if stmt.op is Op.CAST and (stmt.dtype.kind == "c") != (stmt.arg_dtypes[0].kind == "c"):
        # complex to real keeps the real part (as NumPy does, without its warning)
        if stmt.dtype.kind == "c":
            real = f"(1.0 if {inner} else 0.0)" if stmt.arg_dtypes[0] == np.bool_ else inner
            inner = f"complex({real}, 0)"
        else:
            inner = f"{inner}.real"
    return f"{type_name(stmt.dtype)}({inner})"
