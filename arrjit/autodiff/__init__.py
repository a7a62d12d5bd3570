"""Automatic differentiation: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``,
``stop_gradient`` and ``custom_vjp``.

The transformations (``transforms`` and the rules behind them) are imported when one is
first used, so a program that never differentiates does not pay their import (~17 ms of
every process's start-up). ``stop_gradient`` is only a mark on the graph and loads at once.

>>> import arrjit
>>> arrjit.jvp(lambda x: x ** 3, (2.0,), (1.0,))
(array(8.), array(12.))
"""
from __future__ import annotations

from typing import Any

from ..core.marks import stop_gradient

TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "custom_vjp", "float0")
JACOBIANS = ("jacfwd", "jacrev", "jacobian", "hessian")

__all__ = ["stop_gradient", *TRANSFORMS, *JACOBIANS]


def __getattr__(name: str) -> Any:
    if name in TRANSFORMS:
        from . import transforms

        return getattr(transforms, name)
    if name in JACOBIANS:
        from . import jacobians

        return getattr(jacobians, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
