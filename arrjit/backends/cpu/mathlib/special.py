"""The special functions (``core.special``'s scalar algorithms) compiled for CPU kernels:
``_M.erf(x)``, ``_M.digamma(x)``, ``_M.incomplete_gamma(a, x, upper)``... in float64
(kernels cast float32 operands up and the result back, as the reference interpreter
computes them)."""
from __future__ import annotations

from numba import njit

from ....core import special as _special

_OPTIONS = dict(nogil=True, cache=True, error_model="numpy")

erf = njit(**_OPTIONS)(_special.erf)
erfc = njit(**_OPTIONS)(_special.erfc)
gammaln = njit(**_OPTIONS)(_special.gammaln)
digamma = njit(**_OPTIONS)(_special.digamma)
incomplete_gamma = njit(**_OPTIONS)(_special.incomplete_gamma)
gcd = njit(**_OPTIONS)(_special.gcd)
lcm = njit(**_OPTIONS)(_special.lcm)

__all__ = ["erf", "erfc", "gammaln", "digamma", "incomplete_gamma", "gcd", "lcm"]
