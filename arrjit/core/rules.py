"""Target-neutral per-op rules, one table per concern, keyed by ``Op``.

Every table covers every op of its group (``tests/test_ir.py`` checks), so adding a
primitive is one ``Op`` member plus one row in each table that its group needs
(``CONTRIBUTING.md``). Tables that belong to one stage live with it: the reference
interpreter (``core.interpret.IMPLS``), batching (``batching.BATCH_RULES``), view index maps
(``passes.fuse.VIEW_MAPS``) and each backend's expressions (``backends/<target>/codegen``).

>>> REDUCTION_RULES[Op.REDUCE_SUM].identity
0
>>> REDUCTION_RULES[Op.REDUCE_SUM].accumulator(np.dtype("float32"))
dtype('float64')
>>> COSTLY[Op.EXP], COSTLY[Op.ADD]
(True, False)
>>> from arrjit.core.ir import Var
>>> x = Var(0, Aval((2, 3), np.dtype("float32")))
>>> ABSTRACT_EVAL[Op.TRANSPOSE](Node(Op.TRANSPOSE, (x,), x, (("perm", (1, 0)),)))
Aval(shape=(3, 2), dtype=dtype('float32'), weak=False)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .dtypes import Aval, complex_dtype, real_dtype
from .ir import LIBRARY_CALLS, REDUCTIONS, SPECIAL, UFUNC_OPS, Node, Op, ufunc_of
from .library import LIBRARY_IMPLS

# -- cost: whether recomputing an elementwise value (under a broadcast, or per element of a
# thread chunk) costs more than reading it from memory ------------------------------------------
_COSTLY_OPS = (
    Op.EXP, Op.LOG, Op.LOG1P, Op.LOG2, Op.LOG10, Op.EXPM1, Op.SQRT, Op.SIN, Op.COS,
    Op.TAN, Op.TANH, Op.SINH, Op.COSH, Op.ARCSIN, Op.ARCCOS, Op.ARCTAN, Op.ARCTAN2, Op.POW,
    Op.DIV, Op.FLOORDIV, Op.MOD, Op.CBRT, Op.HYPOT, Op.LOGADDEXP, Op.ARCSINH, Op.ARCCOSH,
    Op.ARCTANH, Op.NEXTAFTER, Op.FMOD, Op.LDEXP, Op.GCD, Op.LCM,
)
_CHEAP_OPS = (
    Op.NEG, Op.ABS, Op.SIGN, Op.SQUARE, Op.FLOOR, Op.CEIL, Op.RINT, Op.TRUNC, Op.SIGNBIT,
    Op.COPYSIGN, Op.LOGICAL_NOT, Op.INVERT,
    Op.ISNAN, Op.ISINF, Op.ISFINITE, Op.ADD, Op.SUB, Op.MUL, Op.MAXIMUM, Op.MINIMUM, Op.EQ,
    Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.LOGICAL_AND, Op.LOGICAL_OR, Op.LOGICAL_XOR,
    Op.BITWISE_AND, Op.BITWISE_OR, Op.BITWISE_XOR, Op.LEFT_SHIFT, Op.RIGHT_SHIFT, Op.SELECT,
    Op.CAST, Op.CONJ, Op.REAL, Op.IMAG, Op.COMPLEX,
)
COSTLY: dict[Op, bool] = {**{op: True for op in _COSTLY_OPS + tuple(SPECIAL)},
                          **{op: False for op in _CHEAP_OPS}}


# -- reductions ------------------------------------------------------------------------------------
def _same(dtype: np.dtype) -> np.dtype:
    return dtype


def _wide_float(dtype: np.dtype) -> np.dtype:
    """float32 (complex64) sums and products accumulate in float64 (complex128): their error
    then stays within that of NumPy's pairwise summation in the narrow type (a plain running
    sum in it does not)."""
    return {np.dtype(np.float32): np.dtype(np.float64),
            np.dtype(np.complex64): np.dtype(np.complex128)}.get(dtype, dtype)


@dataclass(frozen=True)
class ReductionRule:
    """How a reduction accumulates.

    ``update`` names the binary operation that folds one element into the accumulator and
    also combines two partial accumulators (``add``, ``mul``, ``and``, ``or``, ``max``,
    ``min``; ``max``/``min`` propagate NaN as NumPy does). ``identity`` starts the
    accumulator: a number, or ``"lowest"``/``"highest"`` for the dtype's extreme. Arg
    reductions (``index_of`` set) return the index of the extreme value; ``ties`` says which
    index wins (``"first"``: NumPy's first occurrence, and the first NaN)."""

    update: str
    identity: Any
    accumulator: Callable[[np.dtype], np.dtype]
    reference: Callable[..., Any]          # the NumPy function that defines the result
    index_of: str | None = None            # "max" / "min" for arg reductions
    ties: str | None = None


REDUCTION_RULES: dict[Op, ReductionRule] = {
    Op.REDUCE_SUM: ReductionRule("add", 0, _wide_float, np.sum),
    Op.REDUCE_PROD: ReductionRule("mul", 1, _wide_float, np.prod),
    Op.REDUCE_MAX: ReductionRule("max", "lowest", _same, np.max),
    Op.REDUCE_MIN: ReductionRule("min", "highest", _same, np.min),
    Op.REDUCE_AND: ReductionRule("and", True, _same, np.all),
    Op.REDUCE_OR: ReductionRule("or", False, _same, np.any),
    Op.ARGMAX: ReductionRule("max", "lowest", _same, np.argmax, index_of="max", ties="first"),
    Op.ARGMIN: ReductionRule("min", "highest", _same, np.argmin, index_of="min", ties="first"),
}
ARG_REDUCTIONS = frozenset(op for op, rule in REDUCTION_RULES.items() if rule.index_of)
assert set(REDUCTION_RULES) == REDUCTIONS


# -- abstract evaluation: the shape and dtype of a node's result from its inputs and params ------
# ``ir.verify`` checks every node against this table. Elementwise inputs already have the op's
# loop dtype and the result's shape (the primitives insert CAST and BROADCAST nodes).
AbstractEval = Callable[[Node], Aval]


def _ufunc_eval(node: Node) -> Aval:
    ufunc = ufunc_of(node.op)
    dtypes = tuple(v.dtype for v in node.inputs)
    out = ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)[-1]
    return Aval(_common_shape(node), np.dtype(out))


def _common_shape(node: Node) -> tuple[int, ...]:
    shapes = {v.shape for v in node.inputs}
    if len(shapes) != 1:
        raise ValueError(f"{node.op.value} reads operands of shapes {sorted(shapes)}; "
                         f"elementwise operands are broadcast first")
    return shapes.pop()


def _select_eval(node: Node) -> Aval:
    pred, on_true, on_false = node.inputs
    if pred.dtype != np.bool_ or on_true.dtype != on_false.dtype:
        raise ValueError("select takes a bool predicate and two branches of one dtype")
    return Aval(_common_shape(node), on_true.dtype)


def _reduced_shape(node: Node) -> tuple[int, ...]:
    axes = tuple(node.param["axes"])
    src = node.inputs[0]
    if list(axes) != sorted(set(axes)) or any(not 0 <= a < max(src.ndim, 1) for a in axes):
        raise ValueError(f"{node.op.value} axes {axes} are not sorted axes of {src.aval}")
    return tuple(d for k, d in enumerate(src.shape) if k not in axes)


def _slice_eval(node: Node) -> Aval:
    """The window's shape is its result's; every index it reads must lie in the source."""
    src, p = node.inputs[0], node.param
    for start, step, n, size in zip(p["starts"], p["steps"], node.out.shape, src.shape):
        if n and not (0 <= start < size and 0 <= start + step * (n - 1) < size):
            raise ValueError(f"slice reads outside {src.aval}: start {start}, step {step}, "
                             f"length {n}")
    return Aval(node.out.shape, src.dtype)


def _reshape_eval(node: Node) -> Aval:
    shape = tuple(node.param["shape"])
    if math.prod(shape) != math.prod(node.inputs[0].shape):
        raise ValueError(f"cannot reshape {node.inputs[0].aval} to {shape}")
    return Aval(shape, node.inputs[0].dtype)


def _matmul_eval(node: Node) -> Aval:
    a, b = node.inputs
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    shape = batch + (a.shape[-2:-1] if a.ndim > 1 else ()) + (b.shape[-1:] if b.ndim > 1
                                                              else ())
    return Aval(shape, _library_dtype(node))


def _library_dtype(node: Node) -> np.dtype:
    """NumPy's result dtype for a library op, from a run on one-element operands."""
    tiny = [np.zeros((1,) * v.ndim, v.dtype) for v in node.inputs]
    params = {k: v for k, v in node.params}
    return np.asarray(LIBRARY_IMPLS[node.op](*tiny, **params)).dtype


def _library_eval(node: Node) -> Aval:
    """NumPy's result on stand-ins of the operands' shapes (zero-strided views, so nothing
    is allocated for them; index operands are zeros, which are in range)."""
    stand_ins = [np.broadcast_to(np.zeros((), v.dtype), v.shape) for v in node.inputs]
    params = {k: v for k, v in node.params}
    out = np.asarray(LIBRARY_IMPLS[node.op](*stand_ins, **params))
    return Aval(tuple(out.shape), out.dtype)


# -- the results of library ops whose shapes NumPy cannot be asked on stand-ins (LAPACK raises
# on singular zeros): per op, the avals of every result from the operands' avals and params
def _batch(*avals: Aval, core: int = 2) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(a.shape[:a.ndim - core] for a in avals)))


def _square(a: Aval, what: str) -> int:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{what} needs square matrices in its last two axes, got {a}")
    return a.shape[-1]


def _solve_results(a: Aval, b: Aval) -> list[Aval]:
    """``b`` is one vector when it is 1-d, else a stack of matrices (NumPy 2's rule)."""
    n = _square(a, "solve")
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ValueError(f"solve: b {b} does not have {n} elements for a {a}")
        return [Aval(a.shape[:-1], a.dtype)]
    if b.shape[-2] != n:
        raise ValueError(f"solve: b {b} does not have {n} rows for a {a}")
    return [Aval(_batch(a, b) + b.shape[-2:], a.dtype)]


def _qr_results(a: Aval, mode: str) -> list[Aval]:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    r_rows = m if mode == "complete" else k
    r = Aval(batch + (r_rows, n), a.dtype)
    if mode == "r":
        return [r]
    return [Aval(batch + (m, r_rows), a.dtype), r]


def _svd_results(a: Aval, full_matrices: bool, vectors: bool) -> list[Aval]:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    s = Aval(batch + (k,), real_dtype(a.dtype))
    if not vectors:
        return [s]
    rows, cols = (m, n) if full_matrices else (k, k)
    return [Aval(batch + (m, rows), a.dtype), s, Aval(batch + (cols, n), a.dtype)]


def _eigh_results(a: Aval, UPLO: str, vectors: bool) -> list[Aval]:
    n = _square(a, "eigh")
    w = Aval(a.shape[:-2] + (n,), real_dtype(a.dtype))
    return [w, Aval(a.shape, a.dtype)] if vectors else [w]


def _eig_results(a: Aval, vectors: bool) -> list[Aval]:
    n = _square(a, "eig")
    dtype = np.result_type(a.dtype, np.complex64)
    w = Aval(a.shape[:-2] + (n,), dtype)
    return [w, Aval(a.shape, dtype)] if vectors else [w]


def _convolve_results(a: Aval, v: Aval, mode: str) -> list[Aval]:
    n, m = a.shape[0], v.shape[0]
    length = {"full": n + m - 1, "same": max(n, m), "valid": max(n, m) - min(n, m) + 1}[mode]
    return [Aval((length,), a.dtype)]


def _square_results(what: str):
    """A square matrix per matrix (inv, cholesky)."""
    def results(a: Aval, **_: Any) -> list[Aval]:
        _square(a, what)
        return [Aval(a.shape, a.dtype)]
    return results


def _det_results(a: Aval) -> list[Aval]:
    _square(a, "det")
    return [Aval(a.shape[:-2], a.dtype)]


def _slogdet_results(a: Aval) -> list[Aval]:
    _square(a, "slogdet")
    return [Aval(a.shape[:-2], a.dtype), Aval(a.shape[:-2], real_dtype(a.dtype))]


LIBRARY_RESULTS: dict[Op, Callable[..., list[Aval]]] = {
    Op.SOLVE: _solve_results,
    Op.INV: _square_results("inv"),
    Op.DET: _det_results,
    Op.SLOGDET: _slogdet_results,
    Op.CHOLESKY: _square_results("cholesky"),
    Op.QR: _qr_results,
    Op.EIGH: _eigh_results,
    Op.SVD: _svd_results,
    Op.EIG: _eig_results,
    Op.CONVOLVE: _convolve_results,
}


def library_results(node: Node) -> list[Aval]:
    """The avals of every result of a library node in ``LIBRARY_RESULTS``."""
    return LIBRARY_RESULTS[node.op](*(v.aval for v in node.inputs), **node.param)


ABSTRACT_EVAL: dict[Op, AbstractEval] = {op: _ufunc_eval for op in UFUNC_OPS}
ABSTRACT_EVAL.update({
    Op.CONST: lambda n: Aval(tuple(n.param["value"].array.shape), n.param["value"].array.dtype),
    Op.SELECT: _select_eval,
    Op.CAST: lambda n: Aval(n.inputs[0].shape, np.dtype(n.param["dtype"])),
    Op.REAL: lambda n: Aval(n.inputs[0].shape, real_dtype(n.inputs[0].dtype)),
    Op.IMAG: lambda n: Aval(n.inputs[0].shape, real_dtype(n.inputs[0].dtype)),
    Op.COMPLEX: lambda n: Aval(n.inputs[0].shape, complex_dtype(n.inputs[0].dtype)),
    **{op: (lambda n: Aval(_common_shape(n), n.inputs[0].dtype)) for op in SPECIAL},
    Op.BROADCAST: lambda n: Aval(tuple(np.broadcast_shapes(n.inputs[0].shape,
                                                           tuple(n.param["shape"]))),
                                 n.inputs[0].dtype),
    Op.TRANSPOSE: lambda n: Aval(tuple(n.inputs[0].shape[p] for p in n.param["perm"]),
                                 n.inputs[0].dtype),
    Op.RESHAPE: _reshape_eval,
    Op.SLICE: _slice_eval,
    Op.ROLL: lambda n: n.inputs[0].aval,
    Op.WHILE: lambda n: n.inputs[0].aval,     # the first carry (the others: ``n.extra``)
    Op.MATMUL: _matmul_eval,
})
ABSTRACT_EVAL.update({op: (lambda n: Aval(_reduced_shape(n), n.inputs[0].dtype))
                      for op in REDUCTIONS - ARG_REDUCTIONS - {Op.REDUCE_AND, Op.REDUCE_OR}})
ABSTRACT_EVAL.update({op: (lambda n: Aval(_reduced_shape(n), np.dtype(np.bool_)))
                      for op in (Op.REDUCE_AND, Op.REDUCE_OR)})
ABSTRACT_EVAL.update({op: (lambda n: Aval(_reduced_shape(n), np.dtype(np.int64)))
                      for op in ARG_REDUCTIONS})
ABSTRACT_EVAL.update({op: _library_eval for op in LIBRARY_CALLS - {Op.MATMUL}
                      - set(LIBRARY_RESULTS)})
ABSTRACT_EVAL.update({op: (lambda n: library_results(n)[0]) for op in LIBRARY_RESULTS})
assert set(ABSTRACT_EVAL) == set(Op)
