"""``arrjit.numpy.linalg``: ``numpy.linalg`` (and the array API's ``linalg`` extension) for
traced and concrete arrays.

The factorizations and solvers (``solve``, ``inv``, ``det``, ``slogdet``, ``cholesky``,
``qr``, ``eigh``, ``eig``, ``svd``) are primitives that run NumPy's LAPACK as library steps
between fused kernels, batched over leading axes; everything else (``norm``, ``pinv``,
``lstsq``, ``matrix_power``, ``cond``, ``matrix_rank``, ...) is composed of them and of the
namespace. Each has a derivative rule (JAX's), so ``grad``, ``jvp`` and ``vmap`` work through
them. Outside jit every function is NumPy's own.

>>> import numpy as np, arrjit, arrjit.numpy as anp
>>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
>>> arrjit.jit(anp.linalg.det)(a)
array(5.)
>>> w, v = arrjit.jit(anp.linalg.eigh)(a)
>>> np.allclose(a @ v, v * w)
True
>>> arrjit.grad(lambda a: anp.linalg.slogdet(a)[1])(a)   # inv(a).T
array([[ 0.6, -0.2],
       [-0.2,  0.4]])
"""
from ..arrayapi import matrix_transpose, vecdot  # noqa: F401
from ..contractions import matmul, tensordot  # noqa: F401
from .decompositions import (  # noqa: F401
    EighResult, EigResult, LinAlgError, QRResult, SlogdetResult, SVDResult, cholesky, det, eig,
    eigh, eigvals, eigvalsh, inv, qr, slogdet, solve, svd, svdvals)
from .derived import (cross, diagonal, lstsq, matrix_power, multi_dot, outer,  # noqa: F401
                      pinv, tensorinv, tensorsolve, trace)
from .norms import cond, matrix_norm, matrix_rank, norm, vector_norm  # noqa: F401

__all__ = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
    "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm", "LinAlgError",
]
