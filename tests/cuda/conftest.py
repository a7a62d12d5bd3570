"""The CUDA tests run where ``device='cuda'`` can: on a GPU, or on numba-cuda's simulator in
a process started with ``NUMBA_ENABLE_CUDASIM=1`` (``tests/test_cuda_simulator.py`` starts
one). In any other process there is nothing here to collect."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arrjit.errors import DeviceUnavailableError  # noqa: E402


def _cuda_usable() -> bool:
    from arrjit.backends import get_backend

    try:
        get_backend("cuda")
    except DeviceUnavailableError:
        return False
    return True


if not _cuda_usable():
    collect_ignore_glob = ["test_*.py"]
