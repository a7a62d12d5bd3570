"""The arrays the CUDA backend hands out: numba-cuda device arrays that also export DLPack.

``result(x)`` re-types a numba-cuda device array without a copy (same memory, shape,
strides and stream). Everything numba-cuda does with its arrays still works (kernels take
them, ``copy_to_host``, ``__cuda_array_interface__``); ``__dlpack__`` adds the exchange
protocol of the array API standard, so ``torch.from_dlpack(y)``, ``cupy.from_dlpack(y)`` and
``jax.dlpack`` take results without a copy. On a GPU the capsule comes from ``cuda.core``'s
``StridedMemoryView`` (a CUDA tensor, ``kDLCUDA``); on numba-cuda's simulator, where device
arrays are host memory, from the NumPy array behind it (``kDLCPU``).

Kernels run on numba-cuda's default stream; an export first waits for the device (unless the
consumer passes ``stream=-1``, DLPack's "no synchronisation"), which is correct whatever
stream the consumer uses.
"""
from __future__ import annotations

import functools
from typing import Any

from .device import simulated

KDL_CPU, KDL_CUDA = 1, 2


def _dlpack_methods(base: type, on_gpu: bool) -> type:
    class DLPackArray(base):
        __doc__ = f"A {base.__name__} that exports DLPack (``arrjit.backends.cuda.arrays``)."

        def __dlpack__(self, *, stream: int | None = None,
                       max_version: tuple[int, int] | None = None,
                       dl_device: tuple[int, int] | None = None,
                       copy: bool | None = None) -> Any:
            if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
                raise BufferError(f"a CUDA array is on {self.__dlpack_device__()}, not on "
                                  f"the requested DLPack device {tuple(dl_device)}; copy it "
                                  f"with arrjit.device_get(y) first")
            if copy:
                raise BufferError("a CUDA array exports its own memory (copy=True is not "
                                  "supported); copy it with arrjit.device_get(y)")
            if not on_gpu:
                return self._ary.__dlpack__()
            from numba import cuda
            from cuda.core.utils import StridedMemoryView

            if stream != -1:
                cuda.synchronize()
            view = StridedMemoryView.from_cuda_array_interface(self, stream_ptr=-1)
            return view.__dlpack__(max_version=max_version)

        def __dlpack_device__(self) -> tuple[int, int]:
            if not on_gpu:
                return (KDL_CPU, 0)
            from numba import cuda

            return (KDL_CUDA, int(cuda.get_current_device().id))

    DLPackArray.__name__ = DLPackArray.__qualname__ = "Cuda" + base.__name__
    return DLPackArray


@functools.lru_cache(maxsize=2)
def _array_class(on_simulator: bool) -> type:
    if on_simulator:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return _dlpack_methods(FakeCUDAArray, on_gpu=False)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    return _dlpack_methods(DeviceNDArray, on_gpu=True)


def result(x: Any) -> Any:
    """``x`` (a numba-cuda device array) as one that exports DLPack, sharing its memory;
    anything else (a foreign CUDA array handed back as it came) unchanged."""
    on_simulator = simulated()
    cls = _array_class(on_simulator)
    if isinstance(x, cls):
        return x
    if on_simulator:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return cls(x._ary, x.stream) if isinstance(x, FakeCUDAArray) else x
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    if type(x) is DeviceNDArray:
        return cls(x.shape, x.strides, x.dtype, stream=x.stream, gpu_data=x.gpu_data)
    return x
