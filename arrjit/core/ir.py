"""The intermediate representation: a typed, pure dataflow graph of primitives.

The IR is data. ``Op`` lists every primitive; op groups are frozensets; ``Var``, ``Node`` and
``Graph`` are frozen dataclasses. Per-op behaviour lives in tables keyed by ``Op`` elsewhere
(``core.rules``, ``core.interpret.IMPLS``, each backend's expression table).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> x = Var(0, Aval((3,), np.dtype("float64")))
>>> y = Var(1, Aval((3,), np.dtype("float64")))
>>> g = Graph((x,), (Node(Op.EXP, (x,), y),), (y,))
>>> print(g)
graph(a: float64[3]) {
  b: float64[3] = exp a
  return b
}
"""
from __future__ import annotations

import enum
import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .dtypes import Aval


class Op(enum.Enum):
    # leaves
    CONST = "const"
    # elementwise unary
    NEG = "negative"
    ABS = "absolute"
    SIGN = "sign"
    EXP = "exp"
    LOG = "log"
    LOG1P = "log1p"
    LOG2 = "log2"
    LOG10 = "log10"
    EXPM1 = "expm1"
    SQRT = "sqrt"
    CBRT = "cbrt"
    SQUARE = "square"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    TANH = "tanh"
    SINH = "sinh"
    COSH = "cosh"
    ARCSIN = "arcsin"
    ARCCOS = "arccos"
    ARCTAN = "arctan"
    ARCSINH = "arcsinh"
    ARCCOSH = "arccosh"
    ARCTANH = "arctanh"
    TRUNC = "trunc"
    SIGNBIT = "signbit"
    COPYSIGN = "copysign"
    NEXTAFTER = "nextafter"
    FLOOR = "floor"
    CEIL = "ceil"
    RINT = "rint"
    LOGICAL_NOT = "logical_not"
    INVERT = "invert"
    ISNAN = "isnan"
    ISINF = "isinf"
    ISFINITE = "isfinite"
    CONJ = "conjugate"
    # elementwise binary
    ADD = "add"
    SUB = "subtract"
    MUL = "multiply"
    DIV = "true_divide"
    FLOORDIV = "floor_divide"
    MOD = "remainder"
    POW = "power"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    ARCTAN2 = "arctan2"
    HYPOT = "hypot"
    LOGADDEXP = "logaddexp"
    EQ = "equal"
    NE = "not_equal"
    LT = "less"
    LE = "less_equal"
    GT = "greater"
    GE = "greater_equal"
    LOGICAL_AND = "logical_and"
    LOGICAL_OR = "logical_or"
    LOGICAL_XOR = "logical_xor"
    BITWISE_AND = "bitwise_and"
    BITWISE_OR = "bitwise_or"
    BITWISE_XOR = "bitwise_xor"
    LEFT_SHIFT = "left_shift"
    RIGHT_SHIFT = "right_shift"
    FMOD = "fmod"              # the C remainder: the sign of the dividend
    LDEXP = "ldexp"            # x * 2**n, exactly
    GCD = "gcd"
    LCM = "lcm"
    # elementwise, other arities
    SELECT = "select"          # select(pred, on_true, on_false)
    CAST = "convert"           # params: dtype
    REAL = "real"              # the parts of a complex value (numpy.real / numpy.imag)
    IMAG = "imag"
    COMPLEX = "complex"        # complex(real, imag) of two same-dtype real operands
    # special functions (``core.special``): float operands of the result's dtype
    ERF = "erf"
    ERFC = "erfc"
    GAMMALN = "gammaln"
    DIGAMMA = "digamma"
    GAMMAINC = "gammainc"      # gammainc(a, x): the regularized lower incomplete gamma
    GAMMAINCC = "gammaincc"
    # views (index maps; never copies inside a kernel)
    BROADCAST = "broadcast"    # params: shape (numpy broadcast_to rules)
    TRANSPOSE = "transpose"    # params: perm
    RESHAPE = "reshape"        # params: shape
    SLICE = "slice"            # params: starts, steps (the result shape is the out var's)
    ROLL = "roll"              # params: axis, shift (0 < shift < size): numpy.roll on one axis
    # reductions (loop nests with accumulators); params: axes (sorted, non-negative)
    REDUCE_SUM = "reduce_sum"
    REDUCE_PROD = "reduce_prod"
    REDUCE_MAX = "reduce_max"
    REDUCE_MIN = "reduce_min"
    REDUCE_AND = "reduce_and"
    REDUCE_OR = "reduce_or"
    ARGMAX = "argmax"          # first index of the maximum over one axis (or all, flattened)
    ARGMIN = "argmin"
    # control flow: params cond (Graph), body (Graph), n_carry, n_cond_consts, trip_count (None
    # or the iteration count known while tracing); several outputs
    WHILE = "while"
    # library calls (kernel boundaries, run by arrjit.library between kernels)
    MATMUL = "matmul"          # numpy.matmul semantics (BLAS for floating point)
    EINSUM = "einsum"          # params: subscripts
    CONCATENATE = "concatenate"  # params: axis
    SORT = "sort"              # params: axis
    ARGSORT = "argsort"        # params: axis, stable
    CUMSUM = "cumsum"          # params: axis
    CUMPROD = "cumprod"        # params: axis
    SEARCHSORTED = "searchsorted"  # params: side
    GATHER = "gather"          # params: index (a template; arrays are the other inputs)
    SCATTER = "scatter"        # params: index, mode ('set', 'add', 'multiply', 'min', 'max')
    CONVOLVE = "convolve"      # params: mode ('full', 'same', 'valid'); 1-d, first the longer
    # dense linear algebra (NumPy's LAPACK), batched over leading axes; several results
    SOLVE = "solve"            # solve(a[..., n, n], b[..., n, k] or b[n])
    INV = "inv"
    DET = "det"
    SLOGDET = "slogdet"        # results: sign, log|det|
    CHOLESKY = "cholesky"      # params: upper
    QR = "qr"                  # params: mode ('reduced', 'complete', 'r'); results: q, r (or r)
    EIGH = "eigh"              # params: UPLO, vectors; results: w, v (or w)
    SVD = "svd"                # params: full_matrices, vectors; results: u, s, vh (or s)
    EIG = "eig"                # params: vectors; results (complex): w, v (or w)


UNARY = frozenset({
    Op.NEG, Op.ABS, Op.SIGN, Op.EXP, Op.LOG, Op.LOG1P, Op.LOG2, Op.LOG10, Op.EXPM1, Op.SQRT, Op.CBRT, Op.SQUARE, Op.SIN,
    Op.COS, Op.TAN, Op.TANH, Op.SINH, Op.COSH, Op.ARCSIN, Op.ARCCOS, Op.ARCTAN, Op.ARCSINH,
    Op.ARCCOSH, Op.ARCTANH, Op.TRUNC, Op.SIGNBIT, Op.FLOOR,
    Op.CEIL, Op.RINT, Op.LOGICAL_NOT, Op.INVERT, Op.ISNAN, Op.ISINF, Op.ISFINITE, Op.CONJ,
})
BINARY = frozenset({
    Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.FLOORDIV, Op.MOD, Op.POW, Op.MAXIMUM, Op.MINIMUM,
    Op.ARCTAN2, Op.HYPOT, Op.LOGADDEXP, Op.COPYSIGN, Op.NEXTAFTER, Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.LOGICAL_AND, Op.LOGICAL_OR,
    Op.LOGICAL_XOR, Op.BITWISE_AND, Op.BITWISE_OR, Op.BITWISE_XOR, Op.LEFT_SHIFT,
    Op.RIGHT_SHIFT, Op.FMOD, Op.LDEXP, Op.GCD, Op.LCM,
})
UFUNC_OPS = UNARY | BINARY
COMPLEX_PARTS = frozenset({Op.REAL, Op.IMAG, Op.COMPLEX})
SPECIAL = frozenset({Op.ERF, Op.ERFC, Op.GAMMALN, Op.DIGAMMA, Op.GAMMAINC, Op.GAMMAINCC})
ELEMENTWISE = UFUNC_OPS | COMPLEX_PARTS | SPECIAL | {Op.SELECT, Op.CAST}
VIEWS = frozenset({Op.BROADCAST, Op.TRANSPOSE, Op.RESHAPE, Op.SLICE, Op.ROLL})
REDUCTIONS = frozenset({Op.REDUCE_SUM, Op.REDUCE_PROD, Op.REDUCE_MAX, Op.REDUCE_MIN,
                        Op.REDUCE_AND, Op.REDUCE_OR, Op.ARGMAX, Op.ARGMIN})
LINALG = frozenset({Op.SOLVE, Op.INV, Op.DET, Op.SLOGDET, Op.CHOLESKY, Op.QR, Op.EIGH, Op.SVD,
                    Op.EIG})
LIBRARY_CALLS = frozenset({Op.MATMUL, Op.EINSUM, Op.CONCATENATE, Op.SORT, Op.ARGSORT,
                           Op.CUMSUM, Op.CUMPROD, Op.SEARCHSORTED, Op.GATHER, Op.SCATTER,
                           Op.CONVOLVE}) | LINALG
CONTROL_FLOW = frozenset({Op.WHILE})
ALL_OPS = frozenset(Op)
assert ELEMENTWISE | VIEWS | REDUCTIONS | LIBRARY_CALLS | CONTROL_FLOW | {Op.CONST} == ALL_OPS


def ufunc_of(op: Op) -> np.ufunc:
    """The NumPy ufunc that defines an elementwise op's semantics."""
    return getattr(np, op.value)


class Literal:
    """A constant array held by a CONST node, compared and hashed by value."""

    __slots__ = ("array", "_digest")

    def __init__(self, array: np.ndarray):
        self.array = np.asarray(array, order="C")
        self.array.setflags(write=False)
        h = hashlib.sha256(self.array.tobytes())
        h.update(repr((self.array.dtype.str, self.array.shape)).encode())
        self._digest = h.hexdigest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and other._digest == self._digest

    def __hash__(self) -> int:
        return hash(self._digest)

    def __repr__(self) -> str:
        if self.array.ndim == 0:
            return repr(self.array.item())
        return f"<{self.array.dtype.name}{list(self.array.shape)} constant>"


@dataclass(frozen=True, eq=False)
class Var:
    """One value in a graph. Identity is the ``id``; ``aval`` is its shape and dtype."""

    id: int
    aval: Aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Var) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)


@dataclass(frozen=True)
class Node:
    """``out = op(*inputs, **params)``; params is a sorted tuple of (name, hashable value).
    Control-flow nodes have further outputs in ``extra``."""

    op: Op
    inputs: tuple[Var, ...]
    out: Var
    params: tuple[tuple[str, Any], ...] = ()
    extra: tuple[Var, ...] = ()

    @property
    def param(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def outs(self) -> tuple[Var, ...]:
        return (self.out,) + self.extra


def make_params(**kwargs: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(kwargs.items()))


@dataclass(frozen=True)
class Graph:
    """A function: input vars, nodes in topological order, output vars.

    ``annotations`` maps a var's id to what a transformation must know about it and the
    compiler ignores (``arrjit.autodiff``: a ``stop_gradient``, a custom derivative rule);
    passes that rewrite a graph drop them."""

    inputs: tuple[Var, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Var, ...]
    annotations: dict | None = field(default=None, repr=False, compare=False, hash=False)
    _producers: dict | None = field(default=None, repr=False, compare=False, hash=False)

    def producer(self, var: Var) -> Node | None:
        producers = self._producers
        if producers is None:
            producers = {v: n for n in self.nodes for v in n.outs}
            object.__setattr__(self, "_producers", producers)
        return producers.get(var)

    def var_factory(self) -> Callable[[Aval], Var]:
        """Makes vars for nodes a pass adds to this graph, numbered after all of its own."""
        ids = itertools.count(1 + max((v.id for v in (*self.inputs, *(
            o for n in self.nodes for o in n.outs))), default=0))
        return lambda aval: Var(next(ids), aval)

    def consumers(self) -> dict[Var, list[Node]]:
        users: dict[Var, list[Node]] = {}
        for node in self.nodes:
            for v in node.inputs:
                users.setdefault(v, []).append(node)
        return users

    def __str__(self) -> str:
        return format_graph(self)


def _var_names(graph: Graph) -> dict[Var, str]:
    names: dict[Var, str] = {}

    def name_for(i: int) -> str:
        letters = "abcdefghijklmnopqrstuvwxyz"
        s = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            s = letters[r] + s
        return s

    for v in graph.inputs:
        names[v] = name_for(len(names))
    for n in graph.nodes:
        for v in n.outs:
            names[v] = name_for(len(names))
    return names


def format_graph(graph: Graph) -> str:
    """A readable listing in the spirit of ``jax.make_jaxpr``."""
    names = _var_names(graph)

    def ref(v: Var) -> str:
        return names.get(v, f"?{v.id}")

    def fmt_param(value: Any) -> str:
        if isinstance(value, np.dtype):
            return value.name
        if isinstance(value, Graph):
            return "{ " + " ".join(format_graph(value).split()) + " }"
        return repr(value)

    header = ", ".join(f"{ref(v)}: {v.aval}" for v in graph.inputs)
    lines = [f"graph({header}) {{"]
    for n in graph.nodes:
        params = " ".join(f"{k}={fmt_param(v)}" for k, v in n.params if k != "value")
        if n.op is Op.CONST:
            args = repr(n.param["value"])
        else:
            args = " ".join(ref(v) for v in n.inputs)
        extra = f"[{params}] " if params else ""
        lhs = ", ".join(f"{ref(v)}: {v.aval}" for v in n.outs)
        lines.append(f"  {lhs} = {n.op.value}{extra and ' ' + extra.rstrip()} {args}".rstrip())
    lines.append("  return " + ", ".join(ref(v) for v in graph.outputs))
    lines.append("}")
    return "\n".join(lines)
