"""The math functions generated CUDA kernels call as ``_m.<name>`` on numba-cuda's simulator,
which runs kernels as Python: NumPy's scalar functions, since the simulator has no libdevice
and Python's ``math`` raises on domain errors where NumPy and the GPU give NaN or inf. The
same names as ``gpumath``."""
import math

import numpy as np

from ...core import special as _special

exp, log, log1p, log2, log10, expm1 = np.exp, np.log, np.log1p, np.log2, np.log10, np.expm1
sqrt, sin, cos, tan, tanh, sinh, cosh = np.sqrt, np.sin, np.cos, np.tan, np.tanh, np.sinh, \
    np.cosh
asin, acos, atan, atan2, hypot, pow = np.arcsin, np.arccos, np.arctan, np.arctan2, np.hypot, \
    np.power
floor, copysign = np.floor, np.copysign
asinh, acosh, atanh = np.arcsinh, np.arccosh, np.arctanh
nextafter = nextafterf = np.nextafter
cbrt = cbrtf = np.cbrt
erf, erfc = math.erf, math.erfc
gammaln, digamma, incomplete_gamma = _special.gammaln, _special.digamma, _special.incomplete_gamma
gcd, lcm, fmod, ldexp = _special.gcd, _special.lcm, np.fmod, np.ldexp
