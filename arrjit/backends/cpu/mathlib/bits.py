"""Bit casts, LLVM float intrinsics and the compile flags the math library shares."""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import load_item, make_array, populate_array, store_item

from ..bounds import OutOfBounds
from ..mathnames import BLOCK

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


def _index_pair(index, extent) -> bool:
    return isinstance(index, types.Integer) and isinstance(extent, types.Integer)


def _index_operands(context, builder, signature, args):
    """An intrinsic's ``(index, extent)`` as int64 values: a signed index cast, an unsigned
    one zero-extended (compared unsigned); and whether the index is signed."""
    (ti, tn), (i, n) = signature.args, args
    n = context.cast(builder, n, tn, types.int64)
    if ti.signed:
        i = context.cast(builder, i, ti, types.int64)
    elif ti.bitwidth < 64:
        i = builder.zext(i, ir.IntType(64))
    return i, n, ti.signed


@intrinsic
def outside(typingctx, index, extent):
    """Whether the integer ``index`` lies outside ``[-extent, extent)``, NumPy's range for an
    axis of ``extent`` elements: comparisons and no branch (numba's passes cost time per
    block, and each ``a or b`` in a condition is three)."""
    if not _index_pair(index, extent):
        return None

    def codegen(context, builder, signature, args):
        i, n, signed = _index_operands(context, builder, signature, args)
        if not signed:
            return builder.icmp_unsigned(">=", i, n)
        below = builder.icmp_signed("<", i, builder.neg(n))
        return builder.or_(below, builder.icmp_signed(">=", i, n))
    return types.boolean(index, extent), codegen


@intrinsic
def wrapped(typingctx, index, extent):
    """An integer ``index`` in ``[-extent, extent)`` as an int64 offset in ``[0, extent)`` (a
    negative one counted from the end), as one ``select``."""
    if not _index_pair(index, extent):
        return None

    def codegen(context, builder, signature, args):
        i, n, signed = _index_operands(context, builder, signature, args)
        if not signed:
            return i
        return builder.select(builder.icmp_signed("<", i, i.type(0)), builder.add(i, n), i)
    return types.int64(index, extent), codegen


fmaximum = _llvm_float("llvm.maximum", 2, "max(a, b); NaN if either is NaN.")
fminimum = _llvm_float("llvm.minimum", 2, "min(a, b); NaN if either is NaN.")


def _signed_extreme(name: str, doc: str):
    """An intrinsic calling LLVM's ``name`` (``llvm.smin``/``llvm.smax``) on two signed
    integers, both widened to the wider type. It replaces the builtin ``min``/``max``, whose
    numba implementation is a function compiled in every new process (27 ms for both)."""
    def call(typingctx, a, b):
        if not all(isinstance(t, types.Integer) and t.signed for t in (a, b)):
            return None
        result = types.Integer.from_bitwidth(max(a.bitwidth, b.bitwidth), signed=True)

        def codegen(context, builder, signature, args):
            ty = context.get_value_type(result)
            wide = [context.cast(builder, v, t, result) for v, t in zip(args, (a, b))]
            fn = builder.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty, ty]))
            return builder.call(fn, wide)
        return result(a, b), codegen
    call.__doc__ = doc
    return intrinsic(call)


imin = _signed_extreme("llvm.smin", "min(a, b) of two signed integers.")
imax = _signed_extreme("llvm.smax", "max(a, b) of two signed integers.")


def _f32(value: float) -> np.float32:
    return np.float32(value)


@intrinsic
def block(typingctx, dtype):
    """A kernel's working buffer of ``BLOCK`` elements of ``dtype`` (``np.float64``, ...) on
    its stack: allocated once in the function's entry block, so a kernel needs no heap (a
    heap buffer is numba's runtime, which a native entry loads without)."""
    if isinstance(dtype, types.NumberClass):
        element = dtype.instance_type
    elif isinstance(dtype, types.DType):
        element = dtype.dtype
    else:
        return None
    result = types.Array(element, 1, "C")

    def codegen(context, builder, signature, args):
        data_type = context.get_data_type(element)
        data = cgutils.alloca_once(builder, data_type, size=BLOCK)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(data_type))
        view = make_array(result)(context, builder)
        populate_array(view, data=data, shape=[context.get_constant(types.intp, BLOCK)],
                       strides=[itemsize], itemsize=itemsize, meminfo=None)
        return view._getvalue()
    return result(dtype), codegen


@intrinsic
def flat(typingctx, array):
    """A C-contiguous array as a 1-d view of its elements (``array.reshape(array.size)``
    without the checks: numba lowers each ``reshape`` by compiling a shape normaliser and
    calling a C helper LLVM cannot see through, 7 ms of compile time per call)."""
    if not isinstance(array, types.Array) or array.layout != "C":
        return None
    result = array.copy(ndim=1)

    def codegen(context, builder, signature, args):
        source = make_array(array)(context, builder, args[0])
        view = make_array(result)(context, builder)
        populate_array(view, data=source.data, shape=[source.nitems],
                       strides=[source.itemsize], itemsize=source.itemsize,
                       meminfo=source.meminfo, parent=source.parent)
        return impl_ret_borrowed(context, builder, result, view._getvalue())
    return result(array), codegen


def _flat_element(array, index) -> bool:
    return (isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C"
            and isinstance(index, types.Integer))


@intrinsic
def load(typingctx, array, index):
    """``array[index]`` of a 1-d C-contiguous array at an index known to be in range: no
    negative-index wraparound (which stops LLVM vectorising the loop) and no typing or
    lowering of numba's general indexing (a kernel has one per load)."""
    if not _flat_element(array, index):
        return None

    def codegen(context, builder, signature, args):
        data = make_array(array)(context, builder, args[0]).data
        return load_item(context, builder, array, builder.gep(data, [args[1]], inbounds=True))
    return array.dtype(array, index), codegen


@intrinsic
def store(typingctx, array, index, value):
    """``array[index] = value`` (cast to the array's dtype), as ``load`` reads."""
    if not _flat_element(array, index) or not array.mutable:
        return None

    def codegen(context, builder, signature, args):
        data = make_array(array)(context, builder, args[0]).data
        item = context.cast(builder, args[2], value, array.dtype)
        store_item(context, builder, array, item, builder.gep(data, [args[1]], inbounds=True))
        return context.get_dummy_value()
    return types.none(array, index, value), codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the cache for the line of ``array[index]`` (1-d C-contiguous), to be read soon
    (LLVM's ``prefetch``: a hint that never faults, so ``index`` may lie past the end). A
    kernel in column order whose threads each read a narrow slab of every row issues them a
    few rows ahead: the hardware's prefetchers follow runs within a page, not the jump from
    one row's slab to the next."""
    if not _flat_element(array, index):
        return None

    def codegen(context, builder, signature, args):
        data = make_array(array)(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        kind = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
        hint = cgutils.get_or_insert_function(builder.module, kind, "llvm.prefetch.p0")
        builder.call(hint, [address, i32(0), i32(3), i32(1)])   # read, keep in all levels, data
        return context.get_dummy_value()
    return types.none(array, index), codegen


# ``_nrt`` set explicitly: numba compiles a callee with its caller's setting where unset
@njit(nogil=True, cache=True, error_model="numpy", no_cfunc_wrapper=True, _nrt=True)
def out_of_bounds(index, axis, extent):
    """Raise NumPy's ``IndexError`` for ``index`` on axis ``axis`` of ``extent`` elements.
    Generated code calls this on its error path: the functions a loop driver inlines are
    compiled without numba's reference counting (``codegen.LEAF_OPTIONS``), which a raise
    with run-time arguments needs."""
    raise OutOfBounds(index, axis, extent)


@njit(nogil=True, cache=True, error_model="numpy", no_cfunc_wrapper=True, _nrt=True)
def first_out_of_bounds(indices, axes, extents):
    """Raise NumPy's ``IndexError`` for the first of ``indices`` (a tuple, with the tuples of
    their ``axes`` and ``extents``) outside its axis. A kernel whose positions are all known
    before it reads at any of them tests them together and calls this once, on the error path:
    numba's passes spend their time on each call site that may raise."""
    for k in range(len(indices)):
        if outside(indices[k], extents[k]):
            out_of_bounds(indices[k], axes[k], extents[k])


@njit(**_FLAGS)
def store_values(target, values):
    """Store the tuple ``values`` into the elements of C-contiguous ``target`` of its size (a
    loop driver's small value in registers into its buffer)."""
    t = flat(target)
    for k in range(t.shape[0]):
        store(t, k, values[k])


@njit(**_FLAGS)
def copy_elements(target, source):
    """Copy the elements of C-contiguous ``source`` into ``target`` of the same size (a loop
    driver hands a carry to a nested loop's own buffers this way)."""
    t, s = flat(target), flat(source)
    for k in range(t.shape[0]):
        store(t, k, load(s, k))
