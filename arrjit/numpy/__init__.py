"""``arrjit.numpy``: a jnp-like namespace with NumPy 2 semantics.

Inside ``arrjit.jit`` the functions record primitives on traced arrays; outside they run
eagerly and return what NumPy returns (``numpy.ndarray`` results). The functions live in
topic modules (``base``: creation, elementwise primitives; ``views``: shape manipulation;
``elementwise``: NumPy's other ufuncs as compositions; ``reductions``, ``contractions``,
``shapes``, ``indexing``, ``misc``, ``statistics``, ``signal``, ``calculus``,
``polynomial``, ``arrangements``, ``selection`` (value-dependent lengths: ``size=``),
``index_tricks``, ``functional``, ``utilities``, ``ufuncs``, ``linalg``, ``arrayapi``: the
array API standard's spellings); this package re-exports them. Traced arrays have ``__array_namespace__`` (this namespace), so
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
from .indexing import setitem as _setitem  # noqa: F401  (x[idx] = v)
from .contractions import dot, einsum, inner, matmul, outer, tensordot, vdot  # noqa: F401
from .misc import (allclose, array_equal, cross, histogram, interp, isclose,  # noqa: F401
                   nan_to_num, trace)
from .reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum, logsumexp,
    max, mean, min, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin,
    nanprod, nanstd, nansum, nanvar, prod, ptp, std, sum, var)
from .shapes import (  # noqa: F401
    argsort, atleast_1d, atleast_2d, atleast_3d, concatenate, diag, diagonal, eye, flip, fliplr,
    flipud, hstack, identity, meshgrid, pad, repeat, roll, searchsorted, sort, split, stack,
    take, take_along_axis, tile, tri, tril, triu, vstack)
from .elementwise import (  # noqa: F401
    bitwise_count, copy, deg2rad, degrees, divmod, exp2, fabs, float_power, fmax, fmin, frexp,
    heaviside, i0, iscomplex, iscomplexobj, isneginf, isposinf, isreal, isrealobj,
    logaddexp2, modf, rad2deg, radians, sinc, spacing)
from .index_tricks import (  # noqa: F401
    c_, diag_indices, diag_indices_from, index_exp, indices, ix_, mgrid, ogrid, r_,
    ravel_multi_index, s_, tril_indices, tril_indices_from, triu_indices, triu_indices_from,
    unravel_index)
from .signal import convolve, correlate  # noqa: F401
from .calculus import ediff1d, gradient, trapezoid, unwrap  # noqa: F401
from .statistics import (  # noqa: F401
    bincount, corrcoef, cov, digitize, histogram_bin_edges, median, nanmedian, nanpercentile,
    nanquantile, percentile, quantile)
from .arrangements import (  # noqa: F401
    append, argpartition, array_split, block, choose, column_stack, delete, diagflat, dsplit,
    dstack, hsplit, insert, kron, lexsort, partition, piecewise, resize, rollaxis, rot90,
    select, sort_complex, vsplit)
from .bits import packbits, unpackbits  # noqa: F401
from .updates import fill_diagonal, place, put, put_along_axis  # noqa: F401
from .selection import (  # noqa: F401
    argwhere, compress, extract, flatnonzero, intersect1d, nonzero, setdiff1d, setxor1d,
    union1d, unique, unique_all, unique_counts, unique_inverse, unique_values, where)
from .polynomial import (  # noqa: F401
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, roots,
    vander)
from .functional import (apply_along_axis, apply_over_axes, fromfunction,  # noqa: F401
                         frompyfunc, vectorize)
from .utilities import (  # noqa: F401
    array2string, array_equiv, array_repr, array_str, bartlett, blackman, einsum_path,
    frombuffer, fromfile, fromiter, fromstring, genfromtxt, get_printoptions, hamming, hanning,
    histogram2d, histogramdd, isscalar, issubdtype, iterable, kaiser, load, loadtxt,
    mask_indices, matvec, printoptions, promote_types, save, savetxt, savez,
    savez_compressed, set_printoptions, trim_zeros, vecmat)
from .ufuncs import *  # noqa: F401,F403  (add, multiply, ...: ufunc objects with methods)
from .ufuncs import ufunc  # noqa: F401
from . import linalg  # noqa: F401  (numpy.linalg and the array API's linalg extension)

from numpy import bool  # noqa: F401,A004  (the standard's name for the boolean dtype)
from numpy import ndindex  # noqa: F401  (shapes are static: NumPy's iterator over them)
from .arrayapi import (  # noqa: F401
    __array_namespace_info__, can_cast, concat, cumulative_prod, cumulative_sum, diff, finfo,
    from_dlpack, iinfo, isdtype, isin, matrix_transpose, reciprocal, result_type, unstack,
    vecdot)

__array_api_version__ = "2024.12"

_install_array_methods(__import__(__name__, fromlist=["_"]))
