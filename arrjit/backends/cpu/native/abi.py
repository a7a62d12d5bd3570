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


def _unpack(kinds: Sequence[ArgKind]) -> tuple[list[str], list[str]]:
    """IR reading the Python arguments ``%args`` into the flat machine arguments, and those
    arguments as typed IR values (``ptr %o0``, ``i64 %shape0.1``, ...)."""
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
    return body, flat


_PYTHON_API = [
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
]


def _wrapper(kinds: Sequence[ArgKind], body: list[str]) -> list[str]:
    """The CPython function ``arrjit_entry`` running ``body`` when it is given as many
    arguments as ``kinds``, else its fallback."""
    return [
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
        ""]


def render_wrapper(symbol: str | None, kinds: Sequence[ArgKind], returns: str,
                   nogil: bool) -> str:
    """LLVM IR of the CPython wrapper ``arrjit_entry`` around numba's native ``symbol``, or,
    for ``symbol=None``, around the function whose address is stored in ``arrjit_target``
    (a function numba has compiled in this process)."""
    body, flat = _unpack(kinds)
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
    return "\n".join([*_PYTHON_API, *target, "", *_wrapper(kinds, body)])


PARALLEL_FOR = "numba_parallel_for"   # numba's threading layer (``numba.np.ufunc.parallel``)
MAX_THREADS = 1024


def render_parallel_wrapper(kinds: Sequence[ArgKind], thread_arg: int) -> str:
    """LLVM IR of a CPython wrapper that runs the function at ``arrjit_target`` once per
    thread through numba's threading layer: argument ``thread_arg`` (an integer) is replaced
    by the thread's number ``t``, for ``t`` in ``range(threads)`` where ``threads`` is the
    argument after it (at most ``MAX_THREADS``). The GIL is released throughout; the wrapper
    returns how many of the runs ended with an error status.

    ``numba_parallel_for(fn, args, dims, steps, data, inner_ndim, array_count, threads)``
    calls ``fn(args', dims', steps, data)`` on its threads for slices of ``range(dims[0])``,
    each ``args'[0]`` pointing at the slice's first element of ``args[0]`` (``steps[0]``
    bytes apart): here the thread numbers, a constant table; ``data`` holds the unpacked
    arguments, after a count of failed runs."""
    body, flat = _unpack(kinds)
    types = flat_kinds(kinds)
    at = sum(len(flat_kinds([k])) for k in kinds[:thread_arg])   # flat position of ``t``
    threads = flat[at + 1].split()[1]
    body += [f"  %ctx = alloca [{len(flat) + 1} x i64], align 8", "  store i64 0, ptr %ctx"]
    for j, value in enumerate(flat):
        body += [f"  %ctx.{j} = getelementptr i64, ptr %ctx, i64 {j + 1}",
                 f"  store {value}, ptr %ctx.{j}"]
    body += ["  %argv = alloca ptr, align 8",
             "  store ptr @arrjit_thread_numbers, ptr %argv",
             "  %dims = alloca [2 x i64], align 8",
             "  store [2 x i64] [i64 0, i64 1], ptr %dims",
             f"  store i64 {threads}, ptr %dims",
             "  %steps = alloca i64, align 8",
             "  store i64 8, ptr %steps",
             f"  %threads32 = trunc i64 {threads} to i32",
             "  %ts = call ptr @PyEval_SaveThread()",
             f"  call void @{PARALLEL_FOR}(ptr @arrjit_thread, ptr %argv, ptr %dims, "
             "ptr %steps, ptr %ctx, i64 1, i64 1, i32 %threads32)",
             "  call void @PyEval_RestoreThread(ptr %ts)",
             "  %failed = load atomic i64, ptr %ctx seq_cst, align 8",
             "  store i64 %failed, ptr %ret",
             "  br label %done", "done:", *_box_result("int64")]
    loads, args = [], []
    for j, kind in enumerate(types):
        loads += [f"  %f{j}.at = getelementptr i64, ptr %data, i64 {j + 1}",
                  f"  %f{j} = load {kind}, ptr %f{j}.at"]
        args.append("i64 %t" if j == at else f"{kind} %f{j}")
    numbers = ", ".join(f"i64 {t}" for t in range(MAX_THREADS))
    thread = [
        "define internal void @arrjit_thread(ptr %argv, ptr %dims, ptr %steps, ptr %data) {",
        "entry:",
        "  %ret = alloca [2 x i64], align 8",
        "  %exc = alloca ptr, align 8",
        f"  %target = load ptr, ptr @{TARGET_GLOBAL}",
        "  %numbers = load ptr, ptr %argv",
        "  %count = load i64, ptr %dims",
        "  %step = load i64, ptr %steps",
        *loads,
        "  br label %head",
        "head:",
        "  %i = phi i64 [0, %entry], [%i.next, %tail]",
        "  %more = icmp slt i64 %i, %count",
        "  br i1 %more, label %body, label %exit",
        "body:",
        "  %offset = mul i64 %i, %step",
        "  %t.at = getelementptr i8, ptr %numbers, i64 %offset",
        "  %t = load i64, ptr %t.at",
        "  store ptr null, ptr %exc",
        f"  %status = call i32 %target(ptr %ret, ptr %exc, {', '.join(args)})",
        "  %bad = icmp ne i32 %status, 0",
        "  br i1 %bad, label %fail, label %tail",
        "fail:",
        "  %old = atomicrmw add ptr %data, i64 1 seq_cst",
        "  br label %tail",
        "tail:",
        "  %i.next = add i64 %i, 1",
        "  br label %head",
        "exit:",
        "  ret void",
        "}",
        ""]
    return "\n".join([
        *_PYTHON_API,
        f"@{TARGET_GLOBAL} = global ptr null",
        f"@arrjit_thread_numbers = internal constant [{MAX_THREADS} x i64] [{numbers}]",
        f"declare void @{PARALLEL_FOR}(ptr, ptr, ptr, ptr, ptr, i64, i64, i32)",
        "", *thread, *_wrapper(kinds, body)])


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
