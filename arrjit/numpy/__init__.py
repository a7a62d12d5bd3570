"""``arrjit.numpy``: a jnp-like namespace with NumPy 2 semantics.

Inside ``arrjit.jit`` the functions record primitives on traced arrays; outside they run
eagerly and return what NumPy returns (``numpy.ndarray`` results). The functions live in
topic modules (``base``: creation, elementwise; ``views``: shape manipulation;
``reductions``, ``contractions``, ``shapes``, ``indexing``, ``misc``, ``arrayapi``: the array API
standard's spellings); this package re-exports them. Traced arrays have ``__array_namespace__`` (this namespace), so
code written against ``array_api_compat.array_namespace(x)`` runs under jit.

>>> import arrjit, arrjit.numpy as anp
>>> f = arrjit.jit(lambda x: anp.sqrt(x) * 2 + 1)
>>> f(anp.array([1.0, 4.0]))
array([3., 5.])
>>> anp.exp(anp.zeros(2, dtype=anp.float32)).dtype
dtype('float32')
"""
from ..core.trace import install_array_methods as _install_array_methods
from .base import *  # noqa: F401,F403
from .indexing import IndexUpdateHelper as _IndexUpdateHelper  # noqa: F401  (x.at[...])
from .indexing import getitem as _getitem  # noqa: F401  (the Tracer's [] operator)
from .contractions import dot, einsum, inner, matmul, outer, tensordot, vdot  # noqa: F401
from .misc import (allclose, array_equal, cross, histogram, interp, isclose,  # noqa: F401
                   nan_to_num, trace, unique)
from .reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum, logsumexp, max, mean,
    min, nanmax, nanmean, nanmin, nansum, prod, std, sum, var)
from .shapes import (  # noqa: F401
    argsort, atleast_1d, atleast_2d, atleast_3d, concatenate, diag, diagonal, eye, flip, fliplr, flipud,
    hstack, identity, meshgrid, pad, repeat, roll, searchsorted, sort, split, stack, take,
    take_along_axis, tile, tri, tril, triu, vstack)

from .index_tricks import (  # noqa: F401
    c_, diag_indices, diag_indices_from, index_exp, indices, ix_, mgrid, ogrid, r_,
    ravel_multi_index, s_, tril_indices, tril_indices_from, triu_indices, triu_indices_from,
    unravel_index)
from .signal import convolve, correlate  # noqa: F401
from .statistics import corrcoef, cov  # noqa: F401
from .ufuncs import *  # noqa: F401,F403  (add, multiply, ...: ufunc objects with methods)
from .ufuncs import ufunc  # noqa: F401
from . import linalg  # noqa: F401  (numpy.linalg and the array API's linalg extension)

from numpy import bool  # noqa: F401,A004  (the standard's name for the boolean dtype)
from numpy import ndindex  # noqa: F401  (shapes are static: NumPy's iterator over them)
from .arrayapi import (  # noqa: F401
    __array_namespace_info__, can_cast, concat, cumulative_prod, cumulative_sum, diff, finfo,
    from_dlpack, iinfo, isdtype, isin, matrix_transpose, nonzero, reciprocal, result_type, unique_all,
    unique_counts, unique_inverse, unique_values, unstack, vecdot)

__array_api_version__ = "2024.12"

_install_array_methods(__import__(__name__, fromlist=["_"]))
