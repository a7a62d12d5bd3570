"""The math functions generated CUDA kernels call as ``_m.<name>`` on a GPU: numba-cuda's
``math`` (libdevice, full precision, float32 functions for float32 operands) and libdevice
itself where ``math`` has no entry; the special functions of ``core.special`` as device
functions that numba inlines into the kernel (``inline="always"``: the kernel calls no
function, so it compiles to PTX without a driver). ``simmath`` has the same names for the
simulator."""
import math

from numba import cuda
from numba.cuda import libdevice

from ...core import special as _special

exp, log, log1p, log2, log10, expm1 = math.exp, math.log, math.log1p, math.log2, math.log10, \
    math.expm1
sqrt, sin, cos, tan, tanh, sinh, cosh = math.sqrt, math.sin, math.cos, math.tan, math.tanh, \
    math.sinh, math.cosh
asin, acos, atan, atan2, hypot, pow = math.asin, math.acos, math.atan, math.atan2, math.hypot, \
    math.pow
floor, copysign = math.floor, math.copysign
asinh, acosh, atanh = math.asinh, math.acosh, math.atanh
nextafter, nextafterf = libdevice.nextafter, libdevice.nextafterf
cbrt, cbrtf = libdevice.cbrt, libdevice.cbrtf
erf, erfc, gammaln = math.erf, math.erfc, math.lgamma
digamma = cuda.jit(device=True, inline="always")(_special.digamma)
incomplete_gamma = cuda.jit(device=True, inline="always")(_special.incomplete_gamma)
gcd = cuda.jit(device=True, inline="always")(_special.gcd)
lcm = cuda.jit(device=True, inline="always")(_special.lcm)
fmod, ldexp = math.fmod, math.ldexp
