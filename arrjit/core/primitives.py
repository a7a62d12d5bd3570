"""Binding primitives: one function per primitive kind that either records a node (when any
operand is a Tracer) or computes the result eagerly with NumPy (when none is).

This is where NumPy's semantics enter the IR: result dtypes come from NumPy's own ufunc
resolution (``dtypes.resolve_ufunc``), broadcasting becomes explicit BROADCAST nodes, and
dtype promotion becomes explicit CAST nodes, so every elementwise node reads operands that
already have its loop dtype and its output shape.
"""
from __future__ import annotations

import numbers
import operator
from typing import Any, Sequence

import numpy as np

from .. import errors
from .dtypes import (Aval, aval_of_python_scalar, check_supported, complex_dtype, real_dtype,
                     resolve_ufunc)
from .ir import Op, Var, ufunc_of
from . import special
from .sizes import Size
from .trace import TraceContext, Tracer

Operand = Any  # Tracer | np.ndarray | NumPy scalar | Python scalar


def is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def aval_of(x: Operand) -> Aval:
    """The abstract value of any operand, checking that its dtype is supported."""
    if isinstance(x, Tracer):
        return x.aval
    if is_python_scalar(x):
        return aval_of_python_scalar(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return Aval(tuple(x.shape), check_supported(x.dtype))
    if isinstance(x, numbers.Number):
        raise errors.UnsupportedDtypeError(
            f"unsupported scalar {x!r} of type {type(x).__name__}: arrjit compiles bool, "
            f"integer, floating-point and complex values")
    raise TypeError(
        f"expected an array, a tracer or a Python scalar, got {type(x).__name__}: {x!r}. "
        f"Wrap lists and tuples with anp.asarray(...) first.")


def find_trace(operands: Sequence[Operand]) -> TraceContext | None:
    """The trace the traced operands belong to; checks that none leaked out of a finished one."""
    ctx = None
    for x in operands:
        if isinstance(x, Tracer):
            if not x.ctx.active:
                raise errors.UnexpectedTracerError(
                    f"a traced value {x.aval} from an earlier trace of "
                    f"{x.ctx.function_name!r} was used after that trace ended (it leaked, for "
                    f"example through a global variable or a closure). Pass it as an argument "
                    f"or return it from the jitted function instead.")
            if ctx is None or x.ctx.depth > ctx.depth:
                ctx = x.ctx  # the innermost trace wins; outer tracers get lifted into it
    return ctx


def sources_of(operands: Sequence[Operand]) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for x in operands:
        if isinstance(x, Tracer):
            out = out | x.sources
    return out


def as_var(ctx: TraceContext, x: Operand, dtype: np.dtype | None = None) -> Var:
    """A var for ``x`` inside ``ctx``: tracers give theirs, concrete values become CONST nodes.

    A Python scalar is converted straight to ``dtype`` (NumPy's overflow check included)."""
    if isinstance(x, Tracer):
        return x.ir_var if x.ctx is ctx else ctx.lift(x)
    if is_python_scalar(x):
        aval = aval_of_python_scalar(x)
        target = dtype if dtype is not None else aval.dtype
        return ctx.constant(np.asarray(x, dtype=target), weak=aval.weak and dtype is None,
                            runtime=isinstance(x, Size))
    return ctx.constant(np.asarray(x))


def broadcast_shapes_like_numpy(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"operands could not be broadcast together with shapes {listed}") from None


def cast_var(ctx: TraceContext, var: Var, dtype: np.dtype, weak: bool = False) -> Var:
    if var.dtype == dtype:
        return var
    return ctx.add_node(Op.CAST, (var,), Aval(var.shape, dtype, weak), dtype=dtype)


def broadcast_var(ctx: TraceContext, var: Var, shape: tuple[int, ...]) -> Var:
    if var.shape == shape:
        return var
    return ctx.add_node(Op.BROADCAST, (var,), Aval(shape, var.dtype, var.aval.weak), shape=shape)


_COMPARISONS = {Op.EQ: operator.eq, Op.NE: operator.ne, Op.LT: operator.lt,
                Op.LE: operator.le, Op.GT: operator.gt, Op.GE: operator.ge}


def _out_of_range_comparison(op: Op, operands, loop_dtypes) -> bool | None:
    """NumPy 2 compares an integer array with a Python int outside the array's range without
    error: the answer is the same for every element. Returns it, or None."""
    if op not in _COMPARISONS:
        return None
    for k, (x, dt) in enumerate(zip(operands, loop_dtypes)):
        if type(x) is int and dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= x <= info.max:
                stand_in = info.max if x > info.max else info.min
                args = [stand_in, x] if k == 1 else [x, stand_in]
                return _COMPARISONS[op](*args)
    return None


def bind_ufunc(op: Op, *operands: Operand) -> Operand:
    """Apply the elementwise op with NumPy's dtype and broadcasting semantics."""
    ufunc = ufunc_of(op)
    avals = [aval_of(x) for x in operands]
    loop_dtypes, out_dtype = resolve_ufunc(ufunc, avals)
    shape = broadcast_shapes_like_numpy([a.shape for a in avals])
    ctx = find_trace(operands)
    if ctx is None:
        return ufunc(*operands)
    constant = _out_of_range_comparison(op, operands, loop_dtypes)
    if constant is not None:
        var = broadcast_var(ctx, ctx.constant(np.asarray(constant)), shape)
        return Tracer(ctx, var, sources_of(operands))
    # a comparison of Python scalars is a NumPy bool, never weak (no Python type stands for it)
    weak = all(a.weak for a in avals) and out_dtype.kind != "b"
    vars_ = []
    for x, dt in zip(operands, loop_dtypes):
        v = cast_var(ctx, as_var(ctx, x, dt), dt)
        vars_.append(broadcast_var(ctx, v, shape))
    out = ctx.add_node(op, tuple(vars_), Aval(shape, out_dtype, weak))
    return Tracer(ctx, out, sources_of(operands))


def bind_select(pred: Operand, on_true: Operand, on_false: Operand) -> Operand:
    """``numpy.where(pred, on_true, on_false)``."""
    from .dtypes import result_type

    avals = [aval_of(x) for x in (pred, on_true, on_false)]
    dtype, weak = result_type(avals[1], avals[2])
    shape = broadcast_shapes_like_numpy([a.shape for a in avals])
    ctx = find_trace((pred, on_true, on_false))
    if ctx is None:
        return np.where(pred, on_true, on_false)
    p = broadcast_var(ctx, cast_var(ctx, as_var(ctx, pred), np.dtype(bool)), shape)
    branches = [broadcast_var(ctx, cast_var(ctx, as_var(ctx, x, dtype), dtype), shape)
                for x in (on_true, on_false)]
    out = ctx.add_node(Op.SELECT, (p, *branches), Aval(shape, dtype, weak))
    return Tracer(ctx, out, sources_of((pred, on_true, on_false)))


def bind_cast(x: Operand, dtype) -> Operand:
    dt = check_supported(dtype, "astype")
    ctx = find_trace((x,))
    if ctx is None:
        return np.asarray(x).astype(dt)
    if x.dtype == dt and not x.aval.weak:
        return x
    out = ctx.add_node(Op.CAST, (x.ir_var,), Aval(x.shape, dt), dtype=dt)
    return Tracer(ctx, out, x.sources)


def bind_complex_part(op: Op, x: Operand) -> Operand:
    """``numpy.real`` (``op`` REAL) or ``numpy.imag`` (IMAG) of a complex operand."""
    ctx = find_trace((x,))
    if ctx is None:
        return (np.real if op is Op.REAL else np.imag)(x)
    out = ctx.add_node(op, (x.ir_var,), Aval(x.shape, real_dtype(x.dtype)))
    return Tracer(ctx, out, x.sources)


def special_dtype(op: Op, avals: Sequence[Aval]) -> np.dtype:
    """The dtype a special function computes in: float32 for float32 operands (NEP 50:
    Python scalars adapt), float64 for every other real kind, as SciPy's ufuncs loop."""
    from .dtypes import result_type

    dtype, _ = result_type(*avals)
    if dtype.kind == "c":
        raise errors.UnsupportedDtypeError(
            f"{op.value} of complex values is not supported; pass real values")
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def bind_special(op: Op, *operands: Operand) -> Operand:
    """A special function (``ir.SPECIAL``) of broadcast operands, in ``special_dtype``."""
    avals = [aval_of(x) for x in operands]
    dtype = special_dtype(op, avals)
    shape = broadcast_shapes_like_numpy([a.shape for a in avals])
    ctx = find_trace(operands)
    if ctx is None:
        return special.vectorized(special.SCALAR[op.value])(
            *(np.asarray(x, dtype) for x in operands))
    vars_ = [broadcast_var(ctx, cast_var(ctx, as_var(ctx, x, dtype), dtype), shape)
             for x in operands]
    out = ctx.add_node(op, tuple(vars_), Aval(shape, dtype))
    return Tracer(ctx, out, sources_of(operands))


def bind_complex(re: Operand, im: Operand) -> Operand:
    """The complex array with parts ``re`` and ``im`` (float arrays of one dtype and shape),
    every part kept exactly (signed zeros, infinities and NaNs included)."""
    ctx = find_trace((re, im))
    if ctx is None:
        whole = np.empty(np.shape(re), complex_dtype(np.result_type(re)))
        whole.real, whole.imag = re, im
        return whole
    dtype = aval_of(re).dtype
    out = ctx.add_node(Op.COMPLEX, (as_var(ctx, re, dtype), as_var(ctx, im, dtype)),
                       Aval(aval_of(re).shape, complex_dtype(dtype)))
    return Tracer(ctx, out, sources_of((re, im)))


def _view(x: Tracer, op: Op, out_shape: tuple[int, ...], **params) -> Tracer:
    out = x.ctx.add_node(op, (x.ir_var,), Aval(out_shape, x.dtype, x.aval.weak), **params)
    view = Tracer(x.ctx, out, x.sources)
    x.ctx.record_view(x, view)
    return view


def bind_broadcast(x: Operand, shape: tuple[int, ...]) -> Operand:
    shape = tuple(int(d) for d in shape)
    aval = aval_of(x)
    if broadcast_shapes_like_numpy([aval.shape, shape]) != shape or aval.ndim > len(shape):
        raise ValueError(f"cannot broadcast an array of shape {aval.shape} to shape {shape}: "
                         f"dimensions must be equal or 1, aligned from the right")
    ctx = find_trace((x,))
    if ctx is None:
        return np.broadcast_to(x, shape)
    if aval.shape == shape:
        return x
    return _view(x, Op.BROADCAST, shape, shape=shape)


def bind_transpose(x: Operand, perm: tuple[int, ...]) -> Operand:
    ctx = find_trace((x,))
    if ctx is None:
        return np.transpose(x, perm)
    if perm == tuple(range(x.ndim)):
        return x
    shape = tuple(x.shape[p] for p in perm)
    return _view(x, Op.TRANSPOSE, shape, perm=perm)


def bind_reshape(x: Operand, shape: tuple[int, ...]) -> Operand:
    ctx = find_trace((x,))
    if ctx is None:
        return np.reshape(x, shape)
    if shape == x.shape:
        return x
    return _view(x, Op.RESHAPE, shape, shape=shape)


def bind_slice(x: Operand, starts: tuple[int, ...], steps: tuple[int, ...],
               shape: tuple[int, ...]) -> Operand:
    """A strided window: out[i] = x[starts + steps * i], per dimension, with result ``shape``."""
    ctx = find_trace((x,))
    if ctx is None:
        from .interpret import slice_window

        return slice_window(np.asarray(x), starts=starts, steps=steps, out_shape=shape)
    if shape == x.shape and all(s == 0 for s in starts) and all(st == 1 for st in steps):
        return x
    return _view(x, Op.SLICE, shape, starts=starts, steps=steps)


def bind_roll(x: Operand, shift: int, axis: int) -> Operand:
    """``numpy.roll(x, shift, axis)`` on one axis, a view: the fused loop reads ``x`` at
    ``(i - shift) mod n`` along ``axis``."""
    ctx = find_trace((x,))
    if ctx is None:
        return np.roll(x, shift, axis)
    n = x.shape[axis]
    shift = shift % n if n else 0
    if shift == 0:
        return x
    return _view(x, Op.ROLL, x.shape, axis=axis, shift=shift)


def bind_matmul(a: Operand, b: Operand) -> Operand:
    """``numpy.matmul`` (``a @ b``): stacked matrices broadcast; BLAS for floating point."""
    from .dtypes import result_type

    aa, ab = aval_of(a), aval_of(b)
    if aa.ndim == 0 or ab.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions (a scalar "
                         "cannot be an operand of @; use *)")
    k_a = aa.shape[-1]
    k_b = ab.shape[-2] if ab.ndim > 1 else ab.shape[0]
    if k_a != k_b:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {k_b} is "
                         f"different from {k_a})")
    batch = broadcast_shapes_like_numpy([aa.shape[:-2], ab.shape[:-2]])
    shape = batch + (aa.shape[-2:-1] if aa.ndim > 1 else ()) + (
        ab.shape[-1:] if ab.ndim > 1 else ())
    dtype, weak = result_type(aa, ab)
    ctx = find_trace((a, b))
    if ctx is None:
        return np.matmul(a, b)
    va = cast_var(ctx, as_var(ctx, a, dtype), dtype)
    vb = cast_var(ctx, as_var(ctx, b, dtype), dtype)
    out = ctx.add_node(Op.MATMUL, (va, vb), Aval(shape, dtype, weak))
    return Tracer(ctx, out, sources_of((a, b)))


def bind_library(op: Op, operands: Sequence[Operand], aval: Aval, eager, **params) -> Operand:
    """A library primitive whose result aval the caller computed (NumPy decides it)."""
    ctx = find_trace(operands)
    if ctx is None:
        return eager()
    vars_ = tuple(as_var(ctx, x) for x in operands)
    out = ctx.add_node(op, vars_, aval, **params)
    return Tracer(ctx, out, sources_of(operands))


def bind_results(op: Op, operands: Sequence[Operand], eager, **params) -> Operand:
    """A library primitive of ``core.rules.LIBRARY_RESULTS`` (one result, or a tuple of
    several: ``qr``, ``eigh``, ``svd``...): the result avals come from that table, so a bad
    shape fails here, where it is recorded. ``eager()`` answers outside a trace."""
    from .rules import LIBRARY_RESULTS

    ctx = find_trace(operands)
    avals = LIBRARY_RESULTS[op](*(aval_of(x) for x in operands), **params)
    if ctx is None:
        return eager()
    vars_ = tuple(as_var(ctx, x) for x in operands)
    sources = sources_of(operands)
    if len(avals) == 1:
        return Tracer(ctx, ctx.add_node(op, vars_, avals[0], **params), sources)
    outs = ctx.add_multi(op, vars_, avals, **params)
    return tuple(Tracer(ctx, v, sources) for v in outs)


def bind_reduce(op: Op, x: Operand, axes: tuple[int, ...], dtype: np.dtype,
                eager) -> Operand:
    """A reduction over ``axes`` (normalised, sorted) producing ``dtype``; the input is cast
    to ``dtype`` first, as NumPy does for ``sum(int8_array)``."""
    ctx = find_trace((x,))
    if ctx is None:
        return eager()
    var = x.ir_var
    if op not in (Op.ARGMAX, Op.ARGMIN):
        var = cast_var(ctx, var, dtype)
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    out = ctx.add_node(op, (var,), Aval(shape, dtype), axes=axes)
    return Tracer(ctx, out, x.sources)
