"""``arrjit.scipy.special``.

>>> import numpy as np, arrjit
>>> from arrjit.scipy.special import logsumexp
>>> float(arrjit.jit(logsumexp)(np.log(np.array([1.0, 2.0, 3.0]))))
1.791759469228055
"""
from ..numpy.reductions import logsumexp  # noqa: F401
