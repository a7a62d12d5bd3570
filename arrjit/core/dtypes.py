"""Supported dtypes and NumPy 2 promotion (NEP 50: Python scalars are weak).

Promotion is delegated to NumPy itself (``ufunc.resolve_dtypes``), so arrjit's result dtypes
are NumPy's by construction rather than by a hand-copied table.

>>> import numpy as np
>>> resolve_ufunc(np.multiply, [Aval((3,), np.dtype("float32")), WEAK_FLOAT])
((dtype('float32'), dtype('float32')), dtype('float32'))
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedDtypeError

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64"))
float32, float64 = np.dtype("float32"), np.dtype("float64")
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

SUPPORTED: tuple[np.dtype, ...] = (bool_, int8, int16, int32, int64,
                                   uint8, uint16, uint32, uint64, float32, float64,
                                   complex64, complex128)
_SUPPORTED_SET = frozenset(SUPPORTED)


@dataclass(frozen=True)
class Aval:
    """The abstract value of an array: what tracing knows (shape, dtype, weak-typedness).

    ``weak`` marks values that came from Python scalars; they adapt to the other operand's
    dtype exactly as a Python scalar does in NumPy 2.
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    weak: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __str__(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{self.dtype.name}[{dims}]"


WEAK_FLOAT = Aval((), float64, weak=True)
WEAK_INT = Aval((), int64, weak=True)
WEAK_COMPLEX = Aval((), complex128, weak=True)

# The Python type (for ``resolve_dtypes``) and a value (for ``result_type``) standing for a
# weak scalar of each default dtype.
_WEAK_TYPES = {int64: int, float64: float, complex128: complex}
_WEAK_VALUES = {int64: 0, float64: 0.0, complex128: 0j}


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the real and imaginary parts: float32 for complex64, float64 for
    complex128; real dtypes are their own."""
    parts: dict[np.dtype, np.dtype] = {complex64: float32, complex128: float64}
    return parts.get(np.dtype(dtype), np.dtype(dtype))


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are ``dtype`` (float32 -> complex64, float64 ->
    complex128)."""
    wholes: dict[np.dtype, np.dtype] = {float32: complex64, float64: complex128}
    return wholes[np.dtype(dtype)]


def check_supported(dtype, what: str = "array") -> np.dtype:
    """Return ``np.dtype(dtype)`` or raise a clear error for dtypes arrjit does not compile."""
    dt = np.dtype(dtype)
    if dt not in _SUPPORTED_SET:
        names = ", ".join(d.name for d in SUPPORTED)
        if dt.kind == "c":
            fix = "convert first, e.g. x.astype(numpy.complex128)"
        else:
            fix = f"convert first, e.g. x.astype(numpy.{'float64' if dt.kind in 'fV' else 'int64'})"
        raise UnsupportedDtypeError(
            f"unsupported dtype {dt.name} for {what}: arrjit compiles {names}; {fix}."
        )
    return dt


def _resolver_operand(aval: Aval):
    """What ``resolve_dtypes`` takes for one operand: the Python type marks a weak scalar."""
    if aval.weak:
        return _WEAK_TYPES[aval.dtype]
    return aval.dtype


def resolve_ufunc(ufunc: np.ufunc, avals) -> tuple[tuple[np.dtype, ...], np.dtype]:
    """NumPy's loop: (input dtypes after casting, output dtype) for ``ufunc(*avals)``.

    Raises NumPy's own TypeError for combinations NumPy rejects (``bool - bool``), and
    ``UnsupportedDtypeError`` when NumPy's answer is a dtype arrjit does not compile
    (``exp`` of an int8 array is float16 in NumPy).
    """
    # Only Python scalars: resolve with their default dtypes (the result stays weak).
    all_weak = all(a.weak for a in avals)
    operands = tuple(a.dtype if all_weak else _resolver_operand(a) for a in avals)
    operands = operands + (None,) * ufunc.nout
    resolved = ufunc.resolve_dtypes(operands)
    inputs, output = resolved[: ufunc.nin], resolved[ufunc.nin]
    if output not in _SUPPORTED_SET:
        given = ", ".join(str(a) for a in avals)
        raise UnsupportedDtypeError(
            f"numpy.{ufunc.__name__}({given}) has dtype {output.name} in NumPy, which arrjit "
            f"does not compile. Cast the input first, e.g. x.astype(numpy.float32)."
        )
    return tuple(inputs), output


def result_type(*avals: Aval) -> tuple[np.dtype, bool]:
    """NEP 50 promotion of several operands (as in ``where`` and ``concatenate``)."""
    # Python values (not types) make NumPy apply NEP 50's weak-scalar rule.
    operands = [(_WEAK_VALUES[a.dtype] if a.weak else a.dtype) for a in avals]
    dt = np.result_type(*operands)
    return check_supported(dt), all(a.weak for a in avals)


def aval_of_python_scalar(value) -> Aval:
    """The weak aval of a Python bool, int, float or complex."""
    if isinstance(value, bool):  # NumPy treats Python bools as strong np.bool_
        return Aval((), bool_)
    if isinstance(value, int):
        return WEAK_INT
    if isinstance(value, float):
        return WEAK_FLOAT
    if isinstance(value, complex):
        return WEAK_COMPLEX
    raise UnsupportedDtypeError(f"unsupported Python scalar {value!r} of type {type(value).__name__}")
