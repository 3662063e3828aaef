"""Array plumbing shared by every fieldft Python front end.

One place knows the array frameworks: numpy (host), torch (host or CUDA tensors), cupy and any
other producer of ``__cuda_array_interface__`` (CUDA). It answers, without copying anything:
where the data lives, its dtype, shape, contiguity and data pointer; it allocates outputs in
the framework and on the device of an input; and it finds the framework's current CUDA stream.
The compiled core receives only checked pointers (see python/src/fieldft_module.cpp for why).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from . import _core

HOST = -1  # ArrayInfo.device for host memory


@dataclass(frozen=True)
class ArrayInfo:
    obj: Any
    framework: str  # "numpy", "torch", "cupy" or "cuda" (another __cuda_array_interface__ producer)
    ptr: int
    shape: Tuple[int, ...]
    dtype: np.dtype
    device: int  # CUDA ordinal, or HOST
    c_contiguous: bool
    writable: bool

    @property
    def on_device(self) -> bool:
        return self.device != HOST

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def where(self) -> str:
        return "host memory" if self.device == HOST else f"CUDA device {self.device}"


def _c_contiguous(shape, strides, itemsize) -> bool:
    """strides in bytes; size-1 axes may have any stride (numpy and cupy agree)."""
    if strides is None:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _is_torch(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "data_ptr")


def _torch_dtype_to_numpy(dtype) -> np.dtype:
    name = str(dtype).replace("torch.", "")
    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype("V")  # bfloat16 and friends: never a valid fieldft dtype


def inspect(obj, name: str) -> ArrayInfo:
    """Describes `obj` (never copies). TypeError when it is not an array fieldft understands."""
    if isinstance(obj, np.ndarray):
        return ArrayInfo(obj, "numpy", obj.__array_interface__["data"][0], tuple(obj.shape), obj.dtype,
                         HOST, bool(obj.flags.c_contiguous), bool(obj.flags.writeable))
    if _is_torch(obj):
        dev = obj.device
        if dev.type not in ("cpu", "cuda"):
            raise TypeError(f"`{name}` is a torch tensor on device '{dev}'; fieldft accepts CPU and CUDA tensors")
        device = HOST if dev.type == "cpu" else (dev.index if dev.index is not None else _torch_current_device())
        # torch's own notion of contiguity treats size-1 axes like numpy does.
        return ArrayInfo(obj, "torch", obj.data_ptr(), tuple(obj.shape), _torch_dtype_to_numpy(obj.dtype), device,
                         bool(obj.is_contiguous()), True)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        shape = tuple(int(n) for n in cai["shape"])
        dtype = np.dtype(cai["typestr"])
        ptr, readonly = cai["data"]
        is_cupy = type(obj).__module__.split(".")[0] == "cupy"
        if is_cupy:
            device = int(obj.device.id)
        else:
            device = _core.pointer_device(ptr) if ptr else 0
            if device == HOST:
                raise TypeError(f"`{name}` exports __cuda_array_interface__ but its pointer is not CUDA device memory")
        return ArrayInfo(obj, "cupy" if is_cupy else "cuda", int(ptr), shape, dtype, device,
                         _c_contiguous(shape, cai.get("strides"), dtype.itemsize), not readonly)
    raise TypeError(f"`{name}` must be an array (numpy.ndarray, cupy.ndarray, torch.Tensor or an object with "
                    f"__cuda_array_interface__), got {type(obj).__name__}")


def _torch_current_device() -> int:
    import torch
    return int(torch.cuda.current_device())


def contiguous_copy(info: ArrayInfo, name: str) -> ArrayInfo:
    """A C-contiguous copy in the same framework and place (the one copy fieldft ever makes of a
    caller's array, and only when the caller's layout cannot be read in place)."""
    obj = info.obj
    if info.framework == "numpy":
        copy = np.ascontiguousarray(obj)
    elif info.framework == "torch":
        copy = obj.contiguous()
    elif info.framework == "cupy":
        import cupy
        with cupy.cuda.Device(info.device):
            copy = cupy.ascontiguousarray(obj)
    else:
        raise ValueError(f"`{name}` is not C-contiguous and fieldft cannot copy a {type(obj).__name__}; "
                         "pass a C-contiguous array")
    return inspect(copy, name)


def empty_like(info: ArrayInfo, shape, dtype) -> ArrayInfo:
    """An uninitialised C-contiguous array of `shape` and `dtype`, in the framework and on the
    device of `info` (outputs follow their inputs)."""
    shape = tuple(int(n) for n in shape)
    dtype = np.dtype(dtype)
    if info.framework == "numpy":
        out = np.empty(shape, dtype=dtype)
    elif info.framework == "torch":
        import torch
        out = torch.empty(shape, dtype=getattr(torch, dtype.name), device=info.obj.device)
    else:  # cupy, and cupy arrays for other __cuda_array_interface__ producers
        try:
            import cupy
        except ImportError as e:
            raise TypeError(f"cannot allocate an output like a {type(info.obj).__name__} without cupy; "
                            "pass out=") from e
        with cupy.cuda.Device(info.device):
            out = cupy.empty(shape, dtype=dtype)
    return inspect(out, "out")


def zeros_like(info: ArrayInfo, shape, dtype) -> ArrayInfo:
    """empty_like, zeroed on the array's own device (cupy fills on the CURRENT device: a fill of
    an array on another device fails with cudaErrorInvalidValue)."""
    out = empty_like(info, shape, dtype)
    if out.framework == "cupy":
        import cupy
        with cupy.cuda.Device(out.device):
            out.obj[...] = 0
    else:
        out.obj[...] = 0
    return out


def copy_into(dst: ArrayInfo, src_obj) -> None:
    """dst[...] = src_obj (reshaped to dst's shape), on dst's device for cupy (see zeros_like)."""
    if dst.framework == "cupy":
        import cupy
        with cupy.cuda.Device(dst.device):
            dst.obj[...] = src_obj.reshape(dst.obj.shape)
    else:
        dst.obj[...] = src_obj.reshape(dst.obj.shape)


def current_stream(info: ArrayInfo) -> Optional[int]:
    """The stream on which the framework of `info` queues its work now (the stream an input was
    produced on and an output will be consumed on), or None when there is nothing to order
    against (host arrays, or a __cuda_array_interface__ producer that names no stream)."""
    if not info.on_device:
        return None
    if info.framework == "cupy":
        import cupy
        with cupy.cuda.Device(info.device):
            return int(cupy.cuda.get_current_stream().ptr)
    if info.framework == "torch":
        import torch
        return int(torch.cuda.current_stream(info.device).cuda_stream)
    stream = info.obj.__cuda_array_interface__.get("stream")
    return None if stream is None else int(stream)


def stream_handle(stream) -> int:
    """A cudaStream_t as an int from what users pass: None (default stream), an int, a cupy
    stream (.ptr), a torch stream (.cuda_stream) or a ctypes c_void_p (cufinufft's gpu_stream)."""
    if stream is None:
        return 0
    for attr in ("ptr", "cuda_stream", "value"):
        if hasattr(stream, attr) and not isinstance(stream, int):
            value = getattr(stream, attr)
            return 0 if value is None else int(value)
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise TypeError(f"stream must be None, an int (cudaStream_t), a cupy or torch stream; "
                        f"got {type(stream).__name__}") from None


class StreamOrder:
    """Orders one fieldft call on `plan_stream` between the work the caller's framework queued
    before it and the work it queues after it, without blocking the host: the plan stream waits
    for the framework's current stream on entry, and the framework stream waits for the plan
    stream on exit. Nothing happens when both are the same stream (the usual case: the plan was
    made on the framework's current stream) or when the data are on the host."""

    def __init__(self, device: int, plan_stream: int, info: ArrayInfo):
        self.device = device
        self.plan_stream = plan_stream
        self.user_stream = current_stream(info)

    def __enter__(self):
        if self.user_stream is not None and self.user_stream != self.plan_stream:
            _core.stream_wait(self.device, self.plan_stream, self.user_stream)
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and self.user_stream is not None and self.user_stream != self.plan_stream:
            _core.stream_wait(self.device, self.user_stream, self.plan_stream)
        return False


def framework_current_stream(device: int) -> int:
    """The current stream of the GPU array framework already in use, for a plan made without an
    explicit stream: cupy's if cupy is imported, else torch's if torch has initialised CUDA,
    else the default stream (0). Only a default: StreamOrder keeps calls correct whatever the
    framework's stream is at call time."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            with cupy.cuda.Device(device):
                return int(cupy.cuda.get_current_stream().ptr)
        except Exception:  # cupy present without a usable device: fall through
            pass
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "cuda", None) is not None:
        try:
            if torch.cuda.is_initialized():
                return int(torch.cuda.current_stream(device).cuda_stream)
        except Exception:
            pass
    return 0


def real_dtype_of(complex_dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if np.dtype(complex_dtype) == np.complex64 else np.dtype(np.float64)
