"""``cufinufft._compat`` for fieldft.compat.cufinufft: the array helpers that programs written for
cufinufft import from its private module (MRI-NUFFT's cufinufft backend imports get_array_ptr,
for one), with the same names, arguments and results.

Frameworks, told apart by the module of the array's type as cufinufft does: "torch", "numba"
(numba.cuda device arrays), "pycuda", and "generic" for the rest (numpy, cupy, other
``__cuda_array_interface__`` producers), which cufinufft treats as numpy-like: ``.size``,
``.dtype``, ``.flags``, ``.copy(order="C")`` and the type's own constructor.
"""

from __future__ import annotations

import numpy as np

__all__ = ["get_array_ptr", "get_array_module", "get_array_size", "get_array_dtype", "is_array_contiguous",
           "array_can_contiguous", "array_contiguous", "array_empty_like"]


def get_array_module(obj) -> str:
    """"torch", "numba", "pycuda" or "generic", from the module that defines obj's type."""
    name = type(obj).__module__ or ""
    for framework, prefix in (("numba", "numba.cuda"), ("torch", "torch"), ("pycuda", "pycuda")):
        if name.startswith(prefix):
            return framework
    return "generic"


def get_array_ptr(data) -> int:
    """The device address of a GPU array (its ``__cuda_array_interface__``; a torch tensor that
    requires grad refuses that interface, so its data_ptr()). TypeError for anything else."""
    try:
        return data.__cuda_array_interface__["data"][0]
    except RuntimeError:  # torch: "Can't get __cuda_array_interface__ on Variable that requires grad"
        return data.data_ptr()
    except AttributeError:
        raise TypeError("Invalid GPU array implementation. Implementation must implement the standard cuda "
                        "array interface.") from None


def get_array_size(obj) -> int:
    """Number of elements; for torch, as cufinufft, the length of the first axis."""
    return len(obj) if get_array_module(obj) == "torch" else obj.size


def get_array_dtype(obj) -> np.dtype:
    """The element type as a numpy dtype (torch.complex64 -> complex64)."""
    if get_array_module(obj) == "torch":
        return np.dtype(str(obj.dtype).split(".", 1)[-1])
    return obj.dtype


def is_array_contiguous(obj) -> bool:
    """C-contiguous."""
    framework = get_array_module(obj)
    if framework == "numba":
        return obj.is_c_contiguous()
    if framework == "torch":
        return obj.is_contiguous()
    return obj.flags.c_contiguous


def array_can_contiguous(obj) -> bool:
    """Whether array_contiguous can make a C-contiguous copy of obj: every framework but pycuda,
    whose arrays cufinufft does not copy (a non-contiguous pycuda input is an error there)."""
    return get_array_module(obj) != "pycuda"


def array_contiguous(obj):
    """A C-contiguous copy of obj in its own framework and place."""
    framework = get_array_module(obj)
    if framework == "torch":
        return obj.contiguous()
    if framework == "numba":
        import numba.cuda
        copy = numba.cuda.device_array(obj.shape, obj.dtype, stream=obj.stream)
        copy[:] = obj[:]
        return copy
    return obj.copy(order="C")


_TORCH_COMPLEX = {np.dtype(np.complex64): "complex64", np.dtype(np.complex128): "complex128",
                  np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}


def array_empty_like(obj, *args, **kwargs):
    """An uninitialised array in obj's framework and on its device, made from the arguments of
    that framework's constructor: array_empty_like(obj, shape, dtype=np.complex64). For torch,
    `shape=` becomes `size=`, numpy dtypes become torch dtypes and the device defaults to obj's;
    for numba a device array; otherwise type(obj)(*args, **kwargs) (numpy.ndarray, cupy.ndarray)."""
    framework = get_array_module(obj)
    if framework == "numba":
        import numba.cuda
        return numba.cuda.device_array(*args, **kwargs)
    if framework == "torch":
        import torch
        if "shape" in kwargs:
            kwargs["size"] = kwargs.pop("shape")
        if "dtype" in kwargs and not isinstance(kwargs["dtype"], torch.dtype):
            name = _TORCH_COMPLEX.get(np.dtype(kwargs["dtype"]))
            if name is None:
                raise TypeError(f"array_empty_like: no torch dtype for {kwargs['dtype']!r}")
            kwargs["dtype"] = getattr(torch, name)
        kwargs.setdefault("device", obj.device)
        return torch.empty(*args, **kwargs)
    return type(obj)(*args, **kwargs)
