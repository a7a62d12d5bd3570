"""``jit``: the user-facing wrapper, the pipeline that builds a signature's executable, and
the hot call path. Argument binding and keys are in ``signature``.

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
import logging
import sys
import time
import weakref
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from . import errors
from .backends import Backend, Executable, get_backend
from .config import config
from .core import interpret
from .core.dtypes import check_supported
from .core.ir import Graph
from .core.trace import TraceContext, Tracer, current_trace, tracing
from .core.tree import TreeDef, flatten_with_paths, unflatten
from .explain import explain_miss
from .passes.lower import lower
from .plan import Plan, build_plan
from .runtime import compile as compiler, pool as buffers
from .runtime.compile import CompileStats
from . import hotpath, tiers
from .stages import Lowered
from .signature import (PYTHON_SCALARS, ArgumentBinding, Default, as_array, leaf_aval,
                        unwrap)

logger = logging.getLogger("arrjit")


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    traces: int
    compiles: int
    disk_hits: int
    currsize: int
    interpreted: int = 0     # calls the reference interpreter answered (compile="background")
    kernels: int = 0         # kernels of the programs built for this function
    kernels_compiled: int = 0   # of them, compiled here (not loaded, not an identical one)


@dataclass
class _Entry:
    plan: Plan | None                 # None: run by the reference interpreter
    executable: Executable | None
    graph: Graph
    out_tree: TreeDef
    convert: tuple[int, ...]   # leaves that must become C-contiguous arrays first
    single_output: bool = False
    run: Callable | None = None  # the executable's generated runner, for the fast hit path
    pending: tiers.BackgroundCompile | None = None   # compile="background"
    rendered: Executable | None = None   # the backend's executable, compiled or not yet
    fast_path: bool = False    # the hot path may call ``run`` (see ``hotpath``)

    @property
    def uncompiled(self) -> bool:
        """Rendered (by ``lower()``) and not compiled, nor compiling in the background."""
        return self.rendered is not None and self.executable is None and self.pending is None


_all_jitted: "weakref.WeakSet[Jitted]" = weakref.WeakSet()


# The most ways of passing keywords (positional count and keyword names) a jitted function
# keeps a generated hot path for; other calls with keywords take the general path.
MAX_KEYWORD_HITS = 8


class Jitted(ArgumentBinding):
    """A function compiled per signature. Create with :func:`jit`."""

    def __init__(self, fun: Callable, *, static_argnums=None, static_argnames=None,
                 donate_argnums=None, donate_argnames=None, device: str | None = None,
                 compile: str | None = None):
        functools.update_wrapper(self, fun)
        self._compile_mode = tiers.check_mode(compile or config.compile)
        self._interpreted = 0
        self._fun = fun
        self._name = getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
        self._backend: Backend = get_backend(device or config.default_device)
        self._bind_signature(fun, static_argnums, static_argnames, donate_argnums,
                             donate_argnames)
        self._cache: "OrderedDict[Any, _Entry]" = OrderedDict()
        self._history: list = []             # recent signature keys, for explanations
        self._changed: Counter = Counter()   # parameter -> how often it caused a re-trace
        self._warned_retrace = False
        self._hits = self._misses = self._traces = 0
        self._stats = CompileStats()
        self._fast_memo: list = [None]       # the hot path's last (key, entry)
        # the hot path serves calls of ``_fast_count`` positional arguments: a signature's
        # positional parameters, else the count of the first call without keywords
        self._fast_count = self._fast_arity
        self._fast_hit = hotpath.make_fast_hit(self, self._fast_count)
        # and per (positional count, keyword names) of calls with keywords, made on the first
        self._keyword_hits: dict[tuple, Callable | None] = {}
        _all_jitted.add(self)

    # -- the call path --------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not kwargs:
            if self._fast_hit is not None and len(args) == self._fast_count:
                out = self._fast_hit(args)
                if out is not hotpath.NOT_FAST:
                    return out
        else:
            keyword_hit = self._keyword_hits.get((len(args), *kwargs))
            if keyword_hit is not None:
                out = keyword_hit(args + tuple(kwargs.values()))
                if out is not hotpath.NOT_FAST:
                    return out
        if current_trace() is not None:
            return self._fun(*args, **kwargs)  # jit inside jit: trace through
        if not kwargs and self._fast_count < 0:
            self._fast_count = len(args)
            self._fast_hit = hotpath.make_fast_hit(self, self._fast_count)
        elif kwargs and len(self._keyword_hits) < MAX_KEYWORD_HITS:
            call = (len(args), *kwargs)
            if call not in self._keyword_hits:
                self._keyword_hits[call] = hotpath.make_fast_hit(self, len(args), tuple(kwargs))
        values = args if (not kwargs and len(args) == self._fast_arity) else self._bind(args,
                                                                                          kwargs)
        key, leaves = self._key(values)
        self._forget_fast_hit()
        entry = self._cache.get(key)
        if entry is None:
            for claims, handler in _collection_handlers:
                if any(claims(x) for x in leaves):
                    return handler(self, values, leaves)
            stats = self._stats
            before = (stats.compile_seconds, stats.load_seconds, stats.compiles, stats.disk_hits)
            entry = self._miss(key, values, leaves)
            if config.log_compiles:
                return self._logged_first_run(entry, leaves, before)
        else:
            self._hits += 1
            self._cache.move_to_end(key)
            if entry.uncompiled:               # lowered, not compiled yet
                self._compile(entry, self._background)
        if entry.pending is not None:
            self._adopt(entry, wait=False)
        if entry.executable is None:
            outs = self._interpret(entry, leaves)
        else:
            if entry.convert:
                to_device = self._backend.to_device
                leaves = [to_device(x) for x in leaves]
            outs = entry.executable.run(leaves)
        if entry.single_output:
            return outs[0]
        return unflatten(entry.out_tree, outs)

    def _interpret(self, entry: _Entry, leaves: list) -> list:
        """The reference interpreter's answer (``disable_jit``, or while compiling)."""
        arrays = [as_array(x) for x in leaves]
        if entry.plan is None:
            return interpret.evaluate(entry.graph, arrays)
        self._interpreted += 1
        try:
            return tiers.interpret_plan(entry.plan, entry.graph, arrays)
        finally:
            if entry.pending is not None:   # the queuing call is answered: compile now
                entry.pending.start()

    def _adopt(self, entry: _Entry, wait: bool) -> None:
        """Switch ``entry`` to its compiled executable once the background compile is done
        (``wait``: block until it is). A compile that failed raises here, and the signature
        is dropped so that the next call compiles again, as in eager mode."""
        compiling = entry.pending
        if compiling is None or not (wait or compiling.done()):
            return
        entry.pending = None
        try:
            executable = compiling.result()
        except BaseException:
            for key, cached in list(self._cache.items()):
                if cached is entry:
                    del self._cache[key]
            self._forget_fast_hit()
            raise
        entry.executable = executable
        entry.run = executable.fast_run if entry.fast_path else None

    def block_until_compiled(self) -> "Jitted":
        """Wait until every signature seen so far runs compiled code (``compile="background"``;
        a no-op otherwise). Returns the function, so ``f.block_until_compiled()(x)`` works."""
        for entry in list(self._cache.values()):
            if entry.uncompiled:
                self._compile(entry, background=False)
            self._adopt(entry, wait=True)
        return self

    @property
    def _background(self) -> bool:
        return tiers.resolve(self._compile_mode) == "background"

    def _logged_first_run(self, entry: _Entry, leaves: list, before: tuple):
        stats = self._stats
        if entry.executable is None:
            outs = self._interpret(entry, leaves)
        else:
            if entry.convert:
                leaves = [self._backend.to_device(x) for x in leaves]
            outs = entry.executable.run(leaves)
        t = getattr(self, "_last_times", {})
        logger.warning(
            "arrjit: %s: trace %.1f ms, fuse %.1f ms, codegen %.1f ms, compile %.1f ms "
            "(%d new), disk load %.1f ms (%d hits), %d kernel(s)%s%s", self._name,
            1e3 * t.get("trace", 0), 1e3 * t.get("fuse", 0), 1e3 * t.get("codegen", 0),
            1e3 * (stats.compile_seconds - before[0]), stats.compiles - before[2],
            1e3 * (stats.load_seconds - before[1]), stats.disk_hits - before[3],
            len(entry.plan.kernels) if entry.plan else 0,
            "".join(f"; loop {k} runs {report}" for k, report in enumerate(
                entry.executable.loops if entry.executable is not None else [])),
            "; ran by the interpreter while compiling in the background"
            if entry.pending is not None else "")
        return outs[0] if entry.single_output else unflatten(entry.out_tree, outs)

    # -- the miss path ----------------------------------------------------------------------------
    def _trace(self, values: Sequence, leaves: list) -> tuple[Graph, TreeDef, list[str],
                                                                list[int]]:
        names, donated = self._leaf_names(values)
        ctx = TraceContext(self._name)
        ctx.device = self._backend.name
        tracers = [ctx.new_input(leaf_aval(x, n), n,
                                 type(x) in PYTHON_SCALARS or isinstance(x, np.generic))
                   for x, n in zip(leaves, names)]
        it = iter(tracers)
        traced_values = []
        for k, v in enumerate(values):
            if k in self._static_positions or type(v) is Default:
                traced_values.append(unwrap(v))
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
        if isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic)):
            arr = np.asarray(leaf)
            check_supported(arr.dtype, f"output{path}")
            return ctx.constant(arr)
        raise TypeError(
            f"{self._name} returned output{path} of type {type(leaf).__name__}; jitted "
            f"functions return arrays, scalars, or tuples/lists/dicts of them")

    def _build(self, values: Sequence, leaves: list) -> _Entry:
        """The pipeline for one signature up to compiling: trace, lower (simplify, fuse),
        plan, and render the plan for the backend (``_compile`` compiles it)."""
        t0 = time.perf_counter()
        graph, out_tree, names, donated = self._trace(values, leaves)
        t1 = time.perf_counter()
        convert = tuple(i for i, x in enumerate(leaves) if self._backend.converts(x))
        single = out_tree.kind is None
        if config.disable_jit:
            return _Entry(None, None, graph, out_tree, convert, single)
        lowered = lower(graph, positions=self._backend.reads_positions)
        t2 = time.perf_counter()
        donate = [i for i in donated if i not in convert]
        plan = build_plan(lowered, donate=donate, arg_names=names)
        prepared = self._backend.prepare(plan)
        t3 = time.perf_counter()
        self._last_times = {"trace": t1 - t0, "fuse": t2 - t1, "codegen": t3 - t2}
        fast_path = hotpath.takes_fast_path(leaves, convert, self._backend.name == "cpu")
        return _Entry(plan, None, lowered.graph, out_tree, convert, single,
                      rendered=prepared, fast_path=fast_path)

    def _compile(self, entry: _Entry, background: bool) -> None:
        """Compile ``entry``'s rendered executable: on the background compile thread
        (``background``, CPU; the interpreter answers calls meanwhile), else now."""
        executable = entry.rendered
        assert executable is not None
        stats = self._stats
        if background and self._backend.name == "cpu":
            def compile_plan() -> Executable:
                executable.compile(stats)
                return executable
            entry.pending = tiers.BackgroundCompile(compile_plan)
            return
        before = stats.compile_seconds + stats.load_seconds
        t0 = time.perf_counter()
        executable.compile(stats)
        native = stats.compile_seconds + stats.load_seconds - before
        self._last_times["codegen"] = (self._last_times.get("codegen", 0.0) +
                                       max(0.0, time.perf_counter() - t0 - native))
        entry.executable = executable
        entry.run = executable.fast_run if entry.fast_path else None

    def _miss(self, key, values: Sequence, leaves: list) -> _Entry:
        self._misses += 1
        explain_miss(self, key)
        entry = self._build(values, leaves)
        if entry.uncompiled:
            self._compile(entry, self._background)
        self._remember(key, entry)
        return entry

    def _remember(self, key, entry: _Entry) -> None:
        self._history.append(key)
        del self._history[:-64]
        self._cache[key] = entry
        while len(self._cache) > max(1, config.max_signatures_per_function):
            self._cache.popitem(last=False)
        self._forget_fast_hit()

    def _forget_fast_hit(self) -> None:
        """Empty the hot path's memo: the cache or its order changed elsewhere."""
        self._fast_memo[0] = None

    # -- introspection ------------------------------------------------------------------------
    def lower(self, *args, **kwargs) -> "Lowered":
        """Trace, plan and render for these arguments, without compiling or running (as
        ``jax.jit(f).lower``): ``.as_text()``, ``.kernels``, ``.loops``; ``.compile()``
        compiles. A signature lowered first compiles on its first call."""
        values = self._bind(args, kwargs)
        key, leaves = self._key(values)
        for claims, _ in _collection_handlers:
            if any(claims(x) for x in leaves):
                raise TypeError(
                    f"{self._name}.lower() takes NumPy arrays; a call with dask arrays or "
                    f"other chunked collections as arguments is planned over their chunks, one compiled program per "
                    f"block. To see a block's program, lower with a NumPy array of the "
                    f"block's shape, e.g. f.lower(x.blocks[0].compute())")
        entry = self._cache.get(key)
        if entry is None:               # traced, lowered and planned; compiled when called
            self._misses += 1
            explain_miss(self, key)
            entry = self._build(values, leaves)
            self._remember(key, entry)
        if entry.pending is not None:   # no call to answer first
            entry.pending.start()
        return Lowered(self, entry)

    def cache_info(self) -> CacheInfo:
        """Counts for this function: calls served from the memory cache (hits), signatures
        traced (misses, traces), numba compilations (compiles), disk-cache loads, entries
        (currsize), calls the interpreter answered while compiling (interpreted), and the
        kernels of the programs built (kernels), of which ``kernels_compiled`` were compiled
        rather than loaded from the disk cache or shared with an identical kernel.

        >>> import numpy as np, arrjit, arrjit.numpy as anp
        >>> g = arrjit.jit(lambda x: anp.sort(anp.sort(x * 3.0 + 1.0) * 3.0 + 1.0))
        >>> _ = g(np.arange(4.0))    # two identical kernels, one compile (or disk load)
        >>> g.cache_info().kernels, g.cache_info().kernels_compiled <= 1
        (2, True)
        """
        stats = self._stats
        return CacheInfo(self._hits, self._misses, self._traces, stats.compiles,
                         stats.disk_hits, len(self._cache), self._interpreted, stats.kernels,
                         stats.kernels_compiled)

    def clear_cache(self) -> None:
        """Forget every traced signature of this function (compiled code stays loaded)."""
        self._cache.clear()
        self._forget_fast_hit()

    def __repr__(self) -> str:
        return f"<arrjit.jit {self._name}>"

    def __reduce__(self):
        """Pickled by reference: the function (by name where importable, else by value under
        cloudpickle, as dask ships it) and the jit options; the copy compiles, or loads from
        the disk cache, on first use."""
        module = getattr(self._fun, "__module__", None)
        qualname = getattr(self._fun, "__qualname__", "")
        target: Any = sys.modules.get(module or "")
        for part in qualname.split("."):
            target = getattr(target, part, None)
        if target is self:                 # ``@jit`` at module level: the module's name
            return qualname
        options = dict(static_argnums=self.static_argnums or None,
                       static_argnames=self.static_argnames or None,
                       donate_argnums=self.donate_argnums or None,
                       donate_argnames=self.donate_argnames or None,
                       device=self._backend.name, compile=self._compile_mode)
        return (_rebuild_jitted, (self._fun, options))

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


def _rebuild_jitted(fun: Callable, options: dict) -> "Jitted":
    return Jitted(fun, **options)


# (claims a leaf, runs the call) pairs: a package of array collections (arrjit.dask) registers
# itself, so a call whose arguments are such collections plans over them instead of tracing.
_collection_handlers: list[tuple[Callable[[Any], bool], Callable]] = []


def register_collection(claims: Callable[[Any], bool], handler: Callable) -> None:
    _collection_handlers.append((claims, handler))


def jit(fun: Callable | None = None, *, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, device: str | None = None,
        compile: str | None = None):
    """Compile ``fun`` per call signature into fused native loops.

    Works as ``jit(f)``, ``@jit`` and ``@jit(...)``. Static arguments (by position or name;
    each is inferred from the other) are Python values keyed by type and value; donated
    arguments may have their buffers reused for outputs. ``compile="background"`` (or
    ``ARRJIT_COMPILE=background``): a new signature's calls run the NumPy reference
    interpreter while a background thread compiles, then switch to the compiled code
    (CPU; ``device="cuda"`` compiles on the first call). The default, ``"auto"``, is
    background in an interactive session and ``"eager"`` (compile on the first call)
    elsewhere.

    >>> import arrjit, arrjit.numpy as anp
    >>> add_one = arrjit.jit(lambda x: x + 1)
    >>> add_one(anp.array([1.0, 2.0]))
    array([2., 3.])
    >>> tiered = arrjit.jit(lambda x: x * 2, compile="background")
    >>> tiered(anp.array([1.0, 2.0]))                # at once, by the interpreter
    array([2., 4.])
    >>> tiered.block_until_compiled()(anp.array([1.0, 2.0]))   # compiled from here on
    array([2., 4.])
    """
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, donate_argnames=donate_argnames, device=device,
                   compile=compile)
    if fun is None:
        return lambda f: Jitted(f, **options)
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
    return Jitted(fun, **options)


def make_graph(fun: Callable, *, static_argnums=None, static_argnames=None) -> Callable:
    """Like ``jax.make_jaxpr``: ``make_graph(f)(*args)`` returns the traced Graph (printable).

    >>> import arrjit, arrjit.numpy as anp
    >>> print(arrjit.make_graph(lambda x: anp.exp(x) + 1)(anp.zeros(3)))
    graph(a: float64[3]) {
      b: float64[3] = exp a
      c: float64[] = const 1.0
      d: float64[3] = broadcast [shape=(3,)] c
      e: float64[3] = add b d
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
    """Forget every jitted function's traced signatures and the compiled modules, and free
    the buffers kept for reuse."""
    for j in list(_all_jitted):
        j.clear_cache()
    compiler.clear()
    buffers.pool().clear()
