"""Statistics of ``arrjit.numpy`` composed of reductions and products: ``cov`` and
``corrcoef``, following NumPy's definitions step by step (the same averages, the same
product), so results agree with NumPy's to rounding.

>>> import numpy as np, arrjit
>>> x = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
>>> arrjit.jit(cov)(x)
array([[ 1., -1.],
       [-1.,  1.]])
>>> arrjit.jit(corrcoef)(x)
array([[ 1., -1.],
       [-1.,  1.]])
"""
from __future__ import annotations

import numpy as np

from . import base as anp
from . import contractions, reductions, shapes
from ..core.trace import Tracer


def _traced(*xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def _observations(m, dtype, rowvar: bool):
    """``m`` as a 2-d array of one variable per row."""
    x = anp.asarray(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    original_ndim = x.ndim
    x = anp.astype(shapes.atleast_2d(x), dtype)
    if not rowvar and original_ndim != 1:
        x = anp.transpose(x)
    return x


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None, *, dtype=None):
    """``numpy.cov``: the covariance matrix of the variables in the rows of ``m`` (columns
    with ``rowvar=False``) and of ``y``, normalised by ``N - ddof`` (``ddof`` default 1, or
    0 with ``bias``), with frequency and analytic weights. A 1-variable result is 0-d.
    Inside jit the weights' values are not checked (NumPy raises for negative or
    non-integer frequency weights)."""
    if not _traced(m, y, fweights, aweights):
        return np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if dtype is None:
        parts = [anp.asarray(m).dtype] + ([anp.asarray(y).dtype] if y is not None else [])
        dtype = np.result_type(*parts, np.float64)
    x = _observations(m, dtype, rowvar)
    if x.shape[0] == 0:
        return anp.zeros((0, 0), dtype)
    if y is not None:
        y_rows = anp.astype(shapes.atleast_2d(anp.asarray(y)), dtype)
        if anp.asarray(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        if not rowvar and y_rows.shape[0] != 1:
            y_rows = anp.transpose(y_rows)
        x = shapes.concatenate([x, y_rows], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    weights = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        given = anp.astype(anp.asarray(given), np.float64)
        if given.ndim > 1:
            raise RuntimeError(f"cannot handle multidimensional {name}")
        if given.shape[0] != x.shape[1]:
            raise RuntimeError(f"incompatible numbers of samples and {name}")
        weights = given if weights is None else anp.multiply(weights, given)
    avg, w_sum = reductions.average(x, axis=1, weights=weights, returned=True)
    w_sum = w_sum[0]
    if weights is None:
        fact = max(x.shape[1] - ddof, 0)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = anp.subtract(w_sum, ddof)
    else:
        correction = anp.true_divide(reductions.sum(anp.multiply(weights, aweights)), w_sum)
        fact = anp.subtract(w_sum, anp.multiply(ddof, correction))
    if not isinstance(fact, int):
        fact = anp.where(anp.less_equal(fact, 0), 0.0, fact)
    centred = anp.subtract(x, avg[:, None])
    weighted = centred if weights is None else anp.multiply(centred, weights)
    c = contractions.dot(centred, anp.conjugate(anp.transpose(weighted)))
    c = anp.multiply(c, anp.true_divide(1, fact))
    return anp.squeeze(c)


def corrcoef(x, y=None, rowvar: bool = True, *, dtype=None):
    """``numpy.corrcoef``: the Pearson correlation coefficients, ``cov / outer(std, std)``,
    clipped to [-1, 1] (each part, for complex values)."""
    if not _traced(x, y):
        return np.corrcoef(x, y, rowvar, dtype=dtype)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return anp.true_divide(c, c)
    d = shapes.diagonal(c)
    stddev = anp.sqrt(anp.real(d))
    c = anp.true_divide(c, stddev[:, None])
    c = anp.true_divide(c, stddev[None, :])
    if c.dtype.kind == "c":
        return anp.clip(anp.real(c), -1, 1) + 1j * anp.clip(anp.imag(c), -1, 1)
    return anp.clip(c, -1, 1)
