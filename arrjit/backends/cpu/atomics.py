"""Atomic counters for the chunk scheduler of generated kernels (numba intrinsics).

Threads running one kernel share a small int64 array ``state`` of counters (which chunks are
taken, which helpers came in and which have left; see ``drivers.render_chunked_module`` and
``backends.cpu.threads``). Taking chunks in native code instead of a Python queue means no thread
sleeps between chunks: a helper that starts late finds fewer chunks left (softmax 4096x1024
float32 with 2 threads: 1.9 -> 1.5 ms).

>>> import numpy as np
>>> from numba import njit
>>> @njit
... def take(state):
...     return fetch_add(state, 0, 1)
>>> state = np.zeros(3, np.int64)
>>> take(state), take(state), int(state[0])
(0, 1, 2)
"""
from __future__ import annotations

import platform

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


def _element_pointer(context, builder, array_type, array, index):
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(data, [index])


@intrinsic
def fetch_add(typingctx, array, index, value):
    """``array[index] += value`` atomically (sequentially consistent); returns the old value.
    ``array`` is a 1-d int64 array."""
    if not (isinstance(array, types.Array) and array.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        pointer = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        amount = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", pointer, amount, "seq_cst")
    return types.int64(array, index, value), codegen


@intrinsic
def load_acquire(typingctx, array, index):
    """``array[index]`` read atomically with acquire ordering: everything the writer did before
    its ``fetch_add`` is visible after this load sees its result."""
    if not (isinstance(array, types.Array) and array.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        pointer = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(pointer, "acquire", 8)
    return types.int64(array, index), codegen


@intrinsic
def spin_pause(typingctx):
    """A hint inside spin-wait loops (x86 ``pause``; nothing elsewhere)."""
    def codegen(context, builder, signature, args):
        if _X86:
            fn = builder.module.declare_intrinsic("llvm.x86.sse2.pause", (),
                                                  ir.FunctionType(ir.VoidType(), []))
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen
