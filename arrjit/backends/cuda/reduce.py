"""Reduction text for CUDA kernels: accumulator initialisation, the per-element update, and
the block reduction in shared memory that combines the threads' accumulators.

Every rule's update is a binary combine, so one text serves a thread's own elements, the
tree over the block's threads and the combine of per-block partials. argmax/argmin carry a
(value, flat index) pair; an index of -1 marks a thread (or block) that saw no element, and
of two candidates with the same value the smaller index wins, which is NumPy's first
occurrence. Floats: NaN wins in max/min and the first NaN wins in argmax/argmin.

>>> import numpy as np
>>> combine("max", np.dtype("int32"), "a", "b")
'(a if a >= b else b)'
"""
from __future__ import annotations

import numpy as np

from ...core.rules import ARG_REDUCTIONS, REDUCTION_RULES
from ...passes.kernel import Reduce
from ..source import extreme as _extreme, literal, type_name


def combine(update: str, dtype: np.dtype, a: str, b: str) -> str:
    """The accumulator that folds ``b`` into ``a`` under the rule's ``update``."""
    if update == "add":
        return f"({a} + {b})"
    if update == "mul":
        return f"({a} * {b})"
    if update == "and":
        return f"({a} & {b})"
    if update == "or":
        return f"({a} | {b})"
    if update not in ("max", "min"):
        raise KeyError(f"no CUDA combine for reduction update {update!r}")
    cmp = ">=" if update == "max" else "<="
    if dtype.kind == "f":
        return f"({a} if ({a} {cmp} {b} or {a} != {a}) else {b})"
    return f"({a} if {a} {cmp} {b} else {b})"


def _largest(r: Reduce) -> bool:
    return REDUCTION_RULES[r.op].update == "max"


def acc_dtype(r: Reduce) -> np.dtype:
    """The dtype of ``r``'s accumulator (for argmax/argmin: of the extreme value)."""
    update = REDUCTION_RULES[r.op].update
    return r.dtype if update in ("max", "min") or r.op in ARG_REDUCTIONS else r.acc_dtype


def init_lines(r: Reduce) -> list[str]:
    if r.op in ARG_REDUCTIONS:
        return [f"{r.name}_m = {_extreme(r.dtype, not _largest(r))}",
                f"{r.name} = np.int64(-1)"]
    rule = REDUCTION_RULES[r.op]
    if rule.identity in ("lowest", "highest"):
        init = _extreme(acc_dtype(r), rule.identity == "highest")
    else:
        init = literal(rule.identity, acc_dtype(r))
    return [f"{r.name} = {init}"]


def _better(r: Reduce, x: str, y: str) -> str:
    """``x`` is a strictly better extreme than ``y`` (or the first NaN)."""
    better = f"({x} {'>' if _largest(r) else '<'} {y})"
    if r.dtype.kind == "f":
        better = f"({better} or ({x} != {x} and {y} == {y}))"
    return better


def _same(r: Reduce, x: str, y: str) -> str:
    if r.dtype.kind == "f":
        return f"({x} == {y} or ({x} != {x} and {y} != {y}))"
    return f"({x} == {y})"


def update_lines(r: Reduce, value: str, index: str) -> list[str]:
    """Fold element ``value`` (at flat index ``index`` of the reduced loops) into ``r``;
    elements come in increasing index order per thread."""
    if r.op in ARG_REDUCTIONS:
        return [f"if {r.name} < 0 or {_better(r, value, r.name + '_m')}:",
                f"    {r.name}_m = {value}",
                f"    {r.name} = {index}"]
    rule = REDUCTION_RULES[r.op]
    return [f"{r.name} = {combine(rule.update, acc_dtype(r), r.name, value)}"]


def fold_pair_lines(r: Reduce, m: str, i: str) -> list[str]:
    """Fold the candidate (value ``m``, index ``i``; ``i`` < 0: none) into ``r``."""
    if r.op in ARG_REDUCTIONS:
        return [f"if {i} >= 0 and ({r.name} < 0 or {_better(r, m, r.name + '_m')} or "
                f"({_same(r, m, r.name + '_m')} and {i} < {r.name})):",
                f"    {r.name}_m = {m}",
                f"    {r.name} = {i}"]
    rule = REDUCTION_RULES[r.op]
    return [f"{r.name} = {combine(rule.update, acc_dtype(r), r.name, m)}"]


def shared_lines(reductions: tuple[Reduce, ...], block: int) -> list[str]:
    """The shared arrays of the block reduction (one per accumulator)."""
    lines = []
    for k, r in enumerate(reductions):
        lines.append(f"sh{k} = cuda.shared.array({block}, {type_name(acc_dtype(r))})")
        if r.op in ARG_REDUCTIONS:
            lines.append(f"sh{k}_i = cuda.shared.array({block}, np.int64)")
    return lines


WARP = 32


def _shuffled(dtype: np.dtype, value: str) -> str:
    """``value`` from the lane ``off`` above (``shfl_down_sync`` moves 32/64-bit ints and
    floats; narrower ints and bools travel as int64)."""
    if dtype.kind == "f" or dtype in (np.int32, np.int64):
        return f"cuda.shfl_down_sync(0xFFFFFFFF, {value}, off)"
    return f"{type_name(dtype)}(cuda.shfl_down_sync(0xFFFFFFFF, np.int64({value}), off))"


def _warp_fold_lines(reductions: list[tuple[int, Reduce]]) -> list[str]:
    """Fold each warp's accumulators into its lane 0 (lanes past the end of the warp return
    their own value; only lane 0's result is used)."""
    lines = ["off = 16", "while off > 0:"]
    for _, r in reductions:
        if r.op in ARG_REDUCTIONS:
            lines += [f"    {r.name}_mo = {_shuffled(r.dtype, r.name + '_m')}",
                      f"    {r.name}_io = {_shuffled(np.dtype(np.int64), r.name)}"]
            lines += ["    " + ln for ln in fold_pair_lines(r, f"{r.name}_mo", f"{r.name}_io")]
        else:
            rule = REDUCTION_RULES[r.op]
            lines += [f"    {r.name}_o = {_shuffled(acc_dtype(r), r.name)}",
                      f"    {r.name} = {combine(rule.update, acc_dtype(r), r.name, r.name + '_o')}"]
    return lines + ["    off = off // 2"]


def _store_lines(reductions: list[tuple[int, Reduce]], slot: str) -> list[str]:
    lines = []
    for k, r in reductions:
        if r.op in ARG_REDUCTIONS:
            lines += [f"sh{k}[{slot}] = {r.name}_m", f"sh{k}_i[{slot}] = {r.name}"]
        else:
            lines.append(f"sh{k}[{slot}] = {r.name}")
    return lines


def _load_lines(reductions: list[tuple[int, Reduce]], slot: str) -> list[str]:
    lines = []
    for k, r in reductions:
        if r.op in ARG_REDUCTIONS:
            lines += [f"{r.name}_m = sh{k}[{slot}]", f"{r.name} = sh{k}_i[{slot}]"]
        else:
            lines.append(f"{r.name} = sh{k}[{slot}]")
    return lines


def _shuffle_combine_lines(reductions: list[tuple[int, Reduce]], block: int) -> list[str]:
    """Warp shuffles within each warp, the warps' results through shared memory, shuffles
    again in warp 0; every thread then reads the block's value."""
    inits = [ln for _, r in reductions for ln in init_lines(r)]
    return [*_warp_fold_lines(reductions),
            "if tid % 32 == 0:", *("    " + ln for ln in _store_lines(reductions, "tid // 32")),
            "cuda.syncthreads()",
            "if tid < 32:",
            f"    if tid < {block // WARP}:",
            *("        " + ln for ln in _load_lines(reductions, "tid")),
            "    else:", *("        " + ln for ln in inits),
            *("    " + ln for ln in _warp_fold_lines(reductions)),
            "    if tid == 0:", *("        " + ln for ln in _store_lines(reductions, "0")),
            "cuda.syncthreads()", *_load_lines(reductions, "0"), "cuda.syncthreads()"]


def block_combine_lines(reductions: list[tuple[int, Reduce]], block: int,
                        shuffle: bool = False) -> list[str]:
    """Combine the block's accumulators of ``reductions`` ((shared-array index, Reduce));
    afterwards every thread holds the block's value. With ``shuffle`` (a GPU, blocks of
    whole warps) through warp shuffles, else (the simulator, which has no shuffles) in a tree
    of halvings in shared memory. Every thread of the block must reach these lines (they
    synchronise)."""
    if not reductions:
        return []
    if shuffle and block >= WARP and block % WARP == 0:
        return _shuffle_combine_lines(reductions, block)
    fold = [ln for k, r in reductions
            for ln in fold_pair_lines(r, f"sh{k}[tid + half]", f"sh{k}_i[tid + half]")]
    return [*_store_lines(reductions, "tid"), "cuda.syncthreads()", f"half = {block // 2}",
            "while half > 0:", "    if tid < half:",
            *("        " + ln for ln in [*_load_lines(reductions, "tid"), *fold,
                                         *_store_lines(reductions, "tid")]),
            "    cuda.syncthreads()", "    half = half // 2",
            *_load_lines(reductions, "0"), "cuda.syncthreads()"]
