"""``jit``: the user-facing wrapper, argument binding, signature keys and the hot call path.

>>> import arrjit, arrjit.numpy as anp
>>> @arrjit.jit(static_argnames=("flag",))
... def f(x, flag=False):
...     return -x if flag else x * 2
>>> f(anp.arange(3.0), flag=True)
array([-0., -1., -2.])
>>> f.cache_info().traces
1
"""
from __future__ import annotations

import functools
import inspect
import logging
import time
import weakref
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from . import compile as compiler
from . import errors, interpret
from .config import config
from .dtypes import Aval, check_supported
from .explain import explain_miss
from .fuse import partition as fuse_partition
from .ir import Graph, format_graph
from .plan import CompileStats, Plan, build_plan
from .simplify import simplify
from .trace import TraceContext, Tracer, current_trace, tracing
from .tree import TreeDef, flatten_with_paths, unflatten

logger = logging.getLogger("arrjit")

_KEY_FLAGS = 0x1 | 0x100 | 0x400  # C_CONTIGUOUS | ALIGNED | WRITEABLE: what numba types see
_C_CONTIGUOUS = 0x1
_PYTHON_SCALARS = (bool, int, float)


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    traces: int
    compiles: int
    disk_hits: int
    currsize: int


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


class _Default:
    """A default the caller did not supply: a Python constant of the function (as in JAX),
    keyed by value and never traced."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Default) and type(other.value) is type(self.value) and (
            other.value is self.value or other.value == self.value)

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))

    def __repr__(self) -> str:
        return f"default {self.value!r}"


def _unwrap(v: Any) -> Any:
    return v.value if isinstance(v, _Default) else v


@dataclass
class _Entry:
    plan: Plan | None
    graph: Graph
    out_tree: TreeDef
    convert: tuple[int, ...]   # leaves that must become C-contiguous arrays first
    single_output: bool = False
    run: Callable | None = None  # the plan's generated runner, for the fast hit path


_all_jitted: "weakref.WeakSet[Jitted]" = weakref.WeakSet()


def _leaf_key(x: Any) -> Any:
    if type(x) is np.ndarray:
        return (x.dtype, x.shape, x.flags.num & _KEY_FLAGS)
    if type(x) in _PYTHON_SCALARS:
        return type(x)
    if isinstance(x, np.generic):
        return (x.dtype, "scalar")
    if isinstance(x, Tracer):
        return ("tracer", x.aval)
    if isinstance(x, np.ndarray):  # subclasses: treated as plain arrays
        return (x.dtype, x.shape, x.flags.num & _KEY_FLAGS)
    return ("object", type(x))


def _leaf_aval(x: Any, name: str) -> Aval:
    if type(x) in _PYTHON_SCALARS:
        if type(x) is bool:
            return Aval((), np.dtype(bool))
        return Aval((), np.dtype(np.int64 if type(x) is int else np.float64), weak=True)
    if not isinstance(x, (np.ndarray, np.generic)):
        if hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
            x = np.asarray(x)
        else:
            raise TypeError(
                f"argument {name!r} of type {type(x).__name__} is not a valid jit argument: "
                f"pass arrays, Python scalars or tuples/lists/dicts of them, or mark it static "
                f"with static_argnames=({name.split('[')[0].split('.')[0]!r},)")
    return Aval(tuple(x.shape), check_supported(x.dtype, f"argument {name!r}"))


def _as_array(x: Any) -> np.ndarray:
    if type(x) is np.ndarray:
        return x if x.flags.c_contiguous else np.asarray(x, order="C")
    if type(x) is int:
        return np.asarray(x, dtype=np.int64)
    return np.asarray(x, order="C")  # (ascontiguousarray would turn 0-d into 1-d)


class Jitted:
    """A function compiled per signature. Create with :func:`jit`."""

    def __init__(self, fun: Callable, *, static_argnums=None, static_argnames=None,
                 donate_argnums=None, donate_argnames=None, device: str | None = None):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
        if device not in (None, "cpu"):
            raise ValueError(f"device={device!r} is not available: arrjit compiles for 'cpu'; "
                             f"see arrjit.devices()")
        try:
            self._signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        self.static_argnums, self.static_argnames = self._resolve(
            "static", static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = self._resolve(
            "donate", donate_argnums, donate_argnames)
        overlap = set(self.static_argnums) & set(self.donate_argnums)
        if overlap:
            raise ValueError(
                f"jit({self._name}): arguments {sorted(overlap)} are both static and donated; "
                f"a static argument is a Python value, not a buffer: remove it from "
                f"donate_argnums/donate_argnames")
        self._params = list(self._signature.parameters.values()) if self._signature else []
        self._positional = [p for p in self._params
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        simple = (self._signature is not None and all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in self._params))
        self._fast_arity = len(self._params) if simple else -1
        self._param_names = [p.name for p in self._params]
        self._static_positions = frozenset(
            k for k, p in enumerate(self._params) if p.name in self.static_argnames)
        self._donated_positions = frozenset(
            k for k, p in enumerate(self._params) if p.name in self.donate_argnames)
        self._cache: "OrderedDict[Any, _Entry]" = OrderedDict()
        self._history: list = []             # recent signature keys, for explanations
        self._changed: Counter = Counter()   # parameter -> how often it caused a re-trace
        self._warned_retrace = False
        self._hits = self._misses = self._traces = 0
        self._stats = CompileStats()
        self._fast_hit = _make_fast_hit(self) if (
            simple and not self._static_positions and 0 < self._fast_arity <= 16) else None
        _all_jitted.add(self)

    # -- decoration-time checks -----------------------------------------------------------------
    def _resolve(self, what: str, argnums, argnames) -> tuple[tuple[int, ...], tuple[str, ...]]:
        nums = _as_tuple(argnums, int, f"{what}_argnums")
        names = _as_tuple(argnames, str, f"{what}_argnames")
        if self._signature is None:
            return nums, names
        params = list(self._signature.parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        has_varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
        has_varkw = any(p.kind is p.VAR_KEYWORD for p in params)
        norm = []
        for n in nums:
            k = n + len(positional) if n < 0 else n
            if not 0 <= k < len(positional):
                if has_varargs and n >= 0:
                    raise ValueError(
                        f"jit({self._name}): {what}_argnums={n} points into *args; arrjit binds "
                        f"arguments by name, so name a parameter instead")
                raise ValueError(
                    f"jit({self._name}): {what}_argnums={n} is out of range: the function has "
                    f"{len(positional)} positional parameter(s) "
                    f"({', '.join(p.name for p in positional)})")
            norm.append(k)
        known = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        for name in names:
            if name not in known and not has_varkw:
                raise ValueError(
                    f"jit({self._name}): {what}_argnames contains {name!r}, which is not a "
                    f"parameter; parameters are {', '.join(sorted(known)) or 'none'}")
        all_names = set(names) | {positional[k].name for k in norm}
        all_nums = set(norm) | {k for k, p in enumerate(positional) if p.name in names}
        return tuple(sorted(all_nums)), tuple(sorted(all_names))

    # -- the call path --------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._fast_hit is not None and not kwargs and len(args) == self._fast_arity:
            out = self._fast_hit(args)
            if out is not _NOT_FAST:
                return out
        if current_trace() is not None:
            return self._fun(*args, **kwargs)  # jit inside jit: trace through
        values = args if (not kwargs and len(args) == self._fast_arity) else self._bind(args,
                                                                                          kwargs)
        key, leaves = self._key(values)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._miss(key, values, leaves)
            if config.log_compiles:
                return self._logged_first_run(entry, leaves)
        else:
            self._hits += 1
            self._cache.move_to_end(key)
        if entry.convert:
            leaves = [_as_array(x) for x in leaves]
        if entry.plan is None:
            outs = interpret.evaluate(entry.graph, leaves)
        else:
            outs = entry.plan.run(leaves)
            if entry.run is None and not entry.convert:
                entry.run = entry.plan.fast_run
        if entry.single_output:
            return outs[0]
        return unflatten(entry.out_tree, outs)

    def _logged_first_run(self, entry: _Entry, leaves: list):
        stats = self._stats
        before = (stats.compile_seconds, stats.load_seconds, stats.compiles, stats.disk_hits)
        if entry.convert:
            leaves = [_as_array(x) for x in leaves]
        outs = (interpret.evaluate(entry.graph, leaves) if entry.plan is None
                else entry.plan.run(leaves))
        t = getattr(self, "_last_times", {})
        logger.warning(
            "arrjit: %s: trace %.1f ms, fuse %.1f ms, codegen %.1f ms, compile %.1f ms "
            "(%d new), disk load %.1f ms (%d hits), %d kernel(s)", self._name,
            1e3 * t.get("trace", 0), 1e3 * t.get("fuse", 0), 1e3 * t.get("codegen", 0),
            1e3 * (stats.compile_seconds - before[0]), stats.compiles - before[2],
            1e3 * (stats.load_seconds - before[1]), stats.disk_hits - before[3],
            len(entry.plan.kernels) if entry.plan else 0)
        return outs[0] if entry.single_output else unflatten(entry.out_tree, outs)

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        """Values for every parameter in order (defaults applied); *args and **kwargs params
        hold a tuple and a dict."""
        if self._signature is None:
            if kwargs:
                raise TypeError(f"{self._name} has no inspectable signature: pass positional "
                                f"arguments only")
            return args
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"{self._name}(): {err}") from None
        supplied = set(bound.arguments)
        bound.apply_defaults()
        values = []
        for k, p in enumerate(self._params):
            v = bound.arguments.get(p.name, _Missing())
            if (p.name not in supplied and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                    and k not in self._static_positions and _hashable(v)):
                v = _Default(v)
            values.append(v)
        return tuple(values)

    def _key(self, values: Sequence) -> tuple[tuple, list]:
        parts: list = []
        leaves: list = []
        static = self._static_positions
        for k, v in enumerate(values):
            if k in static:
                try:
                    hash(v)
                except TypeError:
                    raise self._unhashable(k, v) from None
                parts.append((type(v), v))
            elif type(v) is np.ndarray:
                parts.append((v.dtype, v.shape, v.flags.num & _KEY_FLAGS))
                leaves.append(v)
            elif type(v) is _Default:
                parts.append(v)
            else:
                l, _, tree = flatten_with_paths(v)
                parts.append((tree, tuple(_leaf_key(x) for x in l)))
                leaves.extend(l)
        return tuple(parts), leaves

    def _unhashable(self, k: int, v: Any) -> errors.NonHashableStaticArgError:
        name = self._param_names[k] if k < len(self._param_names) else str(k)
        return errors.NonHashableStaticArgError(
            f"static argument {name!r} of {self._name} has unhashable type "
            f"{type(v).__name__} ({v!r:.60}); static arguments key the compile cache, so they "
            f"must be hashable. Pass a tuple instead of a list (or a frozen dataclass), or make "
            f"the argument non-static if it holds arrays.")

    # -- the miss path ----------------------------------------------------------------------------
    def _leaf_names(self, values: Sequence) -> tuple[list[str], list[int]]:
        """Names of the dynamic leaves (``x``, ``params['w']``) and which are donated."""
        names: list[str] = []
        donated: list[int] = []
        for k, v in enumerate(values):
            if k in self._static_positions or type(v) is _Default:
                continue
            base = self._param_names[k] if k < len(self._param_names) else f"arg{k}"
            _, paths, _ = flatten_with_paths(v)
            for p in paths:
                if k in self._donated_positions:
                    donated.append(len(names))
                names.append(base + p)
        return names, donated

    def _trace(self, values: Sequence, leaves: list) -> tuple[Graph, TreeDef, list[str],
                                                                list[int]]:
        names, donated = self._leaf_names(values)
        ctx = TraceContext(self._name)
        tracers = [ctx.new_input(_leaf_aval(x, n), n) for x, n in zip(leaves, names)]
        it = iter(tracers)
        traced_values = []
        for k, v in enumerate(values):
            if k in self._static_positions or type(v) is _Default:
                traced_values.append(_unwrap(v))
            else:
                l, _, tree = flatten_with_paths(v)
                traced_values.append(unflatten(tree, [next(it) for _ in l]))
        args, kwargs = self._rebuild_call(traced_values)
        with tracing(ctx):
            result = self._fun(*args, **kwargs)
            out_leaves, out_paths, out_tree = flatten_with_paths(result)
            out_vars = []
            for leaf, path in zip(out_leaves, out_paths):
                out_vars.append(self._output_var(ctx, leaf, path))
        self._traces += 1
        return ctx.finish(out_vars), out_tree, names, donated

    def _output_var(self, ctx: TraceContext, leaf: Any, path: str):
        if isinstance(leaf, Tracer):
            if leaf.ctx is not ctx:
                raise errors.UnexpectedTracerError(
                    f"{self._name} returned a traced value {leaf.aval} (at output{path}) that "
                    f"belongs to another trace; it leaked from an earlier or enclosing trace")
            return leaf.ir_var
        if isinstance(leaf, (bool, int, float, np.ndarray, np.generic)):
            arr = np.asarray(leaf)
            check_supported(arr.dtype, f"output{path}")
            return ctx.constant(arr)
        raise TypeError(
            f"{self._name} returned output{path} of type {type(leaf).__name__}; jitted "
            f"functions return arrays, scalars, or tuples/lists/dicts of them")

    def _rebuild_call(self, values: Sequence) -> tuple[list, dict]:
        if self._signature is None:
            return list(values), {}
        args: list = []
        kwargs: dict = {}
        for p, v in zip(self._params, values):
            v = _unwrap(v)
            if isinstance(v, _Missing):
                continue
            if p.kind is p.VAR_POSITIONAL:
                args.extend(v)
            elif p.kind is p.VAR_KEYWORD:
                kwargs.update(v)
            elif p.kind is p.KEYWORD_ONLY:
                kwargs[p.name] = v
            else:
                args.append(v)
        return args, kwargs

    def _build(self, values: Sequence, leaves: list) -> _Entry:
        t0 = time.perf_counter()
        graph, out_tree, names, donated = self._trace(values, leaves)
        t1 = time.perf_counter()
        convert = tuple(i for i, x in enumerate(leaves)
                        if not (type(x) is np.ndarray and x.flags.c_contiguous))
        single = out_tree.kind is None
        if config.disable_jit:
            return _Entry(None, graph, out_tree, convert, single)
        simple = simplify(graph)
        part = fuse_partition(simple)
        t2 = time.perf_counter()
        donate = [i for i in donated if i not in convert]
        plan = build_plan(simple, part, donate=donate, arg_names=names, stats=self._stats)
        t3 = time.perf_counter()
        self._last_times = {"trace": t1 - t0, "fuse": t2 - t1, "codegen": t3 - t2}
        return _Entry(plan, simple, out_tree, convert, single)

    def _miss(self, key, values: Sequence, leaves: list) -> _Entry:
        self._misses += 1
        explain_miss(self, key)
        entry = self._build(values, leaves)
        self._history.append(key)
        del self._history[:-64]
        self._cache[key] = entry
        while len(self._cache) > max(1, config.max_signatures_per_function):
            self._cache.popitem(last=False)
        return entry

    # -- introspection ------------------------------------------------------------------------
    def lower(self, *args, **kwargs) -> "Lowered":
        """Trace and plan for these arguments without running: ``.as_text()``, ``.compile()``."""
        values = self._bind(args, kwargs)
        key, leaves = self._key(values)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._miss(key, values, leaves)
        return Lowered(self, entry)

    def cache_info(self) -> CacheInfo:
        """Counts for this function: calls served from the memory cache (hits), signatures
        traced (misses, traces), numba compilations (compiles) and disk-cache loads."""
        return CacheInfo(self._hits, self._misses, self._traces, self._stats.compiles,
                         self._stats.disk_hits,
                         len(self._cache))

    def clear_cache(self) -> None:
        """Forget every traced signature of this function (compiled code stays loaded)."""
        self._cache.clear()

    def __repr__(self) -> str:
        return f"<arrjit.jit {self._name}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


class Lowered:
    """A traced and planned call signature."""

    def __init__(self, jitted: Jitted, entry: _Entry):
        self._jitted = jitted
        self._entry = entry

    @property
    def graph(self) -> Graph:
        return self._entry.graph

    @property
    def kernels(self) -> list:
        """The fused loop nests (``len(lowered.kernels)`` is the kernel count)."""
        return [] if self._entry.plan is None else list(self._entry.plan.kernels)

    def as_text(self) -> str:
        parts = [format_graph(self._entry.graph)]
        if self._entry.plan is not None:
            parts.append(f"# {len(self.kernels)} kernel(s)")
            parts.extend(self._entry.plan.sources)
        return "\n\n".join(parts)

    def compile(self) -> "Compiled":
        return Compiled(self._jitted, self._entry)


class Compiled:
    """An ahead-of-time compiled call signature; call it with arguments of that signature."""

    def __init__(self, jitted: Jitted, entry: _Entry):
        self._jitted = jitted
        self._entry = entry

    def __call__(self, *args, **kwargs):
        values = self._jitted._bind(args, kwargs)
        key, leaves = self._jitted._key(values)
        if self._jitted._cache.get(key) is not self._entry:
            raise TypeError(f"this compiled {self._jitted._name} was lowered for other argument "
                            f"shapes/dtypes/static values; call the jitted function instead")
        return self._jitted(*args, **kwargs)


_NOT_FAST = object()


def _make_fast_hit(jitted: "Jitted") -> Callable:
    """The hot path for a call whose arguments are all ndarrays and whose entry is cached
    with a generated runner: key, look up, run, in one function without loops. Anything
    else returns ``_NOT_FAST`` (the general path handles it)."""
    n = jitted._fast_arity
    names = [f"a{k}" for k in range(n)]
    checks = " and ".join(f"type({a}) is ndarray" for a in names)
    key = ", ".join(f"({a}.dtype, {a}.shape, {a}.flags.num & {_KEY_FLAGS})" for a in names)
    source = "\n".join([
        "def fast_hit(args):",
        f"    {', '.join(names)}, = args",
        f"    if {checks}:",
        f"        key = ({key},)",
        "        entry = get(key)",
        "        if entry is not None and entry.run is not None:",
        "            jitted._hits += 1",
        "            move_to_end(key)",
        "            outs = entry.run(args)",
        "            return outs[0] if entry.single_output else unflatten(entry.out_tree, outs)",
        "    return NOT_FAST",
    ])
    namespace = {"ndarray": np.ndarray, "get": jitted._cache.get, "jitted": jitted,
                 "move_to_end": jitted._cache.move_to_end,
                 "unflatten": unflatten, "NOT_FAST": _NOT_FAST}
    exec(compile(source, f"<arrjit fast path of {jitted._name}>", "exec"), namespace)
    return namespace["fast_hit"]


def jit(fun: Callable | None = None, *, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, device: str | None = None):
    """Compile ``fun`` per call signature into fused native loops.

    Works as ``jit(f)``, ``@jit`` and ``@jit(...)``. Static arguments (by position or name;
    each is inferred from the other) are Python values keyed by type and value; donated
    arguments may have their buffers reused for outputs.

    >>> import arrjit, arrjit.numpy as anp
    >>> add_one = arrjit.jit(lambda x: x + 1)
    >>> add_one(anp.array([1.0, 2.0]))
    array([2., 3.])
    """
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, donate_argnames=donate_argnames, device=device)
    if fun is None:
        return lambda f: Jitted(f, **options)
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
    return Jitted(fun, **options)


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return not isinstance(v, (np.ndarray, Tracer))


def _as_tuple(value, kind: type, what: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, kind):
        return (value,)
    items = tuple(value)
    for item in items:
        if not isinstance(item, kind) or isinstance(item, bool):
            raise TypeError(f"{what} must be a {kind.__name__} or a sequence of them, got "
                            f"{item!r}")
    return items


def make_graph(fun: Callable, *, static_argnums=None, static_argnames=None) -> Callable:
    """Like ``jax.make_jaxpr``: ``make_graph(f)(*args)`` returns the traced Graph (printable).

    >>> import arrjit, arrjit.numpy as anp
    >>> print(arrjit.make_graph(lambda x: anp.exp(x) + 1)(anp.zeros(3)))
    graph(a: float64[3]) {
      b: float64[] = const 1.0
      c: float64[3] = broadcast[shape=(3,)] b
      d: float64[3] = exp a
      e: float64[3] = add d c
      return e
    }
    """
    jitted = Jitted(fun, static_argnums=static_argnums, static_argnames=static_argnames)

    def traced(*args, **kwargs):
        values = jitted._bind(args, kwargs)
        _, leaves = jitted._key(values)
        graph, _, _, _ = jitted._trace(values, leaves)
        return graph

    return traced


def clear_caches() -> None:
    """Forget every jitted function's traced signatures and the compiled modules."""
    for j in list(_all_jitted):
        j.clear_cache()
    compiler.clear()
