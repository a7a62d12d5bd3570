"""Backends: the one interface between the target-neutral plan and a target.

A backend renders a plan's steps to runs (``executor.Run``; fused kernels to source), compiles
them through the disk cache (when the plan is built, never while it runs), runs them on its
buffers through the shared run loop (``executor.run_plan``) and moves arrays to and from the
host. ``jit(device=...)`` picks one from ``REGISTRY`` by name;
adding a target is a folder ``backends/<name>/`` and one registry row.

>>> get_backend("cpu").name
'cpu'
>>> sorted(REGISTRY)
['cpu', 'cuda']
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from ..core.dtypes import Aval
from ..errors import DeviceUnavailableError
from ..executor import CompiledPlan
from ..passes.kernel import Kernel
from ..plan import Plan


class Executable(CompiledPlan, Protocol):
    """A plan rendered for one backend (``prepare``), then compiled (``compile``)."""

    fast_run: Callable | None               # a specialised runner for the hot path, if any


class Backend(Protocol):
    """What a target provides."""

    name: str
    reads_positions: bool   # kernels index at run-time positions (``x[i]``, ``y.at[i]``)

    def unavailable_reason(self) -> str | None:
        """Why this target cannot run in this process (and how to fix it), or None."""

    def cache_key_fields(self) -> Mapping[str, Any]:
        """This target's parts of the disk-cache key (code generator, device, flags)."""

    def render_kernel(self, kernel: Kernel) -> str:
        """The source of one fused loop nest."""

    def prepare(self, plan: Plan) -> Executable:
        """Render every step of ``plan`` (loop drivers included); ``Executable.compile``
        compiles them."""

    def converts(self, x: Any) -> bool:
        """Whether argument leaf ``x`` must pass through ``to_device`` before ``run``."""

    def allocate(self, aval: Aval) -> Any:
        """An uninitialised buffer for ``aval``."""

    def to_device(self, x: Any) -> Any:
        """``x`` as a buffer this backend computes on."""

    def to_host(self, x: Any) -> np.ndarray:
        """A buffer of this backend as a NumPy array."""

    def is_device_array(self, x: Any) -> bool:
        """Whether ``x`` is a buffer of this backend that is not a host array."""

    def synchronize(self) -> None:
        """Wait until the work launched so far has finished."""


# name -> module whose ``BACKEND`` is the backend (imported on first use)
REGISTRY: dict[str, str] = {"cpu": "arrjit.backends.cpu", "cuda": "arrjit.backends.cuda"}
_loaded: dict[str, Backend] = {}


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``'cpu'``, ``'cuda'``); a clear error for an unknown name
    or a backend this process cannot run."""
    backend = _loaded.get(name)
    if backend is None:
        if name not in REGISTRY:
            raise ValueError(
                f"device={name!r} is not known: arrjit compiles for "
                f"{', '.join(repr(n) for n in sorted(REGISTRY))}; see arrjit.devices()")
        backend = importlib.import_module(REGISTRY[name]).BACKEND
        _loaded[name] = backend
    reason = backend.unavailable_reason()
    if reason is not None:
        raise DeviceUnavailableError(f"device={name!r} is not available: {reason}")
    return backend


def available() -> list[str]:
    """The backends that can run in this process (``'cpu'`` always)."""
    names = []
    for name in sorted(REGISTRY):
        try:
            get_backend(name)
        except DeviceUnavailableError:
            continue
        names.append(name)
    return names
