"""Tracing: ``Tracer`` values stand in for arrays while a function runs once to build a Graph.

A tracer knows its abstract value (shape, dtype) and which arguments it was computed from, so
that an error about using its value in Python control flow can name the argument and the fix.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Iterable

import numpy as np

from .. import errors
from .dtypes import Aval
from .ir import Graph, Literal, Node, Op, Var, make_params
from .sizes import Size


class TraceContext:
    """Collects the nodes of one trace. Tracers of a finished trace may not be used again."""

    def __init__(self, function_name: str = "function", parent: "TraceContext | None" = None):
        self.function_name = function_name
        self.parent = parent
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.nodes: list[Node] = []
        self.inputs: list[Var] = []
        self.lifted: list[tuple[Var, "Tracer"]] = []   # inputs standing for outer tracers
        self._lifted_ids: dict[int, Var] = {}
        self.active = True       # tracers of an inactive trace are leaked values
        self.finished = False
        self._entered = 0         # open ``tracing`` blocks of this trace
        self._next_id: int = 0 if parent is None else parent._next_id + 1_000_000
        self._constants: dict[int, tuple[Any, Var]] = {}
        self.python_scalars: set[str] = set()    # arguments passed as Python numbers
        self.annotations: dict[int, Any] = {}    # var id -> transformation note (``Graph``)
        # Concrete values behind this trace's inputs (arrays, or tracers of an enclosing
        # trace that has them): differentiation outside jit knows the point it works at,
        # so Python control flow on a traced value may read it, as in JAX.
        self.known: dict[Var, Any] | None = None
        # where the traced arrays live: the device ``jit`` compiles for
        self.device: str = "cpu" if parent is None else parent.device
        # views (slices, reshapes, transposes...): of each view, the var it views (the first
        # of a chain) and that array's tracer; of each viewed var, its views' tracers. All
        # weak: ``x[i] = v`` may not change an array that a view in use still shows, or that
        # a view in use belongs to, as NumPy's views would show the change
        self.view_roots: dict[int, tuple[int, weakref.ref]] = {}
        self.live_views: dict[int, list[weakref.ref]] = {}

    def new_var(self, aval: Aval) -> Var:
        self._next_id += 1
        return Var(self._next_id, aval)

    def new_input(self, aval: Aval, source: str, python_scalar: bool = False) -> "Tracer":
        """A traced argument; ``python_scalar``: passed as a Python number (error messages
        may then advise making it static, which arrays cannot be)."""
        var = self.new_var(aval)
        self.inputs.append(var)
        if python_scalar:
            self.python_scalars.add(source)
        return Tracer(self, var, frozenset({source}))

    def add_node(self, op: Op, inputs: tuple[Var, ...], aval: Aval, **params: Any) -> Var:
        out = self.new_var(aval)
        self.nodes.append(Node(op, inputs, out, make_params(**params)))
        return out

    def add_multi(self, op: Op, inputs: tuple[Var, ...], avals: list[Aval],
                  **params: Any) -> list[Var]:
        """A node with several outputs (loops)."""
        outs = [self.new_var(a) for a in avals]
        self.nodes.append(Node(op, inputs, outs[0], make_params(**params), tuple(outs[1:])))
        return outs

    def record_view(self, source: "Tracer", view: "Tracer") -> None:
        """``view`` shows the values of ``source`` (and so of the array ``source`` views)."""
        root = self.view_roots.get(source.ir_var.id, (source.ir_var.id, weakref.ref(source)))
        self.view_roots[view.ir_var.id] = root
        self.live_views.setdefault(root[0], []).append(weakref.ref(view))

    def lift(self, tracer: "Tracer") -> Var:
        """An input of this (inner) trace standing for a tracer of an enclosing trace."""
        var = self._lifted_ids.get(tracer.ir_var.id)
        if var is None:
            var = self.new_var(tracer.aval)
            self._lifted_ids[tracer.ir_var.id] = var
            self.lifted.append((var, tracer))
        return var

    def constant(self, value: np.ndarray, weak: bool = False, runtime: bool = False) -> Var:
        """A CONST var for a concrete array; the same array object maps to one var.
        ``runtime``: a value from shapes (``core.sizes``), read by kernels at run time."""
        cached = self._constants.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        aval = Aval(tuple(value.shape), value.dtype, weak)
        params = {"runtime": True} if runtime else {}
        var = self.add_node(Op.CONST, (), aval, value=Literal(np.asarray(value)), **params)
        self._constants[id(value)] = (value, var)
        return var

    def concrete(self, var: Var) -> np.ndarray | None:
        """The value of ``var`` when this trace knows its inputs' values (``known``), by
        evaluating the nodes it depends on once; None when a value it needs is abstract."""
        if self.known is None:
            return None
        producers = {v: n for n in self.nodes for v in n.outs}
        lifted = dict(self.lifted)
        values: dict[Var, np.ndarray] = {}
        stack = [var]
        while stack:
            v = stack[-1]
            if v in values:
                stack.pop()
                continue
            if v in self.known or v in lifted:
                source = self.known[v] if v in self.known else lifted[v]
                value = source.concrete_value() if isinstance(source, Tracer) else source
                if value is None:
                    return None
                values[v] = np.asarray(value)
                stack.pop()
                continue
            node = producers.get(v)
            if node is None:
                return None
            missing = [i for i in node.inputs if i not in values]
            if missing:
                stack.extend(missing)
                continue
            from .interpret import evaluate_node

            result = evaluate_node(node, [values[i] for i in node.inputs])
            values.update(zip(node.outs, result) if node.extra else [(node.out, result)])
            stack.pop()
        for v, value in values.items():   # later questions start from these
            if v not in lifted:
                self.known[v] = value
        return values[var]

    def finish(self, outputs: Iterable[Var]) -> Graph:
        """The traced graph; lifted outer values come after the explicit inputs."""
        self.active = False
        self.finished = True
        inputs = tuple(self.inputs) + tuple(v for v, _ in self.lifted)
        return Graph(inputs, tuple(self.nodes), tuple(outputs),
                     annotations=dict(self.annotations) if self.annotations else None)


_state = threading.local()


def current_trace() -> TraceContext | None:
    return getattr(_state, "trace", None)


class tracing:
    """Context manager making ``ctx`` the current trace of this thread. The trace is active
    while any of its blocks is open (a block may be re-entered, as ``vmap`` does, and nested:
    ``vmap`` inside ``jit`` enters the jit's trace again); once the last block closes or the
    trace is finished, its tracers count as leaked."""

    def __init__(self, ctx: TraceContext):
        self.ctx = ctx

    def __enter__(self) -> TraceContext:
        self.previous = current_trace()
        _state.trace = self.ctx
        self.ctx._entered += 1
        self.ctx.active = not self.ctx.finished
        return self.ctx

    def __exit__(self, *exc) -> None:
        _state.trace = self.previous
        self.ctx._entered -= 1
        if self.ctx._entered == 0:
            self.ctx.active = False


def describe(tracer: "Tracer") -> str:
    """The tracer for an error message, with the arguments it was computed from."""
    names = sorted(tracer.sources)
    if not names:
        return f"a traced value {tracer.aval}"
    args = ", ".join(repr(n) for n in names)
    plural = "s" if len(names) > 1 else ""
    return f"the traced value {tracer.aval} computed from argument{plural} {args}"


def _from_python_scalars(tracer: "Tracer") -> bool:
    """Whether every argument ``tracer`` comes from was a Python number: those may be
    static; arrays may not (they are unhashable)."""
    return bool(tracer.sources) and tracer.sources <= tracer.ctx.python_scalars


def static_hint(tracer: "Tracer") -> str:
    """``jit(f, static_argnames=(...))`` naming ``tracer``'s arguments, or '' when unknown."""
    names = sorted({n.split("[")[0].split(".")[0] for n in tracer.sources})
    if not names:
        return ""
    listed = ", ".join(repr(n) for n in names)
    return f"jit(f, static_argnames=({listed},))"


def _sequence_arguments(tracer: "Tracer") -> list[str]:
    """The arguments ``tracer`` comes from that are Python lists or tuples (its sources are
    their elements, ``'x[0]'``)."""
    names = set()
    for source in tracer.sources:
        head, bracket, rest = source.partition("[")
        if bracket and rest[:1].isdigit():
            names.add(head)
    return sorted(names)


def conversion_error(tracer: "Tracer", cls: type, what: str, alternatives: str) -> Exception:
    hint = static_hint(tracer)
    sequences = _sequence_arguments(tracer)
    if sequences:
        listed = ", ".join(repr(n) for n in sequences)
        example = sequences[0]
        return cls(
            f"{what} of {describe(tracer)}: argument {listed} is a Python list or tuple, and "
            f"jit traces each of its elements as a separate value ({example}[0], "
            f"{example}[1], ...), not as one array. Pass an array instead: "
            f"f(np.asarray({example})), or convert inside the function with "
            f"anp.asarray({example}).")
    if hint and _from_python_scalars(tracer):
        static = f"If the value is a configuration flag or size, mark it static: {hint}. "
    elif hint:
        static = ("An array argument cannot be static (arrays are unhashable): keep the "
                  "computation in arrays. ")
    else:
        static = ("If the value should be a Python constant, mark its argument static with "
                  "jit(f, static_argnames=(...)). ")
    return cls(
        f"{what} of {describe(tracer)}. Inside jit, array arguments are abstract: only their "
        f"shape and dtype are known while tracing, never their values. {static}{alternatives}"
    )


class Tracer:
    """An abstract array inside ``jit``. Supports NumPy's operators and array methods."""

    __slots__ = ("ctx", "ir_var", "sources", "__weakref__")
    __array_priority__ = 1000  # numpy_array <op> tracer defers to the tracer

    def __init__(self, ctx: TraceContext, var: Var, sources: frozenset[str]):
        self.ctx = ctx
        self.ir_var = var
        self.sources = sources

    # -- abstract value ---------------------------------------------------------------------
    @property
    def aval(self) -> Aval:
        return self.ir_var.aval

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(Size(d) for d in self.ir_var.aval.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.ir_var.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.ir_var.aval.shape)

    @property
    def size(self) -> int:
        return Size(self.ir_var.aval.size)

    def __repr__(self) -> str:
        return f"Tracer<{self.aval}>"

    @property
    def device(self) -> str:
        """The device this array lives on: the one the traced function compiles for."""
        return self.ctx.device

    def to_device(self, device: Any, /, *, stream: Any = None) -> "Tracer":
        """The array on ``device`` (the array API's method). Inside a traced function every
        array lives on the device it compiles for; move data between devices outside it
        (``arrjit.device_put``)."""
        if str(device) != self.ctx.device:
            raise ValueError(
                f"to_device({device!r}) inside a traced function that runs on "
                f"{self.ctx.device!r}: its arrays stay there. Call arrjit.device_put(x, "
                f"{str(device)!r}) on the result outside the function instead.")
        return self

    def concrete_value(self) -> np.ndarray | None:
        """This value, where the trace knows it (differentiation outside jit), else None."""
        return self.ctx.concrete(self.ir_var) if self.ctx.known is not None else None

    def __len__(self) -> int:
        if not self.shape:  # an array's length is static; a 0-d value has none
            raise conversion_error(
                self, errors.ConcretizationTypeError, "len() needs a length, and a 0-d value has "
                "none", "For a count held in an array use it as an array (anp.arange needs a "
                "static length).")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise conversion_error(
                self, errors.ConcretizationTypeError, "iteration (a shape, unpacking, a for "
                "loop) needs the value, and a 0-d value has no elements",
                "Shapes must be static: take them from an array's .shape or a static "
                "argument; for a loop with a traced trip count use lax.fori_loop.")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError(f"unhashable traced value {self.aval}: traced arrays cannot be dict keys "
                        f"or static arguments")

    # -- conversions that need a concrete value ----------------------------------------------
    def __bool__(self):
        value = self.concrete_value()
        if value is not None:
            return bool(value)
        raise conversion_error(
            self, errors.TracerBoolConversionError,
            "Python control flow (if/while/and/or/bool()) needs the truth value",
            "For a data-dependent choice between values use anp.where(cond, a, b); between "
            "computations use lax.cond(pred, true_fn, false_fn, *operands).")

    def __index__(self):
        value = self.concrete_value()
        if value is not None and value.ndim == 0 and value.dtype.kind in "iu":
            return int(value)
        raise conversion_error(
            self, errors.TracerIntegerConversionError,
            "int(), range() or indexing a Python sequence needs the integer value",
            "For loops with a traced trip count use lax.fori_loop; to pick from an array use "
            "array indexing (x[i]) or anp.take instead of a Python list.")

    __int__ = __index__

    def __float__(self):
        value = self.concrete_value()
        if value is not None:
            return float(value)
        raise conversion_error(
            self, errors.ConcretizationTypeError, "float() needs the value",
            "Keep the value as an array inside the jitted function, or return it and convert "
            "outside jit.")

    def __complex__(self):
        raise conversion_error(
            self, errors.ConcretizationTypeError, "complex() needs the value",
            "Keep the value as an array inside the jitted function.")

    def item(self):
        value = self.concrete_value()
        if value is not None:
            return value.item()
        raise conversion_error(
            self, errors.ConcretizationTypeError, ".item() needs the value",
            "Return the array from the jitted function and call .item() outside jit.")

    def tolist(self):
        raise conversion_error(
            self, errors.ConcretizationTypeError, ".tolist() needs the values",
            "Return the array from the jitted function and convert outside jit.")

    def __array__(self, dtype=None, copy=None):
        raise conversion_error(
            self, errors.TracerArrayConversionError,
            "numpy.asarray() / a NumPy function needs the concrete values",
            "Use the arrjit.numpy function of the same name (import arrjit.numpy as anp) so that "
            "the operation is traced and compiled.")



_Tracer = Tracer


def install_array_methods(namespace) -> None:
    """Give ``Tracer`` NumPy's operators and methods, implemented by the ``arrjit.numpy``
    namespace (passed in to keep this module free of an import cycle)."""
    ns = namespace
    Tracer: Any = _Tracer   # methods are added to the class at run time
    binary = {
        "add": ns.add, "sub": ns.subtract, "mul": ns.multiply, "truediv": ns.true_divide,
        "floordiv": ns.floor_divide, "mod": ns.remainder, "pow": ns.power,
        "and": ns.bitwise_and, "or": ns.bitwise_or, "xor": ns.bitwise_xor,
        "lshift": ns.left_shift, "rshift": ns.right_shift, "matmul": ns.matmul,
    }
    for name, fn in binary.items():
        setattr(Tracer, f"__{name}__", (lambda f: lambda a, b: f(a, b))(fn))
        setattr(Tracer, f"__r{name}__", (lambda f: lambda a, b: f(b, a))(fn))
    comparisons = {"eq": ns.equal, "ne": ns.not_equal, "lt": ns.less, "le": ns.less_equal,
                   "gt": ns.greater, "ge": ns.greater_equal}
    for name, fn in comparisons.items():
        setattr(Tracer, f"__{name}__", (lambda f: lambda a, b: f(a, b))(fn))
    Tracer.__neg__ = lambda a: ns.negative(a)
    Tracer.__pos__ = lambda a: ns.positive(a)
    Tracer.__abs__ = lambda a: ns.absolute(a)
    Tracer.__invert__ = lambda a: ns.invert(a)
    Tracer.__getitem__ = lambda a, index: ns._getitem(a, index)
    Tracer.__setitem__ = lambda a, index, value: ns._setitem(a, index, value)
    Tracer.__array_namespace__ = lambda a, *, api_version=None: ns
    Tracer.T = property(lambda a: ns.transpose(a))
    Tracer.mT = property(lambda a: ns.swapaxes(a, -1, -2))
    Tracer.reshape = lambda a, *shape, order="C": ns.reshape(
        a, shape[0] if len(shape) == 1 else shape, order=order)
    Tracer.transpose = lambda a, *axes: ns.transpose(
        a, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None)
    Tracer.astype = lambda a, dtype, copy=True: ns.astype(a, dtype)
    Tracer.squeeze = lambda a, axis=None: ns.squeeze(a, axis)
    Tracer.swapaxes = lambda a, a1, a2: ns.swapaxes(a, a1, a2)
    Tracer.ravel = lambda a, order="C": ns.ravel(a, order)
    Tracer.flatten = lambda a, order="C": ns.ravel(a, order)
    Tracer.clip = lambda a, min=None, max=None: ns.clip(a, min, max)
    Tracer.round = lambda a, decimals=0: ns.round(a, decimals)
    Tracer.dot = lambda a, b: ns.dot(a, b)
    Tracer.copy = lambda a: ns.array(a)
    Tracer.conj = Tracer.conjugate = lambda a: ns.conjugate(a)
    Tracer.real = property(lambda a: ns.real(a))
    Tracer.imag = property(lambda a: ns.imag(a))
    for name in ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax",
                 "argmin", "cumsum", "cumprod", "sort", "argsort", "repeat", "take", "nonzero"):
        fn = getattr(ns, name, None)
        if fn is not None:
            setattr(Tracer, name, (lambda f: lambda a, *args, **kw: f(a, *args, **kw))(fn))
    Tracer.at = property(ns._IndexUpdateHelper)
