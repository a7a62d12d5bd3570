"""``arrjit.scipy``: the SciPy functions JAX also offers under ``jax.scipy``."""
from . import special  # noqa: F401
