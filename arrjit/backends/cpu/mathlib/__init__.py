"""Vectorisable math functions for generated CPU kernels.

numba's ``np.exp``/``np.log``/``np.tanh``... are calls to the scalar C library, and a loop that
calls a function LLVM has no vector variant for is not vectorised at all. The functions here are
branch-free (conditions become selects), call nothing but each other (LLVM inlines them into
the kernel loop) and reinterpret float bits with the ``bits``/``from_bits`` intrinsics, so a
fused loop using them vectorises.

Each ``<name>64`` works in float64 and each ``<name>32`` in float32. Methods follow FreeBSD's
msun/musl (argument reduction by ``k*ln2`` or ``k*pi/2`` in two or three parts, then a
minimax or Taylor polynomial on the reduced argument); the float32 forms of the costlier
functions evaluate the float64 form and round once.

Accuracy, measured against NumPy by ``tests/test_mathlib.py`` (dense uniform and log-uniform
sampling over each function's domain plus the edge regions; the per-function bounds are in its
``UNARY`` table): every function is within 3 ULP of NumPy in float32 and float64 (exp, log,
log1p, sinh, arctan, sin, cos: 1-2 ULP), and special values (NaN, +-inf, +-0, subnormals,
overflow and underflow thresholds, out-of-domain arguments) are bit-identical to NumPy's.

``sin``/``cos``/``tan`` reduce ``|x| < 2**20 * pi/2`` by three-part Cody-Waite and larger
arguments by Payne-Hanek with a table of 2/pi chunks indexed by the exponent (a gather), in
double-double arithmetic with ``fma``. ``power`` computes ``exp(y * log|x|)`` with the
logarithm in double-double (to 2**-61), so the exponent keeps its precision near overflow
(within 1 ULP of NumPy); float32 rounds the float64 result once. The larger functions are
``forceinline=True`` (LLVM's ``alwaysinline``): LLVM's inliner would otherwise leave them as
calls, and a call keeps the loop scalar. numba's own ``inline="always"`` inlines its IR
instead, so every kernel calling them typed and lowered their bodies again: a kernel with
``sin`` compiled in 330 ms, 68 ms now (``exp``: 62 ms).

>>> import numpy as np
>>> bool(abs(exp64(1.0) - np.exp(1.0)) <= np.spacing(np.exp(1.0)))   # within 1 ULP
True
"""
from __future__ import annotations

from .bits import *  # noqa: F401,F403
from .float64 import *  # noqa: F401,F403
from .trig64 import *  # noqa: F401,F403
from .power64 import *  # noqa: F401,F403
from .float32 import *  # noqa: F401,F403
from .complex import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .dots import *  # noqa: F401,F403
