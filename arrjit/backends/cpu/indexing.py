"""Gathers and scatters at scalar positions (and gathers of one index vector among slices),
and concatenation, as native functions for loop drivers.

A loop body like ``out.at[i].set(v)`` or ``x[i]`` indexes with a traced scalar, which the plan
runs as a NumPy library call; a loop whose body has one ran its compiled pieces from Python,
once per iteration. When every index operand is a 0-d integer (or there is none: static ints
and slices), the step is rendered here as a numba function with a kernel's calling convention
(writes, reads, ``P``, ``start``, ``stop``), so the loop driver calls it natively. Semantics
are NumPy's: negative positions count from the end, an out-of-range one raises NumPy's
``IndexError``, and a scatter updates one position or one region (no duplicates to combine).

>>> import numpy as np
>>> from arrjit.core.dtypes import Aval
>>> f64, i64 = np.dtype("float64"), np.dtype("int64")
>>> print(render_body(Op.GATHER, (("array", 0), ("slice", None, None, None)),
...                   [Aval((3, 4), f64), Aval((), i64)], Aval((4,), f64), "set", False))
    i0 = r1
    if _M.outside(i0, r0.shape[0]):
        _M.out_of_bounds(i0, 0, r0.shape[0])
    i0 = _M.wrapped(i0, r0.shape[0])
    s = r0[i0, :]
    for j0 in range(w0.shape[0]):
        w0[j0] = s[j0]

Values are copied element by element and errors raised with numbers only: numba's array
assignment checks broadcasting with a message it formats in compiled code, and formatting a
string compiled numba's string functions in every new process (1.5 s for one gather).

One element is addressed through the array's extents as literals, the form in which the
driver's other functions address it (``registers``), so that LLVM sees a store and a later
load of the same element (a Gauss-Seidel sweep reads the point it has just written) and
forwards the value in a register; positions known in range (``in_range``) are not checked:

>>> print(render_body(Op.SCATTER, (("array", 0), ("array", 1)), [Aval((3, 4), f64),
...                   Aval((), i64), Aval((), i64), Aval((), f64)], Aval((3, 4), f64), "set",
...                   True, in_range=(0, 1)))
    i0 = r1
    i1 = r2
    _M.store(_M.flat(w0), (i0) * 4 + i1, r3)

A loop driver's small value in registers (``updates_by_elements``) is stored into its region
element by element from the tuple of its elements, not through its buffer:

>>> print(render_body(Op.SCATTER, (("array", 0),), [Aval((5, 3), f64), Aval((), i64),
...                   Aval((3,), f64)], Aval((5, 3), f64), "set", True, in_range=(0,),
...                   tuple_updates=True))
    i0 = r1
    b = (i0) * 3
    _M.store(_M.flat(w0), b + 0, r2[0])
    _M.store(_M.flat(w0), b + 1, r2[1])
    _M.store(_M.flat(w0), b + 2, r2[2])
"""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from ...core.dtypes import Aval
from ...core.ir import Op
from ...core.library import SCATTER_UFUNCS, indexed_shape, is_array_item, is_position_item
from ...plan import LibraryStep
from .codegen import DRIVER_OPTIONS, LEAF_OPTIONS, RenderedKernel


def supported(step: LibraryStep, slot_avals: Sequence[Aval]) -> bool:
    """Whether ``step`` is a gather or scatter this module renders."""
    node = step.node
    if node.op is Op.CONCATENATE:
        return True
    if node.op not in (Op.GATHER, Op.SCATTER):
        return False
    template = node.param["index"]
    if not all(is_position_item(item) for item in template):
        return False        # None and Ellipsis move dimensions: NumPy handles them
    avals = [slot_avals[s] for s in step.in_slots]
    arrays = [avals[1 + item[1]] for item in template if is_array_item(item)]
    if any(a.dtype.kind not in "iu" for a in arrays):
        return False
    if any(a.ndim != 0 for a in arrays):
        # one index vector among slices (a window at a traced start): NumPy's layout keeps
        # the vector's axis in place
        if not (len(arrays) == 1 and arrays[0].ndim == 1
                and not any(isinstance(item, int) for item in template)):
            return False
    if node.op is Op.SCATTER:
        mode, updates = node.param["mode"], avals[-1]
        region = indexed_shape(avals[0].shape, template, avals[1:-1])
        if updates.ndim != 0 and updates.shape != region:
            return False
        if mode != "set" and avals[0].dtype == np.bool_:
            return False
    return True


def by_value(step: LibraryStep) -> bool:
    """Whether ``render``'s function takes the 0-d operands after the indexed array
    (positions, a scalar update) as values, and a gather of one element returns it instead
    of taking ``w0``: gathers and scatters do, a concatenation takes arrays."""
    return step.node.op is not Op.CONCATENATE


def updates_by_elements(step: LibraryStep, slot_avals: Sequence[Aval]) -> bool:
    """Whether ``step`` is a scatter whose updates ``render`` may take as the tuple of their
    elements (a loop driver's small value in registers, ``tuple_updates``): it writes one run
    of elements of C-contiguous memory, the positions on leading axes and whole slices
    after, with updates of the region's shape."""
    if step.node.op is not Op.SCATTER:
        return False
    template = step.node.param["index"]
    avals = [slot_avals[s] for s in step.in_slots]
    leading = 0
    while leading < len(template) and _is_position(template[leading], avals):
        leading += 1
    if leading == 0 or any(item != ("slice", None, None, None) for item in template[leading:]):
        return False
    return avals[-1].shape == avals[0].shape[leading:] and avals[-1].ndim > 0


def _is_position(item, avals: Sequence[Aval]) -> bool:
    return isinstance(item, int) or (is_array_item(item) and avals[1 + item[1]].ndim == 0)


def render(step: LibraryStep, slot_avals: Sequence[Aval], in_place: bool,
           tuple_updates: bool = False) -> RenderedKernel:
    """The step as a function ``name(w0, r0, ..., P, start, stop)`` (see ``by_value``);
    ``in_place``: the output is the operand's own buffer, so nothing is copied first;
    ``tuple_updates``: a scatter's updates come as the tuple of their elements in C order
    (``updates_by_elements``)."""
    node = step.node
    avals = [slot_avals[s] for s in step.in_slots]
    out = slot_avals[step.out_slots[0]]
    returns = node.op is Op.GATHER and out.ndim == 0
    if node.op is Op.CONCATENATE:
        body = render_concatenate(avals, node.param["axis"])
    else:
        body = render_body(node.op, node.param["index"], avals, out,
                           node.param.get("mode", "set"), in_place, step.in_range,
                           tuple_updates)
    reads = ", ".join(f"r{k}" for k in range(len(avals)))
    name = f"{node.op.value}_{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    writes = "" if returns else "w0, "
    # an index vector is copied to be normalised: the function allocates
    vectors = _vector_axes(node.param.get("index", ()), avals)
    options = DRIVER_OPTIONS if vectors else LEAF_OPTIONS
    source = f"@njit({options})\ndef {name}({writes}{reads}, P, start, stop):\n{body}\n"
    return RenderedKernel(name, source, np.zeros(1, np.int64))


def _vector_axes(template: tuple, avals: Sequence[Aval]) -> list[int]:
    """The axes indexed by a 1-d index vector."""
    return [axis for axis, item in enumerate(template)
            if is_array_item(item) and avals[1 + item[1]].ndim == 1]


def render_body(op: Op, template: tuple, avals: Sequence[Aval], out: Aval, mode: str,
                in_place: bool, in_range: tuple[int, ...] = (),
                tuple_updates: bool = False) -> str:
    """The function's body; ``in_range``: axes whose 0-d position needs no check;
    ``tuple_updates``: see ``render``."""
    def scalar(k: int) -> str:   # the value of 0-d operand ``k`` (passed by value)
        return f"r{k}"
    lines: list[str] = []
    items: list[str] = []
    for axis, item in enumerate(template):
        if isinstance(item, int):
            items.append(str(item))
        elif item[0] == "slice":
            start, stop, step = ("" if v is None else str(v) for v in item[1:])
            items.append(f"{start}:{stop}" + (f":{step}" if step else ""))
        elif avals[1 + item[1]].ndim == 1:
            i = f"i{axis}"
            lines += [f"    {i} = r{1 + item[1]}.copy()", f"    for j in range({i}.size):",
                      *_normalised(f"{i}[j]", axis, "        ")]
            items.append(i)
        else:
            i = f"i{axis}"
            lines.append(f"    {i} = {scalar(1 + item[1])}")
            if axis not in in_range:
                lines += _normalised(i, axis, "    ")
            items.append(i)
    index = ", ".join(items) + ("," if len(items) == 1 else "")
    element = _element_offset(template, items, avals[0].shape)
    if op is Op.GATHER:
        if out.ndim == 0:
            lines.append(f"    return _M.load(_M.flat(r0), {element})")
        else:
            lines += [f"    s = r0[{index}]", *_copy("w0", "s", out.ndim)]
        return "\n".join(lines)
    updates = len(avals) - 1
    region = len(indexed_shape(avals[0].shape, template, avals[1:-1]))
    if not in_place:
        lines += _copy("w0", "r0", avals[0].ndim)
    ufunc = None if mode == "set" else f"np.{SCATTER_UFUNCS[mode].__name__}"
    vector = _vector_axes(template, avals)
    if vector:
        lines += _scatter_along(vector[0], items, updates, region, avals[-1].ndim == 0,
                                ufunc, scalar)
        return "\n".join(lines)
    if region == 0:
        value = scalar(updates)
        if ufunc:
            value = f"{ufunc}(_M.load(_M.flat(w0), {element}), {value})"
        lines.append(f"    _M.store(_M.flat(w0), {element}, {value})")
    elif tuple_updates:
        lines += _store_elements(items, avals[0].shape, avals[-1].size, f"r{updates}", ufunc)
    else:
        lines.append(f"    d = w0[{index}]")
        if avals[-1].ndim == 0:
            lines.append(f"    v = {scalar(updates)}")
        lines += _copy("d", f"r{updates}", region, ufunc, scalar=avals[-1].ndim == 0)
    return "\n".join(lines)


def _store_elements(items: list[str], shape: tuple[int, ...], size: int, values: str,
                    ufunc: str | None) -> list[str]:
    """Lines storing the ``size`` elements of the tuple ``values`` into the run of
    C-contiguous ``w0`` that the leading positions ``items`` (slices after them) select."""
    positions = [item for item in items if ":" not in item]
    first = _element_offset(tuple(("array", 0) for _ in positions), positions,
                            shape[:len(positions)])
    lines = [f"    b = ({first}) * {size}"]
    for k in range(size):
        value = f"{values}[{k}]"
        if ufunc:
            value = f"{ufunc}(_M.load(_M.flat(w0), b + {k}), {value})"
        lines.append(f"    _M.store(_M.flat(w0), b + {k}, {value})")
    return lines


def _element_offset(template: tuple, items: list[str], shape: tuple[int, ...]) -> str | None:
    """The flat position of the element a full index of positions selects in C-contiguous
    ``r0`` (``None`` for an index that selects more than one element): the positions are
    normalised by then, a static negative one counts from the end here."""
    if len(items) != len(shape) or any(isinstance(item, tuple) and item[0] == "slice"
                                 for item in template):
        return None
    offset = ""
    for axis, item in enumerate(items):
        position = f"({shape[axis]} + {item})" if item.startswith("-") else item
        offset = position if axis == 0 else f"({offset}) * {shape[axis]} + {position}"
    return offset or "0"


def _scatter_along(axis: int, items: list[str], updates: int, region: int, broadcast: bool,
                   ufunc: str | None, scalar) -> list[str]:
    """A scatter through one index vector ``i<axis>`` among slices: for each of its positions
    ``j`` the region at ``i<axis>[j]`` (a view: basic indexing) takes slice ``j`` of the
    updates along the same axis (or the one value of 0-d updates), in order, so a repeated
    position takes every update (``ufunc.at`` semantics)."""
    at_j = ", ".join(f"i{axis}[j]" if k == axis else item for k, item in enumerate(items))
    lines = [f"    for j in range(i{axis}.size):"]
    if broadcast:
        lines.insert(0, f"    v = {scalar(updates)}")
    else:
        picked = ", ".join("j" if k == axis else ":" for k in range(len(items)))
        lines.append(f"        u = r{updates}[{picked}]")
    if region == 1:   # one element per position
        value = "v" if broadcast else "u" if len(items) == 1 else "u[()]"
        item = f"w0[{at_j},]"
        lines.append(f"        {item} = " + (f"{ufunc}({item}, {value})" if ufunc else value))
        return lines
    lines.append(f"        d = w0[{at_j}]")
    lines += ["    " + line for line in _copy("d", "u", region - 1, ufunc, scalar=broadcast)]
    return lines


def _copy(dst: str, src: str, ndim: int, ufunc: str | None = None,
          scalar: bool = False) -> list[str]:
    """Lines setting each element of ``dst`` (``ndim`` dimensions, 0 included) to the same
    element of ``src`` (its shape), or (``scalar``) to the value ``v`` the caller has set, or
    to ``ufunc`` of the two.
    ``ufunc`` and ``scalar`` need ``ndim`` > 0: a scatter into one item is written by the
    caller."""
    if ndim == 0:
        return [f"    _M.flat({dst})[0] = _M.flat({src})[0]"]
    at = ", ".join(f"j{d}" for d in range(ndim))
    lines = []
    for d in range(ndim):
        lines.append(f"{'    ' * (d + 1)}for j{d} in range({dst}.shape[{d}]):")
    value = "v" if scalar else f"{src}[{at}]"
    if ufunc:
        value = f"{ufunc}({dst}[{at}], {value})"
    lines.append(f"{'    ' * (ndim + 1)}{dst}[{at}] = {value}")
    return lines


def render_concatenate(avals: Sequence[Aval], axis: int) -> str:
    """Each operand copied into its block of the output along ``axis``."""
    lines, start = [], 0
    for k, aval in enumerate(avals):
        stop = start + aval.shape[axis]
        index = [":"] * aval.ndim
        index[axis] = f"{start}:{stop}"
        lines.append(f"    d = w0[{', '.join(index)}]")
        lines += _copy("d", f"r{k}", aval.ndim)
        start = stop
    return "\n".join(lines)


def _normalised(position: str, axis: int, indent: str) -> list[str]:
    """Lines checking ``position`` against axis ``axis`` of ``r0`` (NumPy's ``IndexError``)
    and counting a negative one from the end."""
    size = f"r0.shape[{axis}]"
    return [f"{indent}if _M.outside({position}, {size}):",
            f"{indent}    _M.out_of_bounds({position}, {axis}, {size})",
            f"{indent}{position} = _M.wrapped({position}, {size})"]
