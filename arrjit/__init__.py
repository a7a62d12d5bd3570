"""arrjit: a JAX-style array JIT for Python whose compiler is Numba.

>>> import arrjit, arrjit.numpy as anp
>>> f = arrjit.jit(lambda x, y: anp.sin(x) * y + 1)
>>> f(anp.zeros(2), anp.ones(2))
array([1., 1.])
"""
from . import errors, lax  # noqa: F401
from . import numpy  # noqa: F401  (installs the Tracer's array methods)
from .api import CacheInfo, Jitted, Lowered, clear_caches, jit, make_graph
from .batching import vmap
from .autodiff import stop_gradient
from .config import config
from .placement import block_until_ready, device_get, device_put, devices
from .core.tree import register_pytree_node
from . import tree, tree_util  # noqa: F401
from .typing import Array
from . import dask  # noqa: F401  (dask arrays as arguments; imports dask only when one comes)

from .version import __version__

__all__ = [
    "jit", "vmap", "make_graph", "clear_caches", "config", "errors", "lax", "numpy", "devices",
    "device_put", "device_get", "block_until_ready", "register_pytree_node", "CacheInfo",
    "Jitted", "Lowered", "__version__", "grad", "value_and_grad", "vjp", "jvp",
    "stop_gradient", "custom_vjp", "float0", "tree", "tree_util", "Array", "jacfwd", "jacrev",
    "jacobian", "hessian",
]


def __getattr__(name: str):
    """The differentiation transformations, imported on first use (``arrjit.autodiff``)."""
    from . import autodiff

    if name in autodiff.TRANSFORMS or name in autodiff.JACOBIANS:
        return getattr(autodiff, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
