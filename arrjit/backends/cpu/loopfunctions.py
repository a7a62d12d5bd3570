"""The functions of native loops (``LoopFunction``), laid out by ``backends/cpu/loops.py``
with ``LoopArguments`` and ``LoopLayout``: a loop's condition and body as statements of one
numba function, their kernels inlined (``inlining``) or kept in registers (``registers``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ...core.dtypes import Aval
from ...runtime import pool
from . import registers
from .codegen import DRIVER_OPTIONS, NJIT_OPTIONS, RenderedKernel
from .drivers import render_functions
from .inlining import NotInlinable, inline_body
from .steps import KernelCall
from .unused import without_unused_loads


def render_loop_lines(entry: list[str], cond: list[str], body: list[str], predicate: str,
                      carries: list[tuple[str, str, bool]], exit: list[str]) -> list[str]:
    """The body of a function that runs ``while predicate: body`` natively after ``entry``:
    the condition's statements set the local ``predicate``, the body's read each carry
    ``(now, next, scalar)`` from ``now`` and write it to ``next``, then ``now`` takes the next
    value (a swap of the two buffers, or for a ``scalar`` carry of its local ``<name>_s``; a
    carry updated in place is not listed); ``exit`` runs after the loop. The local ``odd``
    tells whether the buffers swapped an odd number of times (``LoopFunction.definition``
    adds the return)."""
    lines = [f"    {statement}" for statement in entry]
    lines.append("    odd = False")
    lines.append("    while True:")
    lines += [f"        {statement}" for statement in cond]
    lines.append(f"        if not {predicate}:")
    lines.append("            break")
    lines += [f"        {statement}" for statement in body]
    for now, nxt, scalar in carries:
        swap = f"{now}_s = {nxt}_s" if scalar else f"{now}, {nxt} = {nxt}, {now}"
        lines.append(f"        {swap}")
    if any(not scalar for _, _, scalar in carries):
        lines.append("        odd = not odd")
    lines += [f"    {statement}" for statement in exit]
    return lines


@dataclass
class LoopArguments:
    """What a loop function takes after its carries and invariants, collected while its
    statements are laid out: constants ``c<k>``, scratch buffers ``t<k>``, the kernels'
    parameter vectors ``P<k>`` and, last, the extents ``E``; and the functions it calls."""

    constants: list[np.ndarray] = field(default_factory=list)
    temps: list[tuple[tuple[int, ...], np.dtype]] = field(default_factory=list)
    params: list[np.ndarray] = field(default_factory=list)
    extents: list[int] = field(default_factory=list)
    functions: dict[str, str] = field(default_factory=dict)
    nested: int = 0           # nested loops laid out so far (their results' names)
    # kernels inlined in their register form (``registers``), in order
    register_kernels: list[registers.RegisterCode] = field(default_factory=list)
    array_calls: int = 0      # kernels and library steps called on arrays

    def constant(self, value: np.ndarray) -> str:
        self.constants.append(value)
        return f"c{len(self.constants) - 1}"

    def temp(self, shape: tuple[int, ...], dtype: np.dtype) -> str:
        self.temps.append((shape, dtype))
        return f"t{len(self.temps) - 1}"

    def param(self, vector: np.ndarray) -> str:
        self.params.append(vector)
        return f"P{len(self.params) - 1}"

    def call(self, kernel: RenderedKernel, args: tuple[str, ...], extent: int) -> str:
        """The expression calling ``kernel`` on the driver variables ``args`` (its value is
        what the function returns)."""
        return self._called(kernel, self._arguments(kernel, args, extent))

    def run(self, kernel: RenderedKernel, args: tuple[str, ...], extent: int) -> list[str]:
        """The statements running ``kernel`` on the driver variables ``args``: its body,
        inlined (``inlining``), or else a call."""
        prefix = f"a{self.array_calls}_"
        arguments = self._arguments(kernel, args, extent)
        try:
            return inline_body(kernel.source, kernel.name, prefix, arguments)
        except NotInlinable:
            return [self._called(kernel, arguments)]

    def _arguments(self, kernel: RenderedKernel, args: tuple[str, ...], extent: int
                   ) -> list[str]:
        """A kernel's arguments after ``args``: its parameter vector, 0 and its extent."""
        self.array_calls += 1
        self.extents.append(extent)
        return [*args, self.param(kernel.params), "0", f"E[{len(self.extents) - 1}]"]

    def _called(self, kernel: RenderedKernel, arguments: list[str]) -> str:
        self.functions[kernel.name] = kernel.inlined().source
        return f"{kernel.name}({', '.join(arguments)})"

    def names(self) -> list[str]:
        return ([f"c{k}" for k in range(len(self.constants))] +
                [f"t{k}" for k in range(len(self.temps))] +
                [f"P{k}" for k in range(len(self.params))])


@dataclass
class LoopFunction:
    """One loop as a numba function: ``<name>(now..., nxt..., invariants..., c..., t...,
    P..., E)`` runs it on the carries in ``now`` (``nxt`` is their second buffer). A nested
    loop's returns the final carries; the top-level loop's, the module's ``driver``, returns
    whether the carries in ``swapped`` end in their second buffer (``final_carries``): a bool,
    which arrjit's wrapper returns without numba's (a tuple of arrays needs numba's)."""

    carry_avals: list[Aval]
    invariant_avals: list[Aval]   # the condition's loop-invariant inputs, then the body's
    arguments: list[str]          # its parameters before E
    lines: list[str]              # its body, before the return
    extra: LoopArguments
    kept: frozenset[int]          # carries updated in their own buffer (never swapped)
    swapped: frozenset[int]       # carries whose two buffers swap places every iteration

    def definition(self, name: str, options: str = DRIVER_OPTIONS,
                   returns: str | None = None) -> str:
        """The function ``name``, returning the final carries or else ``returns``."""
        if returns is None:
            returns = "(" + "".join(f"now{k}, " for k in range(len(self.carry_avals))) + ")"
        function = without_unused_loads(
            f"@njit({options})\ndef loop_function({', '.join(self.arguments + ['E'])}):\n"
            + "\n".join(self.lines) + f"\n    return {returns}\n")
        return function.replace("def loop_function(", f"def {name}(", 1)

    @cached_property
    def source(self) -> str:
        """The module of the top-level loop: its ``driver``, called from Python, and the
        functions it calls."""
        driver = self.definition("driver", NJIT_OPTIONS, returns="odd")
        return render_functions({**self.extra.functions, "driver": driver})

    @cached_property
    def extents(self) -> np.ndarray:
        return np.asarray(self.extra.extents, np.int64)

    def scratch(self) -> list[np.ndarray]:
        """Buffers a run uses and no result holds, which may serve one run after another: the
        second buffers of the carries updated in their own buffer (``kept``: never touched),
        then the temporaries."""
        return ([pool.aligned_empty(a.shape, a.dtype) for k, a in enumerate(self.carry_avals)
                 if k in self.kept] +
                [pool.aligned_empty(shape, dtype) for shape, dtype in self.extra.temps])

    def values(self, operands, n_carry: int, scratch: list[np.ndarray]) -> list:
        """The driver's arguments for one run on ``operands`` (carry, then invariants), with
        ``scratch`` buffers (``scratch()``) that no other run uses meanwhile."""
        carry = [pool.line_copy(x) for x in operands[:n_carry]]      # copies: the loop swaps
        return self._arguments(carry, list(operands[n_carry:]), scratch)

    def final_carries(self, values: list, odd: bool) -> tuple:
        """The final carries of a run of the driver on ``values`` (``values()``) that
        returned ``odd``."""
        n = len(self.carry_avals)
        return tuple(values[n + k] if odd and k in self.swapped else values[k]
                     for k in range(n))

    def example_values(self) -> list:
        def empty(a: Aval) -> np.ndarray:
            return np.empty((0,) * len(a.shape), a.dtype)
        return self._arguments([empty(a) for a in self.carry_avals],
                               [empty(a) for a in self.invariant_avals], self.scratch())

    def _arguments(self, carry: list, invariant: list, scratch: list[np.ndarray]) -> list:
        spare = iter(scratch)
        second = [next(spare) if k in self.kept else pool.line_empty(x.shape, x.dtype)
                  for k, x in enumerate(carry)]
        return [*carry, *second, *invariant, *self.extra.constants, *spare, *self.extra.params,
                self.extents]

    def call_nested(self, outer: "LoopLayout", carry: list[str], invariants: list[str],
                    results: list[str], handed: set[int]) -> list[str]:
        """Statements of an enclosing loop function (laid out by ``outer``) that run this loop
        on its variables ``carry`` and ``invariants`` and bind the final carries to
        ``results``: the carries are copied into two scratch buffers of the enclosing function
        (the loop swaps them), except the carries in ``handed``, whose buffer the enclosing
        function hands over (this loop updates them in place, ``kept``); this loop's own
        arguments become the enclosing function's."""
        definition = self.definition("{name}")
        name = "loop_" + hashlib.sha256(definition.encode()).hexdigest()[:16]
        extra = outer.extra
        extra.functions.update(self.extra.functions)
        extra.functions[name] = self.definition(name)
        now = [x if k in handed else extra.temp(a.shape, a.dtype)
               for k, (x, a) in enumerate(zip(carry, self.carry_avals))]
        nxt = [x if k in handed else extra.temp(a.shape, a.dtype)   # unused when handed
               for k, (x, a) in enumerate(zip(carry, self.carry_avals))]
        own = ([extra.constant(c) for c in self.extra.constants] +
               [extra.temp(shape, dtype) for shape, dtype in self.extra.temps] +
               [extra.param(p) for p in self.extra.params] + [extra.constant(self.extents)])
        lines = [outer.store(x, buf) if x in outer.registered else
                 f"_M.copy_elements({buf}, {x})"
                 for k, (buf, x) in enumerate(zip(now, carry)) if k not in handed]
        lines.append(f"{', '.join(results)}, = {name}({', '.join(now + nxt + invariants + own)})")
        return lines


class LoopLayout:
    """The statements of one loop function, laid out from its condition and body plans.

    A value in registers (``registers.in_registers``: a counter, a scalar carry, the state
    vector of an ODE) lives in a local variable ``<name>_s``, a scalar for a 0-d value, else
    the tuple of its elements: kernels writing such values only are called in their register
    form; where an array is needed (other kernels, library steps, nested loops) the value is
    stored into its buffer ``<name>`` before the call and read back after a call that writes
    it."""

    def __init__(self, extra: LoopArguments):
        self.extra = extra
        self.registered: dict[str, Aval] = {}   # names whose value is the local ``<name>_s``
        self.inputs: set[str] = set()    # the loop's invariants and constants: read only
        self.entry: list[str] = []       # before the loop: arguments in registers into locals
        self.known: dict[str, np.ndarray] = {}   # constants by name
        # names in registers whose local is assigned above the point being laid out: the
        # first store of a value filled region by region (``regions.unfilled_roots``) has
        # no local to store into its buffer first
        self.defined: set[str] = set()

    @property
    def scalar(self) -> set[str]:
        """The names in registers whose value is 0-d (a scalar local)."""
        return {n for n, a in self.registered.items() if a.ndim == 0}

    def argument(self, name: str, aval: Aval) -> str:
        if registers.in_registers(aval):
            self.registered[name] = aval
            self.entry.append(self.load(name, name))
        return name

    def constant(self, value: np.ndarray, aval: Aval) -> str:
        """An argument holding the constant ``value``."""
        name = self.argument(self.extra.constant(value), aval)
        self.inputs.add(name)
        self.known[name] = value
        return name

    def value(self, name: str, aval: Aval) -> str:
        if registers.in_registers(aval):
            self.registered[name] = aval
        return name

    def load(self, name: str, array: str) -> str:
        """The statement setting ``name``'s local from the elements of ``array``."""
        self.defined.add(name)
        size = self.registered[name].size
        if self.registered[name].ndim == 0:
            return f"{name}_s = _M.flat({array})[0]"
        return f"{name}_s = (" + ", ".join(f"_M.flat({array})[{k}]" for k in range(size)) + ",)"

    def store(self, name: str, array: str) -> str:
        """The statement storing ``name``'s local into the elements of ``array``."""
        if self.registered[name].ndim == 0:
            return f"_M.flat({array})[0] = {name}_s"
        return f"_M.store_values({array}, {name}_s)"

    def to_arrays(self, names) -> list[str]:
        """Store values in registers into their buffers (inputs never change: already there)."""
        return [self.store(n, n) for n in dict.fromkeys(names)
                if n in self.registered and n not in self.inputs]

    def from_arrays(self, names) -> list[str]:
        return [self.load(n, n) for n in dict.fromkeys(names) if n in self.registered]

    def kernel(self, call: KernelCall, names: dict[int, str]) -> list[str]:
        """The statements calling ``call``'s kernel on the variables of its slots."""
        args = tuple(names[s] for s in call.slots)
        n_writes = len(call.kernel.writes)
        writes, reads = args[:n_writes], args[n_writes:]
        if registers.register_kernel(call.kernel) and all(n in self.registered for n in writes):
            known = {k: self.known[n] for k, n in enumerate(reads) if n in self.known}
            code = registers.register_code(call.kernel, known)
            params = ""
            if len(code.params):
                params = self.extra.param(code.params)
                # the values in registers: read from the vector, every iteration would load
                # them again after each store (numba tells LLVM nothing of aliasing)
                values = "".join(f"{params}[{k}], " for k in range(len(code.params)))
                self.entry.append(f"{params}t = ({values})")
                params += "t"
            self.extra.register_kernels.append(code)
            self.defined.update(writes)
            results = "".join(f"{n}_s, " for n in writes)
            operands = [f"{n}_s" if n in self.registered else n for n in reads]
            return code.inlined(f"k{len(self.extra.register_kernels)}_", operands, params,
                                results)
        # a write the kernel updates only in part (a region store) needs its elements first
        partial = [n for k, n in enumerate(writes)
                   if n in self.registered and n in self.defined
                   and not registers.writes_every_element(call.kernel, k)]
        return [*self.to_arrays([*reads, *partial]),
                *self.extra.run(call.rendered, args, call.extent),
                *self.from_arrays(writes)]
