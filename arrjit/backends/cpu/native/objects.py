"""Symbols of a relocatable object file (ELF64, little-endian: what LLVM emits for the x86-64
and aarch64 Linux hosts numba targets), read from its symbol table.

A native entry loads only when every symbol its objects leave undefined can be resolved in
this process; the loader needs the list before handing the objects to LLVM, whose linker
aborts the process on a symbol it cannot find.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

_SYM = struct.Struct("<IBBHQQ")        # Elf64_Sym: name, info, other, shndx, value, size
_SHDR = struct.Struct("<IIQQQQIIQQ")   # Elf64_Shdr
_SHT_SYMTAB = 2
_STB_LOCAL = 0


@dataclass(frozen=True)
class ObjectSymbols:
    defined: frozenset[str]     # global or weak symbols the object defines
    undefined: frozenset[str]   # symbols it needs from elsewhere


def read_symbols(data: bytes) -> ObjectSymbols | None:
    """The defined and undefined global symbols of the ELF64 object ``data``; None for any
    other format (the native loader is then not used)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    headers = [_SHDR.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
    defined: set[str] = set()
    undefined: set[str] = set()
    for _, kind, _, _, offset, size, link, _, _, entsize in headers:
        if kind != _SHT_SYMTAB:
            continue
        strings_at = headers[link][4]
        for at in range(offset + entsize, offset + size, entsize):   # entry 0 is null
            name_at, info, _, shndx, _, _ = _SYM.unpack_from(data, at)
            if info >> 4 == _STB_LOCAL or not name_at:
                continue
            end = data.index(b"\0", strings_at + name_at)
            name = data[strings_at + name_at:end].decode()
            (undefined if shndx == 0 else defined).add(name)
    return ObjectSymbols(frozenset(defined), frozenset(undefined - defined))
