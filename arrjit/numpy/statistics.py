"""Statistics of ``arrjit.numpy`` composed of reductions, sorts and products: ``cov``,
``corrcoef``, the order statistics (``quantile``, ``percentile``, ``median`` and their NaN
forms, NumPy's 13 methods) and counting (``bincount``, ``digitize``), following NumPy's
definitions step by step, so results and dtypes agree with NumPy's.

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
from . import contractions, misc, reductions, shapes
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


# -- order statistics ------------------------------------------------------------------------------
def _moved_to_front(a, axis):
    """``a`` with the reduced axes merged into a new leading axis (all of them: None)."""
    a = anp.asarray(a)
    if axis is None:
        return anp.reshape(a, (-1,)), tuple(range(a.ndim))
    axes = reductions._axes(axis, a.ndim)
    rest = [d for d in range(a.ndim) if d not in axes]
    moved = anp.transpose(a, tuple(axes) + tuple(rest))
    size = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    return anp.reshape(moved, (size,) + tuple(a.shape[d] for d in rest)), axes


def _kept(result, a_shape, axes, q_ndim: int):
    """``result`` (the quantile axes, then the kept axes) with the reduced axes as 1s."""
    shape = tuple(result.shape[:q_ndim]) + tuple(1 if d in axes else n
                                                 for d, n in enumerate(a_shape))
    return anp.reshape(result, shape)


def _take_rows(sorted_, index):
    """``sorted_[index[..., j], j]`` along the leading axis; ``index`` has the quantile axes
    followed by ``sorted_``'s other axes (or 1s where it is the same for every slice)."""
    q_ndim = index.ndim - (sorted_.ndim - 1)
    rest = tuple(sorted_.shape[1:])
    full = anp.broadcast_to(index, tuple(index.shape[:q_ndim]) + rest)
    flat = anp.reshape(full, (-1,) + rest)
    picked = shapes.take_along_axis(sorted_, anp.astype(flat, np.int64), axis=0)
    return anp.reshape(picked, tuple(index.shape[:q_ndim]) + rest)


def _lerp(a, b, t):
    """NumPy's interpolation ``a + (b - a) t``, from ``b`` when ``t >= 0.5``."""
    diff = anp.subtract(b, a)
    return anp.where(anp.greater_equal(t, 0.5), anp.subtract(b, anp.multiply(diff, 1 - t)),
                     anp.add(a, anp.multiply(diff, t)))


def _h_and_f(alpha: float, beta: float):
    return lambda n, q: anp.subtract(anp.add(anp.multiply(n, q), anp.add(
        alpha, anp.multiply(q, 1 - alpha - beta))), 1)


def _discrete(shift: float, takes_previous):
    """The discontinuous methods: the index below or above ``n q - 1 - shift``."""
    def index(n, q):
        at = anp.subtract(anp.multiply(n, q), 1 + shift)
        below = anp.floor(at)
        chosen = anp.where(takes_previous(anp.subtract(at, below), below), below, below + 1)
        return anp.maximum(chosen, 0)
    return index


def _less_one(n):
    """``n - 1``, a Python int for a Python int (so that it stays weak against ``q``)."""
    return n - 1 if isinstance(n, int) else anp.subtract(n, 1)


# method -> (virtual index of (count, q), how the fractional part is fixed: None for methods
# whose index is an integer already)
_METHODS = {
    "linear": (lambda n, q: anp.multiply(_less_one(n), q), lambda g, i: g),
    "lower": (lambda n, q: anp.floor(anp.multiply(_less_one(n), q)), None),
    "higher": (lambda n, q: anp.ceil(anp.multiply(_less_one(n), q)), None),
    "nearest": (lambda n, q: anp.round(anp.multiply(_less_one(n), q)), None),
    "midpoint": (lambda n, q: anp.multiply(0.5, anp.add(
        anp.floor(anp.multiply(_less_one(n), q)),
        anp.ceil(anp.multiply(_less_one(n), q)))),
        lambda g, i: anp.where(anp.equal(anp.remainder(i, 1), 0), 0.0, 0.5)),
    "inverted_cdf": (_discrete(0.0, lambda g, i: anp.equal(g, 0)), None),
    "averaged_inverted_cdf": (lambda n, q: anp.subtract(anp.multiply(n, q), 1),
                              lambda g, i: anp.where(anp.equal(g, 0), 0.5, 1.0)),
    "closest_observation": (_discrete(0.5, lambda g, i: anp.logical_and(
        anp.equal(g, 0), anp.equal(anp.remainder(i, 2), 1))), None),
    "interpolated_inverted_cdf": (_h_and_f(0.0, 1.0), lambda g, i: g),
    "hazen": (_h_and_f(0.5, 0.5), lambda g, i: g),
    "weibull": (_h_and_f(0.0, 0.0), lambda g, i: g),
    "median_unbiased": (_h_and_f(1 / 3.0, 1 / 3.0), lambda g, i: g),
    "normal_unbiased": (_h_and_f(3 / 8.0, 3 / 8.0), lambda g, i: g),
}


def _result_dtype(a_dtype, q, method: str, ignore_nan: bool):
    """NumPy's result dtype for these operand dtypes (asked of NumPy on a stand-in; its
    TypeError for an unsupported combination is raised as it is)."""
    probe_q = (0.5 if isinstance(q, float) else
               np.full(np.shape(q), 0.5, anp.asarray(q).dtype))
    fn = np.nanquantile if ignore_nan else np.quantile
    return np.asarray(fn(np.zeros(3, a_dtype), probe_q, method=method)).dtype


def _quantile(a, q, axis, method: str, keepdims: bool, ignore_nan: bool):
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {sorted(_METHODS)}")
    a = anp.asarray(a)
    dtype = _result_dtype(a.dtype, q, method, ignore_nan)
    q_value = q if isinstance(q, float) else anp.asarray(q)
    rows, axes = _moved_to_front(a, axis)
    if rows.shape[0] == 0:
        raise ValueError("cannot compute the quantile of an empty slice inside jit (NumPy "
                         "returns NaN with a warning there)")
    # NumPy computes the virtual index in q's own dtype (a Python number counts as float64)
    # and interpolates in the result's
    q_dtype = np.float64 if isinstance(q, float) else anp.asarray(q).dtype
    index_dtype = q_dtype if np.dtype(q_dtype).kind == "f" else np.float64
    work = dtype if dtype.kind == "f" else np.float64
    ordered = shapes.sort(rows, axis=0)
    q_ndim = np.ndim(q) if not isinstance(q_value, Tracer) else q_value.ndim
    q_shape = tuple(anp.shape(q_value)) if not isinstance(q, float) else ()
    rest = tuple(rows.shape[1:])
    q_col = anp.reshape(anp.asarray(q_value, index_dtype), q_shape + (1,) * len(rest))
    inexact = a.dtype.kind in "fc"
    if ignore_nan and inexact:
        count = reductions.sum(anp.logical_not(anp.isnan(rows)), axis=0, dtype=np.int64)
    else:
        count = rows.shape[0]
    virtual_of, fix_gamma = _METHODS[method]
    n = count if isinstance(count, int) else anp.astype(count, index_dtype)
    virtual = anp.astype(virtual_of(n, q_col), index_dtype)
    last = anp.subtract(count, 1)
    if fix_gamma is None:
        picked = _take_rows(ordered, anp.clip(virtual, 0, last))
        result = picked
    else:
        below = anp.floor(virtual)
        previous = anp.where(anp.greater_equal(virtual, last), last,
                             anp.where(anp.less(virtual, 0), 0, below))
        following = anp.where(anp.greater_equal(virtual, last), last,
                              anp.where(anp.less(virtual, 0), 0, below + 1))
        gamma = fix_gamma(anp.subtract(virtual, below), virtual)
        low = anp.astype(_take_rows(ordered, previous), work)
        high = anp.astype(_take_rows(ordered, following), work)
        result = _lerp(low, high, anp.astype(gamma, work))
    if inexact:
        no_values = (anp.equal(count, 0) if ignore_nan else
                     anp.isnan(ordered[-1]) if a.dtype.kind == "f" else
                     reductions.any(anp.isnan(rows), axis=0))
        result = anp.where(no_values, np.nan, result)
    result = anp.astype(result, dtype)
    if keepdims:
        result = _kept(result, a.shape, axes, q_ndim)
    return result


def _fraction(q, scale: float):
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        return float(q) / scale if scale != 1 else float(q)
    q = anp.asarray(q)
    return anp.true_divide(q, scale) if scale != 1 else q


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights=None, interpolation=None):
    """``numpy.quantile``: the ``q``-th quantiles (``q`` in [0, 1], static or traced) along
    ``axis`` by one of NumPy's 13 methods (sorting the data: a library step), with NaN where
    a slice holds NaN; NumPy's result dtypes."""
    return _quantile_entry(np.quantile, a, q, 1.0, axis, out, method, keepdims, weights,
                           interpolation, False)


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights=None,
               interpolation=None):
    """``numpy.percentile``: ``quantile`` with ``q`` in percent."""
    return _quantile_entry(np.percentile, a, q, 100.0, axis, out, method, keepdims, weights,
                           interpolation, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights=None,
                interpolation=None):
    """``numpy.nanquantile``: ``quantile`` of the values that are not NaN (NaN for a slice
    with none)."""
    return _quantile_entry(np.nanquantile, a, q, 1.0, axis, out, method, keepdims, weights,
                           interpolation, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights=None,
                  interpolation=None):
    """``numpy.nanpercentile``: ``nanquantile`` with ``q`` in percent."""
    return _quantile_entry(np.nanpercentile, a, q, 100.0, axis, out, method, keepdims,
                           weights, interpolation, True)


def _quantile_entry(numpy_fn, a, q, scale, axis, out, method, keepdims, weights,
                    interpolation, ignore_nan):
    if interpolation is not None:
        method = interpolation
    if not _traced(a, q, weights):
        kwargs = {} if weights is None else {"weights": weights}
        return numpy_fn(a, q, axis=axis, out=out, method=method, keepdims=keepdims, **kwargs)
    if out is not None:
        raise TypeError(f"anp.{numpy_fn.__name__}: out= is not supported; arrays are "
                        f"immutable")
    if weights is not None:
        raise NotImplementedError(f"anp.{numpy_fn.__name__} with weights is supported "
                                  f"outside jit only")
    return _quantile(a, _fraction(q, scale), axis, method, keepdims, ignore_nan)


def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """``numpy.median``: the middle value, or the mean of the two middle values (as NumPy
    computes it); NaN where a slice holds NaN."""
    if not _traced(a):
        return np.median(a, axis=axis, out=out, keepdims=keepdims)
    return _median(a, axis, keepdims, ignore_nan=False)


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """``numpy.nanmedian``: the median of the values that are not NaN."""
    if not _traced(a):
        return np.nanmedian(a, axis=axis, out=out, keepdims=keepdims)
    return _median(a, axis, keepdims, ignore_nan=True)


def _median(a, axis, keepdims: bool, ignore_nan: bool):
    a = anp.asarray(a)
    dtype = np.asarray(np.median(np.zeros(2, a.dtype))).dtype
    rows, axes = _moved_to_front(a, axis)
    ordered = shapes.sort(rows, axis=0)
    inexact = a.dtype.kind in "fc"
    if ignore_nan and inexact:
        count = reductions.sum(anp.logical_not(anp.isnan(rows)), axis=0, dtype=np.int64)
        low_index = anp.maximum(anp.floor_divide(anp.subtract(count, 1), 2), 0)
        high_index = anp.floor_divide(count, 2)
        low = _take_rows(ordered, low_index[None])[0]
        high = _take_rows(ordered, anp.minimum(high_index, anp.maximum(count - 1, 0))[None])[0]
    else:
        n = rows.shape[0]
        low, high = ordered[(n - 1) // 2], ordered[n // 2]
    middle = anp.true_divide(anp.add(anp.astype(low, dtype), anp.astype(high, dtype)), 2)
    if inexact:
        no_values = (anp.equal(count, 0) if ignore_nan else
                     reductions.any(anp.isnan(rows), axis=0))
        middle = anp.where(no_values, np.nan, middle)
    middle = anp.astype(middle, dtype)
    return _kept(middle, a.shape, axes, 0) if keepdims else middle


# -- counting ---------------------------------------------------------------------------------------
def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """``numpy.bincount``: occurrences (or summed ``weights``) of each non-negative integer.
    Inside jit the number of bins must be static: ``length`` (as in ``jax.numpy``), else
    ``minlength`` (values past the last bin are dropped; NumPy grows the output to fit)."""
    if not _traced(x, weights):
        return np.bincount(x, weights, minlength)
    x = anp.asarray(x)
    if x.ndim != 1 or x.dtype.kind not in "iub":
        raise TypeError(f"bincount takes a 1-d array of non-negative integers, got {x.aval}")
    size = length if length is not None else minlength
    if not size:
        raise ValueError("anp.bincount inside jit needs a static number of bins: pass "
                         "length=... (or minlength=...); NumPy sizes it by the largest value")
    dtype = np.intp if weights is None else np.result_type(anp.asarray(weights).dtype,
                                                            np.float64)
    values = anp.ones(x.shape, dtype) if weights is None else anp.astype(weights, dtype)
    inside = anp.logical_and(anp.greater_equal(x, 0), anp.less(x, size))
    target = anp.where(inside, x, size)        # one spare bin collects the others
    return anp.zeros((size + 1,), dtype).at[target].add(values)[:size]


def digitize(x, bins, right: bool = False):
    """``numpy.digitize``: the index of the bin each value falls in (``bins`` increasing or
    decreasing)."""
    if not _traced(x, bins):
        return np.digitize(x, bins, right)
    bins = anp.asarray(bins)
    side = "left" if right else "right"
    if not _traced(bins):
        increasing = bool(np.all(np.diff(np.asarray(bins)) >= 0))
        if increasing:
            return shapes.searchsorted(bins, x, side=side)
        return bins.shape[0] - shapes.searchsorted(bins[::-1], x, side=side)
    up = shapes.searchsorted(bins, x, side=side)
    down = bins.shape[0] - shapes.searchsorted(shapes.flip(bins), x, side=side)
    return anp.where(anp.greater_equal(bins[-1], bins[0]), up, down)


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """``numpy.histogram_bin_edges`` for a static number of equal bins (or static edges)."""
    if not _traced(a, weights):
        return np.histogram_bin_edges(a, bins, range, weights)
    return misc.histogram(a, bins=bins, range=range, weights=weights)[1]
