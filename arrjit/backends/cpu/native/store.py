"""Writing a native entry: a freshly compiled numba overload's machine code plus the CPython
wrapper of ``abi``, saved next to its disk-cache entry for processes that start later.

An overload is stored only when its code needs nothing of numba's at run time: every
external symbol referenced outside numba's own CPython wrapper (which the native entry never
calls) must be an LLVM intrinsic or a symbol this process exports (libm, libc, Python), or
one of ``NEVER_CALLED``. A kernel that allocates through numba's runtime, for one, keeps
loading through numba.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import pickle
import re
import tempfile
from pathlib import Path
from typing import Any, Sequence

from . import abi
from .objects import read_symbols

FORMAT = 2

# numba's runtime functions that code called through the native wrapper references but never
# reaches. ``NRT_MemInfo_call_dtor`` runs when a decref drops a meminfo's count to zero; the
# wrapper passes every array with a NULL meminfo (a decref of NULL returns at once), and code
# that could make a meminfo of its own references numba's allocator, so is not stored. (A
# worker calling a kernel with its arrays references it through the decrefs of that call.)
NEVER_CALLED = frozenset({"NRT_MemInfo_call_dtor"})
_DEFINE = re.compile(r'^define [^@]*@"?([^"(]+)"?\(')
_DECLARE = re.compile(r'^declare [^@]*@"?([^"(]+)"?\(|^@"?([^"\s]+)"? = external ')
_REFERENCE = re.compile(r'@"?([\w.$]+)"?')


def returns_of(overload: Any) -> str:
    """The name of numba ``overload``'s return type, as ``abi.RETURNS`` spells it: a literal
    (a function that returns ``False`` on every path) by the type it is a value of, which
    numba passes in the same form."""
    from numba.core import types

    return str(types.unliteral(overload.signature.return_type))


def store(path: Path, overload: Any, args: Sequence[Any], nogil: bool) -> bool:
    """Write the native entry of numba ``overload`` (compiled for ``args``; ``nogil`` as its
    dispatcher was) to ``path``. Returns False, writing nothing, when the overload has no
    native form."""
    kinds = abi.describe(args)
    returns = returns_of(overload)
    if kinds is None or returns not in abi.RETURNS or not flattening_matches(overload, kinds):
        return False
    symbol = overload.fndesc.mangled_name
    unreached = _externals_never_called(overload.library.get_llvm_str(), symbol)
    if unreached is None:
        return False
    kernel_object = _compiled_object(overload.library)
    wrapper_object = compile_wrapper(abi.render_wrapper(symbol, kinds, returns, nogil))
    objects = [kernel_object, wrapper_object]
    if any(read_symbols(o) is None for o in objects):   # the loader reads ELF only
        return False
    record = {"format": FORMAT, "objects": objects, "digest": objects_digest(objects),
              "unreached": sorted(unreached), "name": overload.fndesc.qualname,
              "symbol": symbol}
    _write_atomically(path, pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
    return True


def keep_in_numba_cache(path: Path) -> None:
    """Mark ``path``'s entry as one numba's cache keeps (its code needs numba at run time):
    ``load.load`` returns None for it, and the entry loads through numba."""
    record = {"format": FORMAT, "objects": [], "digest": objects_digest([]),
              "numba_cache": True}
    _write_atomically(path, pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))


def flattening_matches(overload: Any, kinds: Sequence[abi.ArgKind]) -> bool:
    """numba flattens the arguments the way ``abi.flat_kinds`` assumes (checked per overload,
    so a data-model change in numba disables the native entry instead of miscalling)."""
    packer = overload.target_context.get_arg_packer(overload.fndesc.argtypes)
    actual = ["ptr" if str(t).endswith("*") or str(t) == "ptr" else str(t)
              for t in packer.argument_types]
    return actual == abi.flat_kinds(kinds)


def _compiled_object(library: Any) -> bytes:
    """The library's machine code as numba's cache keeps it (without the bitcode numba's
    serialisation also builds, which a native entry does not use)."""
    get = getattr(library, "_get_compiled_object", None)
    if get is not None:
        return bytes(get())
    return bytes(library.serialize_using_object_code()[2][0])


def objects_digest(objects: Sequence[bytes]) -> str:
    """A checksum of the stored objects (a damaged object must not reach LLVM's linker)."""
    h = hashlib.sha256()
    for data in objects:
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _externals_never_called(ir: str, symbol: str) -> set[str] | None:
    """The external symbols that a call of ``symbol`` never calls: those only numba's CPython
    wrapper and its helpers reference, and the ``NEVER_CALLED`` ones (the loader binds any it
    cannot resolve to ``abort``). None when code reachable from ``symbol`` needs a symbol this
    process does not export, or ``ir`` does not define ``symbol`` (a library numba loaded
    from its own cache keeps no IR to check)."""
    declared: set[str] = set()
    refs_of: dict[str, set[str]] = {}   # defined function -> symbols it references
    current = None
    for line in ir.splitlines():
        declaration = _DECLARE.match(line)
        if declaration:
            declared.add(declaration.group(1) or declaration.group(2))
            continue
        definition = _DEFINE.match(line)
        if definition:
            current = definition.group(1)
            refs_of[current] = set()
        if current is not None:
            refs_of[current].update(_REFERENCE.findall(line))
            if line.startswith("}"):
                current = None
    if symbol not in refs_of:
        return None
    reachable, todo = {symbol}, [symbol]
    while todo:
        for name in refs_of[todo.pop()]:
            if name in refs_of and name not in reachable:
                reachable.add(name)
                todo.append(name)
    needed = (set().union(*(refs_of[f] for f in reachable)) & declared) - NEVER_CALLED
    process = ctypes.CDLL(None)
    if any(not name.startswith("llvm.") and not hasattr(process, name) for name in needed):
        return None
    return declared - needed


_target_machine = None


def target_machine() -> Any:
    """The host target machine numba's JIT uses (same CPU, features and code model), at
    LLVM's fastest code generation: a wrapper is straight-line loads and one call (1.3 ms
    to emit instead of 3.9 ms at -O2)."""
    global _target_machine
    if _target_machine is None:
        import llvmlite.binding as ll

        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        _target_machine = ll.Target.from_default_triple().create_target_machine(
            cpu=ll.get_host_cpu_name(), features=ll.get_host_cpu_features().flatten(),
            opt=0, reloc="default", codemodel="jitdefault")
    return _target_machine


def compile_wrapper(ir: str) -> bytes:
    import llvmlite.binding as ll

    machine = target_machine()
    module = ll.parse_assembly(ir)
    module.verify()
    module.triple = machine.triple
    return bytes(machine.emit_object(module))


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
