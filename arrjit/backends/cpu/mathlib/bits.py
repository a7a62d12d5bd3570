"""Bit casts, LLVM float intrinsics and the compile flags the math library shares."""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

# Inside these functions FMA contraction is allowed (more accurate, never less); nothing else.
# Called from generated kernels (and Python), never as C callbacks: no C wrapper to build.
_FLAGS = dict(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy",
              no_cfunc_wrapper=True)


# -- bit casts --------------------------------------------------------------------------------
def _bitcast(source: type, targets: dict[int, types.Type], doc: str):
    """An intrinsic reinterpreting a ``source``-kind scalar as the same-width type in
    ``targets`` (keyed by bit width)."""
    @intrinsic
    def cast(typingctx, x):
        if not isinstance(x, source) or x.bitwidth not in targets:
            return None
        target = targets[x.bitwidth]

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))
        return target(x), codegen
    cast.__doc__ = doc
    return cast


bits = _bitcast(types.Float, {64: types.int64, 32: types.int32},
                "The IEEE bits of a float as a signed integer of the same width.")
from_bits = _bitcast(types.Integer, {64: types.float64, 32: types.float32},
                     "The float whose IEEE bits are the signed integer (int64 -> float64, "
                     "int32 -> float32).")


def _llvm_float(name: str, arity: int, doc: str):
    """An intrinsic calling LLVM's ``name`` on ``arity`` (2 or 3) floats of one type (LLVM
    knows their vector forms, so loops using them still vectorise)."""
    def typer(operands):
        ftype = operands[0]
        if not isinstance(ftype, types.Float) or any(t != ftype for t in operands):
            return None

        def codegen(context, builder, signature, args):
            ty = context.get_value_type(ftype)
            fn = builder.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * arity))
            return builder.call(fn, args)
        return ftype(*operands), codegen

    # numba's inliner needs a fixed parameter list (no *args)
    if arity == 2:
        def call(typingctx, a, b):
            return typer((a, b))
    else:
        def call(typingctx, a, b, c):
            return typer((a, b, c))
    call.__doc__ = doc
    return intrinsic(call)


fma = _llvm_float("llvm.fma", 3, "``a * b + c`` with one rounding.")
# NaN-propagating max/min: a loop reducing with them vectorises, where the equivalent
# compare-and-branch does not.
@intrinsic
def select(typingctx, condition, on_true, on_false):
    """``on_true if condition else on_false`` as one LLVM ``select``: no branch, so numba's
    passes see one call (a chain of ternaries costs them time growing faster than its
    length) and LLVM vectorises the loop around it."""
    if not isinstance(condition, types.Boolean) or on_true != on_false:
        return None

    def codegen(context, builder, signature, args):
        return builder.select(args[0], args[1], args[2])
    return on_true(condition, on_true, on_false), codegen


fmaximum = _llvm_float("llvm.maximum", 2, "max(a, b); NaN if either is NaN.")
fminimum = _llvm_float("llvm.minimum", 2, "min(a, b); NaN if either is NaN.")


def _f32(value: float) -> np.float32:
    return np.float32(value)
