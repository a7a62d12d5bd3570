"""CPU code generation: a fused ``Kernel`` becomes a shape-generic numba loop nest.

The source depends on structure only: rank, dtypes, the pattern of zero / unit / other index
coefficients. Sizes, offsets and strides are read at run time from an int64 parameter vector
``P``, so a call with new sizes of the same structure reuses the compiled machine code.

Every kernel has the signature ``kernel(writes..., reads..., P, start, stop)`` and runs the
outermost loop over ``range(start, stop)``, so the plan can split it across threads.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ..fuse import Affine, Compute, Const, Kernel, Load, Reduce
from ..ir import Op

# Elementwise kernels compile without fast-math: +, -, *, / then round exactly as NumPy's loops
# do (no FMA contraction, no reassociation), and they vectorise without it.
NJIT_OPTIONS = 'nogil=True, error_model="numpy", cache=CACHE'
# Reduction kernels may reassociate (never nnan/ninf): the accumulation vectorises, and the sum
# order already differs from NumPy's pairwise summation (results agree within rounding).
REDUCTION_OPTIONS = NJIT_OPTIONS + ', fastmath={"reassoc"}'
CODEGEN_VERSION = "cpu-11"


def _type_name(dtype: np.dtype) -> str:
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def _literal(value, dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return repr(bool(value))
    if dtype.kind == "f":
        v = float(value)
        if v != v:
            text = "np.nan"
        elif v in (float("inf"), float("-inf")):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(v)
        return f"{_type_name(dtype)}({text})"
    return f"{_type_name(dtype)}({int(value)})"


# -- per-op expressions -------------------------------------------------------------------------
# Each entry: (argument names, argument dtypes) -> expression text. Operands already have the
# op's loop dtype (fusion inserted the casts); the result is cast to the node's dtype after.
Expr = Callable[[tuple[str, ...], tuple[np.dtype, ...]], str]


def _by_kind(float_: str, int_: str, uint: str | None = None, bool_: str | None = None) -> Expr:
    def render(args, dts):
        kind = dts[0].kind
        template = {"f": float_, "i": int_, "u": uint or int_, "b": bool_ or int_}[kind]
        names = dict(zip("ab", args))
        names["Z"] = _literal(0, dts[0])
        names["bits"] = dts[0].itemsize * 8
        return template.format(**names)
    return render


def _math(name: str, libm: str, integer: Expr | None = None) -> Expr:
    """A float function of ``mathlib`` (vectorisable) by width; for other kinds ``integer``
    or the C library's ``libm``."""
    suffix = {4: "32", 8: "64"}

    def render(args, dts):
        if dts[0].kind == "f" and dts[0].itemsize in suffix:
            joiner = "_" if name[-1].isdigit() else ""
            return f"_M.{name}{joiner}{suffix[dts[0].itemsize]}({', '.join(args)})"
        if integer is not None:
            return integer(args, dts)
        return f"{libm}({', '.join(args)})"
    return render


def _call(fn: str) -> Expr:
    return lambda args, dts: f"{fn}({', '.join(args)})"


def _infix(sym: str) -> Expr:
    return lambda args, dts: f"({args[0]} {sym} {args[1]})"


EXPRESSIONS: dict[Op, Expr] = {
    Op.NEG: _by_kind("(-{a})", "(-{a})", uint="({Z} - {a})"),
    Op.ABS: _by_kind("abs({a})", "abs({a})", uint="{a}", bool_="{a}"),
    Op.SIGN: _by_kind("np.sign({a})", "np.sign({a})", uint="({a} != {Z})", bool_="{a}"),
    Op.EXP: _math("exp", "np.exp"),
    Op.LOG: _math("log", "np.log"),
    Op.LOG1P: _math("log1p", "np.log1p"),
    Op.LOG2: _math("log2", "np.log2"),
    Op.LOG10: _math("log10", "np.log10"),
    Op.EXPM1: _math("expm1", "np.expm1"),
    Op.SQRT: _call("np.sqrt"),
    Op.SQUARE: _by_kind("({a} * {a})", "({a} * {a})", bool_="{a}"),
    Op.SIN: _math("sin", "np.sin"),
    Op.COS: _math("cos", "np.cos"),
    Op.TAN: _math("tan", "np.tan"),
    Op.TANH: _math("tanh", "np.tanh"),
    Op.SINH: _math("sinh", "np.sinh"),
    Op.COSH: _math("cosh", "np.cosh"),
    Op.ARCSIN: _call("np.arcsin"),
    Op.ARCCOS: _call("np.arccos"),
    Op.ARCTAN: _math("arctan", "np.arctan"),
    Op.FLOOR: _by_kind("np.floor({a})", "{a}"),
    Op.CEIL: _by_kind("np.ceil({a})", "{a}"),
    Op.RINT: _by_kind("np.rint({a})", "{a}"),
    Op.LOGICAL_NOT: _by_kind("({a} == 0)", "({a} == 0)", bool_="(not {a})"),
    Op.INVERT: _by_kind("(~{a})", "(~{a})", bool_="(not {a})"),
    Op.ISNAN: _by_kind("np.isnan({a})", "False"),
    Op.ISINF: _by_kind("np.isinf({a})", "False"),
    Op.ISFINITE: _by_kind("np.isfinite({a})", "True"),
    Op.ADD: _by_kind("({a} + {b})", "({a} + {b})", bool_="({a} | {b})"),
    Op.SUB: _infix("-"),
    Op.MUL: _by_kind("({a} * {b})", "({a} * {b})", bool_="({a} & {b})"),
    Op.DIV: _infix("/"),
    # INT_MIN // -1 overflows to INT_MIN in NumPy; an idiv would trap, so negate instead.
    Op.FLOORDIV: _by_kind("({a} // {b})", "(-{a} if {b} == -1 else {a} // {b})",
                          uint="({a} // {b})"),
    Op.MOD: _infix("%"),
    Op.POW: _math("power", "({a} ** {b})", integer=_by_kind(
        "", "_ipow_signed({a}, {b})", uint="({a} ** {b})")),
    Op.MAXIMUM: _by_kind("({a} if ({a} >= {b} or {a} != {a}) else {b})",
                         "({a} if {a} >= {b} else {b})", bool_="({a} | {b})"),
    Op.MINIMUM: _by_kind("({a} if ({a} <= {b} or {a} != {a}) else {b})",
                         "({a} if {a} <= {b} else {b})", bool_="({a} & {b})"),
    Op.ARCTAN2: _math("arctan2", "np.arctan2"),
    Op.EQ: _infix("=="),
    Op.NE: _infix("!="),
    Op.LT: _infix("<"),
    Op.LE: _infix("<="),
    Op.GT: _infix(">"),
    Op.GE: _infix(">="),
    Op.LOGICAL_AND: lambda a, d: f"(({a[0]} != 0) & ({a[1]} != 0))",
    Op.LOGICAL_OR: lambda a, d: f"(({a[0]} != 0) | ({a[1]} != 0))",
    Op.LOGICAL_XOR: lambda a, d: f"(({a[0]} != 0) != ({a[1]} != 0))",
    Op.BITWISE_AND: _infix("&"),
    Op.BITWISE_OR: _infix("|"),
    Op.BITWISE_XOR: _by_kind("", "({a} ^ {b})", bool_="({a} != {b})"),
    # NumPy defines shifts by >= the bit width (or negative amounts): 0, or -1 for a negative
    # signed value shifted right.
    Op.LEFT_SHIFT: _by_kind("", "({a} << {b} if ({b} >= 0 and {b} < {bits}) else {Z})",
                            uint="({a} << {b} if {b} < {bits} else {Z})"),
    Op.RIGHT_SHIFT: _by_kind(
        "", "({a} >> {b} if ({b} >= 0 and {b} < {bits}) else ({Z} - 1 if {a} < 0 else {Z}))",
        uint="({a} >> {b} if {b} < {bits} else {Z})"),
    Op.SELECT: lambda a, d: f"({a[1]} if {a[0]} else {a[2]})",
    Op.CAST: lambda a, d: a[0],  # the result cast below does the conversion
}


def _expression(stmt: Compute) -> str:
    if stmt.op is Op.CAST and stmt.dtype == np.bool_:
        return f"({stmt.args[0]} != 0)"
    inner = EXPRESSIONS[stmt.op](stmt.args, stmt.arg_dtypes)
    return f"{_type_name(stmt.dtype)}({inner})"


PRELUDE = f'''\
# Generated by arrjit ({CODEGEN_VERSION}). Cached kernels are executable code.
import numpy as np
from numba import njit

from arrjit.codegen import atomics as _A
from arrjit.codegen import mathlib as _M

CACHE = False


@njit({NJIT_OPTIONS})
def _ipow_signed(a, b):
    if b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    return a ** b
'''


@dataclass(frozen=True)
class RenderedKernel:
    name: str
    source: str               # the function definition, decorated
    params: np.ndarray        # the P vector for this call's sizes


class _ParamTable:
    """Assigns P slots to run-time integers in a structure-determined order."""

    def __init__(self) -> None:
        self.values: list[int] = []
        self.indices: dict[Affine, str] = {}

    def slot(self, value: int) -> str:
        self.values.append(int(value))
        return f"p{len(self.values) - 1}"

    def prologue(self) -> list[str]:
        """Copy the vector into locals first: LLVM cannot prove a store to an output leaves
        ``P`` unchanged, so an index reading ``P[k]`` inside a loop is not loop-invariant
        and the loop does not vectorise (measured 11x on softmax's last pass)."""
        return [f"p{k} = P[{k}]" for k in range(len(self.values))]


def _index_expr(access: Affine, params: _ParamTable) -> str:
    """The flat element index of an access, as an unsigned integer: every index is in range
    by construction, and unsigned indices spare numba's negative-index wraparound check,
    which otherwise stops LLVM from vectorising the loop (measured 3x on a 5-input chain).
    Equal accesses share their P slots, so a load and a store of one element are visibly
    the same address (LLVM then vectorises a read-modify-write of an output)."""
    if access not in params.indices:
        params.indices[access] = f"np.uint64({_signed_index_expr(access, params)})"
    return params.indices[access]


def _signed_index_expr(access: Affine, params: _ParamTable) -> str:
    terms = []
    if access.offset != 0:
        terms.append(params.slot(access.offset))
    for j, c in enumerate(access.coefs):
        if c == 0:
            continue
        if c == 1:
            terms.append(f"i{j}")
        elif c == -1:
            terms.append(f"-i{j}")
        else:
            terms.append(f"i{j} * {params.slot(c)}")
    if not terms:
        return "0"
    return " + ".join(terms).replace("+ -", "- ")


def _depth(access: Affine) -> int:
    used = [j for j, c in enumerate(access.coefs) if c != 0]
    return max(used) + 1 if used else 0


def _extreme(dtype: np.dtype, largest: bool) -> str:
    if dtype == np.bool_:
        return repr(largest)
    if dtype.kind == "f":
        return f"{_type_name(dtype)}({'np.inf' if largest else '-np.inf'})"
    info = np.iinfo(dtype)
    return _literal(info.max if largest else info.min, dtype)


def _reduction_lines(r: Reduce) -> tuple[list[str], list[str]]:
    """(initialisation lines, update lines) for one accumulator."""
    acc, v, op = r.name, r.value, r.op
    if op is Op.REDUCE_SUM:
        return [f"{acc} = {_literal(0, r.acc_dtype)}"], [f"{acc} += {v}"]
    if op is Op.REDUCE_PROD:
        return [f"{acc} = {_literal(1, r.acc_dtype)}"], [f"{acc} *= {v}"]
    if op is Op.REDUCE_AND:
        return [f"{acc} = True"], [f"{acc} = {acc} & {v}"]
    if op is Op.REDUCE_OR:
        return [f"{acc} = False"], [f"{acc} = {acc} | {v}"]
    if op in (Op.REDUCE_MAX, Op.REDUCE_MIN):
        init = [f"{acc} = {_extreme(r.dtype, op is Op.REDUCE_MIN)}"]
        return init, [_extreme_update(op is Op.REDUCE_MAX, r.dtype, acc, v)]
    raise AssertionError(f"{op} is rendered by _arg_reduction_lines")


def _extreme_update(largest: bool, dtype: np.dtype, acc: str, v: str) -> str:
    """``acc`` becomes the max (``largest``) or min of ``acc`` and ``v``; for floats NaN wins
    (``llvm.maximum``/``minimum``: a loop reducing with them vectorises)."""
    if dtype.kind == "f":
        return f"{acc} = {'_M.fmaximum' if largest else '_M.fminimum'}({acc}, {v})"
    return f"{acc} = {v} if {v} {'>' if largest else '<'} {acc} else {acc}"


def _arg_match(r: Reduce, m: str) -> str:
    """Whether the value of ``r`` is the extreme ``m`` (for floats: both NaN also match)."""
    v = r.value
    if r.dtype.kind == "f":
        return f"(({v} == {m}) | (({m} != {m}) & ({v} != {v})))"
    return f"({v} == {m})"


# Float32 sums add each block of this many iterations of the innermost loop in float32 (the
# block's loop vectorises at full width), then add the block's sum to a float64 accumulator.
# A float64 accumulator in the loop itself halved the vector width: softmax's exp-and-sum pass
# took 1.9 ms instead of 1.0 ms on 4096x1024. The error stays below NumPy's pairwise float32
# sum (blocks of 128 in eight running sums, then pairwise): a vectorised block keeps 16-64
# running sums, and a block is never longer than 256 even where the loop stays scalar.
SUM_BLOCK = 256


def _blocked(r: Reduce) -> bool:
    """Whether the accumulation of ``r`` runs in float32 blocks (see ``SUM_BLOCK``)."""
    return r.op is Op.REDUCE_SUM and r.dtype == np.float32 and r.acc_dtype == np.float64


def _block_lines(r: Reduce) -> tuple[list[str], list[str], list[str]]:
    """(before each block, update, after each block) for a blocked sum."""
    block = f"{r.name}_b"
    return ([f"{block} = {_literal(0, r.dtype)}"], [f"{block} += {r.value}"],
            [f"{r.name} += {block}"])


ARG_NONE = "np.int64(9223372036854775807)"
ARG_REDUCTIONS = frozenset({Op.ARGMAX, Op.ARGMIN})


def _arg_reduction_lines(r: Reduce, scan: list[list[str]], inner_stmts: dict,
                         nloops: int) -> tuple[list[str], list[str]]:
    """argmax/argmin in two vectorisable loops: ``scan`` (a loop nest run just before the
    pass, holding only what the value needs) finds the extreme value (NaN-propagating for
    floats), then the pass takes the smallest index where it occurs (the first NaN if any)."""
    needed, stack = set(), [r.value]
    while stack:
        name = stack.pop()
        if name in inner_stmts and name not in needed:
            needed.add(name)
            stack.extend(inner_stmts[name][2])
    for name, (_, d, _, line) in inner_stmts.items():   # in statement order
        if name in needed:
            scan[d].append(line)
    acc, m, k = r.name, f"{r.name}_m", f"{r.name}_k"
    init = [f"{m} = {_extreme(r.dtype, r.op is Op.ARGMIN)}", f"{acc} = {ARG_NONE}", f"{k} = 0"]
    scan[nloops].append(_extreme_update(r.op is Op.ARGMAX, r.dtype, m, r.value))
    # min() vectorises where the equivalent conditional expression does not (float64 rows of
    # 1024: 8.1 -> 2.4-3.1 ms single-threaded)
    update = [f"{acc} = min({acc}, {k} if {_arg_match(r, m)} else {ARG_NONE})", f"{k} += 1"]
    return init, update


# argmax/argmin over one reduced loop read each block of this many elements once from memory:
# a scan finds the block's extreme, and only a block that beats the running extreme is
# scanned again (from L1) for the index.
ARG_BLOCK = 1024


def _better(r: Reduce, candidate: str, current: str) -> str:
    """A strictly better extreme, or the first NaN (floats)."""
    better = f"{candidate} {'>' if r.op is Op.ARGMAX else '<'} {current}"
    if r.dtype.kind == "f":
        better = f"({better}) | (({candidate} != {candidate}) & ({current} == {current}))"
    return better


def _blocked_arg_lines(r: Reduce, values: list[str], d: int) -> list[str]:
    """The pass of an argmax/argmin whose loop ``d`` is the only reduced loop and which computes
    nothing else: in blocks of ``ARG_BLOCK``, a vectorised scan for the block's extreme and,
    for a block that beats the running extreme (earlier blocks win ties), a vectorised scan
    for the first index where it occurs."""
    acc, m, k = r.name, f"{r.name}_m", f"{r.name}_k"
    lo, hi = ("start", "stop") if d == 0 else ("0", f"p{d}")
    block, end, bm = f"i{d}_b", f"{acc}_e", f"{acc}_bm"
    return [f"for {block} in range({lo}, {hi}, {ARG_BLOCK}):",
            f"    {end} = min({block} + {ARG_BLOCK}, {hi})",
            f"    {bm} = {_extreme(r.dtype, r.op is Op.ARGMIN)}",
            f"    for i{d} in range({block}, {end}):",
            *(f"        {line}" for line in values),
            f"        {_extreme_update(r.op is Op.ARGMAX, r.dtype, bm, r.value)}",
            f"    if {_better(r, bm, m)}:",
            f"        {m} = {bm}",
            f"        {acc} = {ARG_NONE}",
            f"        {k}_i = {k}",
            f"        for i{d} in range({block}, {end}):",
            *(f"            {line}" for line in values),
            f"            {acc} = min({acc}, {k}_i if {_arg_match(r, m)} else {ARG_NONE})",
            f"            {k}_i += 1",
            f"    {k} += {end} - {block}"]


def _array_names(kernel: Kernel) -> tuple[list[str], list[str]]:
    """The kernel's array parameters: (written, read)."""
    return ([f"w{k}" for k in range(len(kernel.writes))],
            [f"r{k}" for k in range(len(kernel.reads))])


def render_kernel(kernel: Kernel) -> RenderedKernel:
    """Render the kernel as a decorated numba function; name derived from its body hash."""
    params = _ParamTable()
    for n in kernel.sizes:
        params.slot(n)
    writes, reads = _array_names(kernel)
    body: list[str] = [f"{name} = {name}.reshape({name}.size)" for name in writes + reads]
    if kernel.n_outer is None:
        _render_elementwise(kernel, params, body)
    else:
        _render_passes(kernel, params, body)
    text_body = "\n".join("    " + line for line in params.prologue() + body)
    signature = ", ".join(writes + reads + ["P", "start", "stop"])
    digest = hashlib.sha256((signature + "\n" + text_body).encode()).hexdigest()[:16]
    name = f"kernel_{digest}"
    options = REDUCTION_OPTIONS if kernel.n_outer is not None else NJIT_OPTIONS
    source = f"@njit({options})\ndef {name}({signature}):\n{text_body}\n"
    return RenderedKernel(name, source, np.asarray(params.values, dtype=np.int64))


def _statement(stmt, params: _ParamTable, depth: dict[str, int]) -> tuple[str, int]:
    """(source line, loop depth it needs) of one statement."""
    if isinstance(stmt, Load):
        array = f"{'w' if stmt.own_output else 'r'}{stmt.buffer}"
        return (f"{stmt.name} = {array}[{_index_expr(stmt.access, params)}]",
                _depth(stmt.access))
    if isinstance(stmt, Const):
        return f"{stmt.name} = {_literal(stmt.value, stmt.dtype)}", 0
    return (f"{stmt.name} = {_expression(stmt)}",
            max((depth[a] for a in stmt.args), default=0))


def _loop_header(d: int) -> str:
    return f"for i{d} in {'range(start, stop)' if d == 0 else f'range(p{d})'}:"


def _render_elementwise(kernel: Kernel, params: _ParamTable, body: list[str]) -> None:
    """One loop nest; each statement hoisted to the shallowest loop it depends on."""
    nloops = len(kernel.sizes)
    pre: list[list[str]] = [[] for _ in range(nloops + 1)]
    depth: dict[str, int] = {}
    for stmt in kernel.stmts:
        line, d = _statement(stmt, params, depth)
        depth[stmt.name] = d
        pre[d].append(line)
    pre[nloops].extend(f"w{s.buffer}[{_index_expr(s.access, params)}] = {s.value}"
                       for s in kernel.stores)
    _emit_nest(body, pre, 0, "")


def _emit_nest(body: list[str], lines: list[list[str]], d: int, indent: str,
               block: tuple[list[str], list[str]] = ([], [])) -> None:
    """Loops ``d`` to ``len(lines) - 2`` nested, with ``lines[j]`` just before loop ``j``
    (``lines[-1]``: the innermost body). With ``block`` lines (before, after), the innermost
    loop runs in blocks of ``SUM_BLOCK`` iterations with those lines around each block."""
    innermost = len(lines) - 1
    before, after = block
    if d == innermost:     # no loop at all: the body runs once, as one block
        body.extend(indent + line for line in [*before, *lines[d], *after])
        return
    body.extend(indent + line for line in lines[d])
    if d < innermost - 1 or not before:
        body.append(indent + _loop_header(d))
        _emit_nest(body, lines, d + 1, indent + "    ", block)
        return
    lo, hi = ("start", "stop") if d == 0 else ("0", f"p{d}")
    inside = indent + "    "
    body.append(f"{indent}for i{d}_b in range({lo}, {hi}, {SUM_BLOCK}):")
    body.extend(inside + line for line in before)
    body.append(f"{inside}for i{d} in range(i{d}_b, min(i{d}_b + {SUM_BLOCK}, {hi})):")
    body.extend(inside + "    " + line for line in lines[innermost])
    body.extend(inside + line for line in after)


def _render_passes(kernel: Kernel, params: _ParamTable, body: list[str],
                   mode: str = "whole") -> None:
    """Outer loops over the kept dimensions; inside, for each pass, the accumulator
    initialisations and a loop nest over the reduced dimensions, with the statements that
    depend only on outer indices and finished passes placed in the gaps between passes.

    ``mode`` "part" renders only the accumulation of a full reduction over
    ``range(start, stop)``, storing the accumulators to ``part<k>[t]``; "finish" combines the
    ``n`` partial accumulators and runs the rest (see ``render_split``). Every mode renders
    every statement, so the P slots are the same."""
    nloops, n_outer, passes = len(kernel.sizes), kernel.n_outer, kernel.passes
    outer_pre: list[list[str]] = [[] for _ in range(n_outer)]
    gaps: list[list[str]] = [[] for _ in range(passes + 1)]
    inner: list[list[list[str]]] = [[[] for _ in range(nloops + 1)] for _ in range(passes)]
    depth: dict[str, int] = {r.name: n_outer for r in kernel.reductions}
    gap: dict[str, int] = {r.name: r.stage + 1 for r in kernel.reductions}
    stages = kernel.stages or (0,) * len(kernel.stmts)
    inner_stmts: dict[str, tuple[int, int, tuple[str, ...], str]] = {}  # name: pass, depth..
    for stmt, stage in zip(kernel.stmts, stages):
        line, d = _statement(stmt, params, depth)
        depth[stmt.name] = d
        args = stmt.args if isinstance(stmt, Compute) else ()
        g = max((gap.get(a, 0) for a in args), default=0)
        gap[stmt.name] = g
        if d > n_outer:
            inner[stage][d].append(line)
            inner_stmts[stmt.name] = (stage, d, args, line)
        elif g == 0 and d < n_outer:
            outer_pre[d].append(line)
        else:
            gaps[g].append(line)
    scans: list[list[list[str]]] = [[[] for _ in range(nloops + 1)] for _ in range(passes)]
    blocks: list[tuple[list[str], list[str]]] = [([], []) for _ in range(passes)]
    for r in kernel.reductions:
        if r.op in ARG_REDUCTIONS:
            init, update = _arg_reduction_lines(r, scans[r.stage], inner_stmts, nloops)
            # No match (possible only if the two loops round a value differently) gives 0.
            # Arithmetic, not a comparison with ARG_NONE: comparing the result with the
            # sentinel stopped the index loop from vectorising (4M float32: 4.0 -> 0.6 ms).
            gaps[r.stage + 1].insert(
                0, f"{r.name} = min({r.name}, {r.name}_k) % max({r.name}_k, 1)")
        elif _blocked(r):
            init = _reduction_lines(r)[0]
            before, update, after = _block_lines(r)
            blocks[r.stage][0].extend(before)
            blocks[r.stage][1].extend(after)
        else:
            init, update = _reduction_lines(r)
        gaps[r.stage].extend(init)
        inner[r.stage][nloops].extend(update)
    stored_inside: set[int] = set()
    for s in kernel.stores:
        line = f"w{s.buffer}[{_index_expr(s.access, params)}] = {s.value}"
        if _depth(s.access) > n_outer or depth.get(s.value, 0) > n_outer:
            inner[s.stage][nloops].append(line)
            stored_inside.add(s.stage)
        else:
            gaps[s.stage].append(line)
    blocked_args: dict[int, list[str]] = {}   # pass: its lines, when it is one blocked argmax
    for p in range(passes if nloops - n_outer == 1 else 0):
        of_pass = [r for r in kernel.reductions if r.stage == p]
        if len(of_pass) == 1 and of_pass[0].op in ARG_REDUCTIONS and p not in stored_inside:
            values = [line for (st, _, _, line) in inner_stmts.values() if st == p]
            if values == scans[p][nloops][:-1]:    # the pass computes only the value
                blocked_args[p] = _blocked_arg_lines(of_pass[0], values, nloops - 1)


    def emit_outer(d: int, indent: str) -> None:
        if d < n_outer:
            body.extend(indent + line for line in outer_pre[d])
            body.append(indent + _loop_header(d))
            emit_outer(d + 1, indent + "    ")
            return
        for p in range(passes + 1):
            body.extend(indent + line for line in gaps[p])
            if p == passes:
                continue
            if p in blocked_args:
                body.extend(indent + line for line in blocked_args[p])
                continue
            if any(scans[p]):
                _emit_nest(body, scans[p], n_outer, indent)
            if any(inner[p]):
                _emit_nest(body, inner[p], n_outer, indent, blocks[p])

    if mode == "whole":
        emit_outer(0, "")
        return
    body.extend(gaps[0])
    inner_size = " * ".join(f"p{d}" for d in range(1, nloops)) or "1"
    if mode == "part":
        if 0 in blocked_args:
            body.extend(blocked_args[0])
        else:
            if any(scans[0]):
                _emit_nest(body, scans[0], 0, "")
            _emit_nest(body, inner[0], 0, "", blocks[0])
        for k, r in enumerate(kernel.reductions):
            if r.op in ARG_REDUCTIONS:   # the chunk's extreme and its index in the whole range
                body.append(f"part{k}[t] = min({r.name}, {r.name}_k) + start * {inner_size}")
                body.append(f"part{k}_m[t] = {r.name}_m")
            else:
                body.append(f"part{k}[t] = {r.name}")
        return
    for k, r in enumerate(kernel.reductions):
        body.append("for t in range(n):")
        if r.op in ARG_REDUCTIONS:
            body.extend("    " + line for line in _arg_combine_lines(r, k))
            gaps[1].insert(0, f"{r.name}_k = p0 * {inner_size}")
        else:
            update = _reduction_lines(replace(r, value=f"part{k}[t]"))[1]
            body.extend("    " + line for line in update)
    body.extend(gaps[1])


def _arg_combine_lines(r: Reduce, k: int) -> list[str]:
    """Fold chunk ``t``'s (extreme, index) into the running pair. Chunks come in order and only
    a strictly better extreme (or the first NaN) replaces the pair, so the first occurrence
    wins, as in NumPy."""
    m, value = f"{r.name}_m", f"part{k}_m[t]"
    return [f"if {_better(r, value, m)}:", f"    {m} = {value}", f"    {r.name} = part{k}[t]"]


def partial_arrays(kernel: Kernel) -> list[tuple[str, np.dtype]]:
    """(name, dtype) of the per-chunk partial arrays of a split kernel: each reduction's
    accumulator, plus the extreme value for argmax/argmin."""
    arrays: list[tuple[str, np.dtype]] = []
    for k, r in enumerate(kernel.reductions):
        if r.op in ARG_REDUCTIONS:
            arrays += [(f"part{k}", np.dtype(np.int64)), (f"part{k}_m", r.dtype)]
        else:
            arrays.append((f"part{k}", r.acc_dtype))
    return arrays


# Reductions whose partial accumulators (one per chunk) combine with their own update rule.
SPLITTABLE_REDUCTIONS = frozenset({Op.REDUCE_SUM, Op.REDUCE_PROD, Op.REDUCE_MAX,
                                   Op.REDUCE_MIN, Op.REDUCE_AND, Op.REDUCE_OR, Op.ARGMAX,
                                   Op.ARGMIN})


def can_split(kernel: Kernel) -> bool:
    """Whether a full reduction can run as per-chunk partials plus a combining step."""
    return (kernel.n_outer == 0 and kernel.passes == 1 and len(kernel.sizes) > 0 and
            all(r.op in SPLITTABLE_REDUCTIONS for r in kernel.reductions))


def render_split(kernel: Kernel, name: str) -> str:
    """``<name>_part(part..., reads..., P, start, stop, t)`` accumulates ``range(start,
    stop)`` of the outermost loop into slot ``t`` of the partial arrays; ``<name>_finish(
    writes..., reads..., part..., P, n)`` combines ``n`` partials and runs the epilogue and
    the stores."""
    writes, reads = _array_names(kernel)
    parts = [name for name, _ in partial_arrays(kernel)]
    sources = []
    for mode, signature in (("part", parts + reads + ["P", "start", "stop", "t"]),
                            ("finish", writes + reads + parts + ["P", "n"])):
        params = _ParamTable()
        for size in kernel.sizes:
            params.slot(size)
        body = [f"{a} = {a}.reshape({a}.size)" for a in writes + reads if a in signature]
        _render_passes(kernel, params, body, mode)
        text = "\n".join("    " + line for line in params.prologue() + body)
        sources.append(f"@njit({REDUCTION_OPTIONS})\ndef {name}_{mode}({', '.join(signature)}):"
                       f"\n{text}\n")
    return "\n\n".join(sources)


# The ``state`` array shared by the threads running one worker (see ``arrjit.threads``):
STATE_ERROR = 0        # set when a chunk raised (the caller re-runs serially to raise it)
STATE_GATE = 1         # helpers count themselves in; the caller adds GATE_CLOSED when done
STATE_RELEASED = 2     # helpers that came in and have dropped the job's arrays
STATE_ENTERED = 3      # helpers that came in before the gate closed (-1 until it closes)
STATE_NEXT = 4         # next chunk of thread 0, of thread 1, ...
GATE_CLOSED = 1 << 40


def render_worker(kernel: Kernel, name: str, split: bool) -> str:
    """The worker running kernel ``name`` on chunks (for a ``split`` kernel: its ``_part``
    function, filling partial slot ``k`` for chunk ``k``); see ``_render_worker``."""
    writes, reads = _array_names(kernel)
    if split:
        parts = [part for part, _ in partial_arrays(kernel)]
        return _render_worker(name + "_part", parts + reads, chunk_number=True)
    return _render_worker(name, writes + reads)


def _render_worker(function: str, arguments: list[str], chunk_number: bool = False) -> str:
    """``<function>_worker(arguments..., P, extent, chunks, state, t, threads, bell)``, run by
    each of ``threads`` threads (``t`` = 0 is the caller), calls ``function(arguments..., P,
    lo, hi[, k])`` for chunks ``k`` of ``range(extent)``. Thread ``t`` owns the consecutive
    chunks ``[chunks * t // threads, chunks * (t + 1) // threads)`` and takes them in order from
    the atomic counter ``state[STATE_NEXT + t]``; when they are gone it takes the remaining
    chunks of the other threads from their counters. The caller first rings ``bell`` (helpers
    spinning on it start at once); a helper first passes the gate, and does nothing once the
    caller has closed it (returns False: it took no chunk and must not count itself out). A
    chunk that raises sets ``state[STATE_ERROR]``.

    Owned consecutive ranges keep each thread on its own pages of a fresh output (two threads
    faulting in one huge page stalled for milliseconds), and a helper that starts late finds
    its first chunks already taken."""
    call = ", ".join(arguments + ["P", "lo", "hi"] + (["k"] if chunk_number else []))
    return (f"@njit({NJIT_OPTIONS})\n"
            f"def {function}_worker({', '.join(arguments)}, P, extent, chunks, state, t, "
            f"threads, bell):\n"
            f"    if t == 0:\n"
            f"        _A.fetch_add(bell, 0, 1)\n"
            f"    elif _A.fetch_add(state, {STATE_GATE}, 1) >= {GATE_CLOSED}:\n"
            f"        return False\n"
            f"    for v in range(threads):\n"
            f"        owner = (t + v) % threads\n"
            f"        end = chunks * (owner + 1) // threads\n"
            f"        while True:\n"
            f"            k = _A.fetch_add(state, {STATE_NEXT} + owner, 1)\n"
            f"            if k >= end:\n"
            f"                break\n"
            f"            lo = extent * k // chunks\n"
            f"            hi = extent * (k + 1) // chunks\n"
            f"            try:\n"
            f"                {function}({call})\n"
            f"            except Exception:\n"
            f"                state[{STATE_ERROR}] = 1\n"
            f"    return True\n")


def render_thread_module() -> str:
    """The module of the helper threads' own native functions (see ``arrjit.threads``):

    * ``park(bell, seen, spins)``: spin until ``bell[0] != seen`` (True) or ``spins`` pauses
      have passed (False);
    * ``release_and_park(state, bell, seen, spins)``: a helper has dropped the job's arrays:
      count it out in ``state``, then park;
    * ``settle(state, spins)``: the caller, once its worker has returned (every chunk taken):
      close the gate, then wait (at most ``spins`` pauses) until every helper that came in is
      out, its chunks done. False: call again after a sleep."""
    return PRELUDE + f"""

@njit({NJIT_OPTIONS})
def park(bell, seen, spins):
    for _ in range(spins):
        if _A.load_acquire(bell, 0) != seen:
            return True
        _A.spin_pause()
    return _A.load_acquire(bell, 0) != seen


@njit({NJIT_OPTIONS})
def release_and_park(state, bell, seen, spins):
    _A.fetch_add(state, {STATE_RELEASED}, 1)
    return park(bell, seen, spins)


@njit({NJIT_OPTIONS})
def settle(state, spins):
    if state[{STATE_ENTERED}] < 0:
        state[{STATE_ENTERED}] = _A.fetch_add(state, {STATE_GATE}, {GATE_CLOSED})
    entered = state[{STATE_ENTERED}]
    for _ in range(spins):
        if _A.load_acquire(state, {STATE_RELEASED}) >= entered:
            return True
        _A.spin_pause()
    return _A.load_acquire(state, {STATE_RELEASED}) >= entered
"""


def outer_extent(kernel: Kernel) -> int:
    """The trip count of the outermost loop (1 for a 0-d kernel: its body runs once)."""
    return kernel.sizes[0] if kernel.sizes else 1


def render_module(kernels: list[RenderedKernel], arg_slots: list[list[int]],
                  extents_in_params: list[bool], extra: tuple[str, ...] = ()
                  ) -> tuple[str, list[int]]:
    """A module with the kernels (and ``extra`` functions) and, for several kernels,
    ``program(b0, b1, ..., P0, P1, ...)`` calling each over its whole range, so one native call
    runs the whole segment. Returns (source, buffer slots in program argument order; empty for
    a single kernel)."""
    unique = {k.name: k.source for k in kernels}
    unique.update({text.split("def ", 1)[1].split("(", 1)[0]: text for text in extra})
    source = PRELUDE + "\n\n" + "\n\n".join(unique.values())
    if len(kernels) == 1:
        return source, []
    slots = sorted({s for args in arg_slots for s in args})
    position = {s: k for k, s in enumerate(slots)}
    lines = []
    for k, (kern, args, has_extent) in enumerate(zip(kernels, arg_slots, extents_in_params)):
        call_args = ", ".join(f"b{position[s]}" for s in args)
        stop = f"P{k}[0]" if has_extent else "1"
        lines.append(f"    {kern.name}({call_args}, P{k}, 0, {stop})")
    signature = ", ".join([f"b{k}" for k in range(len(slots))] +
                          [f"P{k}" for k in range(len(kernels))])
    source += (f"\n\n@njit({NJIT_OPTIONS})\ndef program({signature}):\n" + "\n".join(lines) +
               "\n")
    return source, slots


@dataclass(frozen=True)
class DriverCall:
    kernel: RenderedKernel
    args: tuple[str, ...]     # driver variable names, writes then reads
    params: str               # the P array variable
    extent: int               # index into the extents array E


def render_loop_driver(cond_calls: list[DriverCall], body_calls: list[DriverCall],
                       predicate: str, carry_now: list[str], carry_next: list[str],
                       arguments: list[str]) -> str:
    """A module whose ``driver`` runs ``while predicate: body`` natively: the condition's
    kernels write the 0-d ``predicate``, the body's kernels read ``carry_now`` and write
    ``carry_next``, then the two swap. Returns the source."""
    kernels = {c.kernel.name: c.kernel.source for c in cond_calls + body_calls}

    def call(c: DriverCall) -> str:
        return f"{c.kernel.name}({', '.join(c.args)}, {c.params}, 0, E[{c.extent}])"

    lines = [f"def driver({', '.join(arguments + ['E'])}):", "    while True:"]
    lines += [f"        {call(c)}" for c in cond_calls]
    lines.append(f"        if not {predicate}.reshape({predicate}.size)[0]:")
    lines.append("            break")
    lines += [f"        {call(c)}" for c in body_calls]
    for now, nxt in zip(carry_now, carry_next):
        lines.append(f"        {now}, {nxt} = {nxt}, {now}")
    lines.append(f"    return ({', '.join(carry_now)},)")
    return (PRELUDE + "\n\n" + "\n\n".join(kernels.values()) +
            f"\n\n@njit({NJIT_OPTIONS})\n" + "\n".join(lines) + "\n")
