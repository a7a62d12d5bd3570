"""The native entry ABI: how a compiled function's Python arguments become the flat machine
arguments of numba's calling convention, and the CPython wrapper that does it without numba.

numba compiles a function ``f(a, n)`` to a native ``i32 f(ret*, excinfo*, <flat args>)``: the
status (0: returned normally), the return value stored through ``ret``, and each argument
flattened into its data model's fields. A C-contiguous array of rank ``d`` flattens into
``meminfo, parent, nitems, itemsize, data, shape[d], strides[d]``; an integer is one ``i64``.

The wrapper rendered here is a ``METH_FASTCALL`` CPython function that reads those fields
straight out of the ``ndarray`` objects, releases the GIL around the call (generated entries
are ``nogil``), and boxes the result. On any status but 0, or a wrong argument count, it
hands its arguments to a Python fallback (numba's own entry point, which raises the exact
error numba would). It trusts its callers with types, as numba's entry points do when the
dispatcher is skipped: arrjit calls entries only with the buffers a plan typed them for.

>>> kinds = describe([np.zeros((2, 3)), 5])
>>> kinds
(ArrayArg(itemsize=8, ndim=2), IntArg())
>>> flat_kinds(kinds)
['ptr', 'ptr', 'i64', 'i64', 'ptr', 'i64', 'i64', 'i64', 'i64', 'i64']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, Union

import numpy as np

# Offsets into NumPy's PyArrayObject (a public struct, the same in NumPy 1 and 2) after a
# 16-byte PyObject header; ``load.usable`` checks them against a live array first.
DATA_OFFSET, DIMS_OFFSET, STRIDES_OFFSET = 16, 32, 40

RETURNS = {"none", "bool", "int64"}   # numba return types the wrapper boxes


@dataclass(frozen=True)
class ArrayArg:
    itemsize: int
    ndim: int


@dataclass(frozen=True)
class IntArg:
    pass


ArgKind = Union[ArrayArg, IntArg]


def describe(args: Sequence[Any]) -> tuple[ArgKind, ...] | None:
    """The ABI kinds of ``args``, or None when one has no native form here (an array that is
    not C-contiguous or of an object dtype, a float, a tuple, ...)."""
    kinds: list[ArgKind] = []
    for a in args:
        if isinstance(a, np.ndarray):
            if not a.flags.c_contiguous or a.dtype.hasobject:
                return None
            kinds.append(ArrayArg(a.itemsize, a.ndim))
        elif isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            kinds.append(IntArg())
        else:
            return None
    return tuple(kinds)


def signature_key(args: Sequence[Any]) -> str | None:
    """A name for the numba signature ``args`` select (dtype, rank, writeability per array;
    ``i`` per integer), or None when ``describe`` has no native form for them."""
    if describe(args) is None:
        return None
    parts = [f"{a.dtype.str}{a.ndim}{'w' if a.flags.writeable else 'r'}"
             if isinstance(a, np.ndarray) else "i" for a in args]
    return "_".join(parts)


def flat_kinds(kinds: Sequence[ArgKind]) -> list[str]:
    """The LLVM types (``ptr`` or ``i64``) of the flattened arguments, in order."""
    flat: list[str] = []
    for kind in kinds:
        if isinstance(kind, ArrayArg):
            flat += ["ptr", "ptr", "i64", "i64", "ptr"] + ["i64"] * (2 * kind.ndim)
        else:
            flat.append("i64")
    return flat


WRAPPER_NAME = "arrjit_entry"
FALLBACK_GLOBAL = "arrjit_fallback"


TARGET_GLOBAL = "arrjit_target"


def render_wrapper(symbol: str | None, kinds: Sequence[ArgKind], returns: str,
                   nogil: bool) -> str:
    """LLVM IR of the CPython wrapper ``arrjit_entry`` around numba's native ``symbol``, or,
    for ``symbol=None``, around the function whose address is stored in ``arrjit_target``
    (a function numba has compiled in this process)."""
    body: list[str] = []
    flat: list[str] = []
    for i, kind in enumerate(kinds):
        body += [f"  %o{i}.at = getelementptr ptr, ptr %args, i64 {i}",
                 f"  %o{i} = load ptr, ptr %o{i}.at"]
        if isinstance(kind, IntArg):
            body.append(f"  %i{i} = call i64 @PyLong_AsLongLong(ptr %o{i})")
            flat.append(f"i64 %i{i}")
            continue
        body += _array_fields(i, kind.ndim)
        flat += ["ptr null", f"ptr %o{i}", f"i64 %n{i}.{kind.ndim}", f"i64 {kind.itemsize}",
                 f"ptr %data{i}"]
        flat += [f"i64 %shape{i}.{k}" for k in range(kind.ndim)]
        flat += [f"i64 %stride{i}.{k}" for k in range(kind.ndim)]
    callee = f'@"{symbol}"' if symbol is not None else "%target"
    call = f"  %status = call i32 {callee}(ptr %ret, ptr %exc, {', '.join(flat)})"
    body += ["  %ts = call ptr @PyEval_SaveThread()", call,
             "  call void @PyEval_RestoreThread(ptr %ts)"] if nogil else [call]
    body += ["  %ok = icmp eq i32 %status, 0",
             "  br i1 %ok, label %done, label %fallback", "done:"]
    body += _box_result(returns)
    flat_types = ", ".join(flat_kinds(kinds))
    if symbol is not None:
        target = [f"declare i32 @\"{symbol}\"(ptr, ptr, {flat_types})"]
    else:
        target = [f"@{TARGET_GLOBAL} = global ptr null"]
        body.insert(0, f"  %target = load ptr, ptr @{TARGET_GLOBAL}")
    return "\n".join([
        "declare ptr @PyEval_SaveThread()",
        "declare void @PyEval_RestoreThread(ptr)",
        "declare i64 @PyLong_AsLongLong(ptr)",
        "declare ptr @PyLong_FromLongLong(i64)",
        "declare void @Py_IncRef(ptr)",
        "declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)",
        "@_Py_NoneStruct = external global i8",
        "@_Py_TrueStruct = external global i8",
        "@_Py_FalseStruct = external global i8",
        f"@{FALLBACK_GLOBAL} = global ptr null",
        *target,
        "",
        f"define ptr @{WRAPPER_NAME}(ptr %self, ptr %args, i64 %nargs) {{",
        "entry:",
        "  %ret = alloca [2 x i64], align 8",
        "  %exc = alloca ptr, align 8",
        "  store ptr null, ptr %exc",
        "  store [2 x i64] zeroinitializer, ptr %ret",
        f"  %arity = icmp eq i64 %nargs, {len(kinds)}",
        "  br i1 %arity, label %call, label %fallback",
        "call:",
        *body,
        "fallback:",
        f"  %callback = load ptr, ptr @{FALLBACK_GLOBAL}",
        "  %result = call ptr @PyObject_Vectorcall(ptr %callback, ptr %args, i64 %nargs, "
        "ptr null)",
        "  ret ptr %result",
        "}",
        ""])


def _array_fields(i: int, ndim: int) -> list[str]:
    lines = [f"  %data{i}.at = getelementptr i8, ptr %o{i}, i64 {DATA_OFFSET}",
             f"  %data{i} = load ptr, ptr %data{i}.at",
             f"  %dims{i}.at = getelementptr i8, ptr %o{i}, i64 {DIMS_OFFSET}",
             f"  %dims{i} = load ptr, ptr %dims{i}.at",
             f"  %strides{i}.at = getelementptr i8, ptr %o{i}, i64 {STRIDES_OFFSET}",
             f"  %strides{i} = load ptr, ptr %strides{i}.at",
             f"  %n{i}.0 = add i64 1, 0"]
    for k in range(ndim):
        lines += [f"  %shape{i}.{k}.at = getelementptr i64, ptr %dims{i}, i64 {k}",
                  f"  %shape{i}.{k} = load i64, ptr %shape{i}.{k}.at",
                  f"  %stride{i}.{k}.at = getelementptr i64, ptr %strides{i}, i64 {k}",
                  f"  %stride{i}.{k} = load i64, ptr %stride{i}.{k}.at",
                  f"  %n{i}.{k + 1} = mul i64 %n{i}.{k}, %shape{i}.{k}"]
    return lines


def _box_result(returns: str) -> list[str]:
    if returns == "none":
        return ["  call void @Py_IncRef(ptr @_Py_NoneStruct)", "  ret ptr @_Py_NoneStruct"]
    if returns == "bool":
        return ["  %byte = load i8, ptr %ret", "  %true = icmp ne i8 %byte, 0",
                "  %box = select i1 %true, ptr @_Py_TrueStruct, ptr @_Py_FalseStruct",
                "  call void @Py_IncRef(ptr %box)", "  ret ptr %box"]
    assert returns == "int64", returns   # callers pass one of RETURNS
    return ["  %value = load i64, ptr %ret", "  %box = call ptr @PyLong_FromLongLong(i64 %value)",
            "  ret ptr %box"]
