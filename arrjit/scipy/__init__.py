"""``arrjit.scipy``: the SciPy functions JAX also offers under ``jax.scipy``: ``special``
(special functions) and ``stats`` (distributions' densities and CDFs)."""
from . import special, stats  # noqa: F401
