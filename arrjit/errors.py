"""Error and warning types raised by arrjit.

Every message says what happened, where (argument name, shape, dtype), why, and the fix.
"""
from __future__ import annotations


class ArrjitError(Exception):
    """Base class of arrjit's own errors."""


class UnsupportedDtypeError(TypeError, ArrjitError):
    """A dtype arrjit does not compile (float16, complex, object, ...)."""


class TracerError(TypeError, ArrjitError):
    """Base class: a traced value was used where a concrete Python value is needed."""


class ConcretizationTypeError(TracerError):
    """A concrete value was required from a traced array (``float(x)``, ``x.item()``)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool(x)`` on a traced array, usually through ``if`` or ``while``."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int(x)`` or ``operator.index(x)`` on a traced array (list index, ``range``)."""


class TracerArrayConversionError(TracerError):
    """``numpy.asarray(x)`` on a traced array."""


class UnexpectedTracerError(TracerError):
    """A traced value escaped the function being traced and was used afterwards."""


class NonHashableStaticArgError(ValueError, ArrjitError):
    """A static argument cannot be hashed, so it cannot key the compile cache."""


class DonationWarning(UserWarning):
    """A donated buffer could not be reused; the result is still correct."""


class DeviceUnavailableError(RuntimeError, ArrjitError):
    """A device was asked for (``jit(device=...)``, ``device_put``) that this process cannot
    use; the message says how to get it."""
