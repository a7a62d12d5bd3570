"""How generated CPU code addresses buffers: run-time integers in the ``P`` vector, and the
flat element index of an access (``passes.kernel.Affine``) as source text.

>>> from arrjit.passes.kernel import Affine
>>> params = ParamTable()
>>> index_expr(Affine(3, (4, 1), True), params), params.values
('p0 + i0 * p1 + i1', [3, 4])
"""
from __future__ import annotations

from ...passes.kernel import Affine
from ..source import affine_text


class ParamTable:
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


def index_expr(access: Affine, params: ParamTable) -> str:
    """The flat element index of an access. Kernels read and write through ``_M.load`` and
    ``_M.store``: every index is in range by construction, and they skip numba's
    negative-index wraparound, which otherwise stops LLVM from vectorising the loop (measured
    3x on a 5-input chain). Equal accesses share their P slots, so a load and a store of one
    element are visibly the same address (LLVM then vectorises a read-modify-write of an
    output)."""
    if access not in params.indices:
        params.indices[access] = affine_text(access, params.slot)
    return params.indices[access]


def loop_depth(access: Affine) -> int:
    return max(access.loops(), default=-1) + 1
