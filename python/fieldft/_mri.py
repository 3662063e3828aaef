"""fieldft.Dft and fieldft.DftR2: the exact field-corrected (off-resonance) DFT operators.

    forward:  s_j = sum_v m_v exp(-i (2 pi k_j . r_v + dw_v t_j))      (image -> samples)
    adjoint:  m_v = sum_j s_j exp(+i (2 pi k_j . r_v + dw_v t_j))      (samples -> image)

k in cycles per field of view, r_v = (i_d - floor(N_d/2)) / N_d per axis, dw in rad/s, t in
seconds. DftR2 multiplies each term by prod_d sinc(k_dj / N_d + G_dv t_j) (normalised sinc),
with G the field-map gradient in Hz per voxel (include/fieldft/mri/dft.hpp has the derivation).

Array layout (as in the C++ API, x fastest): an image has shape (Ny, Nx) or (Nz, Ny, Nx) — x is
the LAST axis, the way images are usually held in numpy — so `shape` is given in that order
and kx pairs with the last axis. C images (coils, shots) per call stack on a leading axis:
(C, Ny, Nx) images and (C, M) samples.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import _arrays, _core
from ._engine import c_int, c_int_capped, caller_terms, count64, dft_message, expected_shape_text, lead_shape
from ._plan import complex_dtype


def _host_real(v, name, dtype, length=None):
    """A C-contiguous host copy of v in `dtype` (construction data: the C++ operator copies it
    anyway, so one more host copy costs nothing per call)."""
    if v is None:
        return np.empty(0, dtype=dtype)
    if hasattr(v, "__cuda_array_interface__") and hasattr(v, "get"):  # cupy
        v = v.get()
    elif _arrays._is_torch(v):
        v = v.detach().cpu().numpy()
    a = np.ascontiguousarray(np.asarray(v), dtype=dtype).reshape(-1)
    if length is not None and a.size != length:
        raise ValueError(f"`{name}` has {a.size} values, expected {length}")
    return a


class Dft:
    """Exact field-corrected DFT operator (see the module documentation for the math).

    Dft(shape, kx, ky, kz=None, field=None, times=None, *, dtype="complex64", backend="auto",
        images=1, nthreads=0, device=0, stream=None)

    shape: image shape (Ny, Nx) or (Nz, Ny, Nx). kx, ky[, kz]: M sample positions in cycles
    per field of view. field: off-resonance map (rad/s), image-shaped, or None. times: M
    readout times (s), or None (all zero). images: C images transformed per call.
    """

    _r2 = False

    def __init__(self, shape, kx, ky, kz=None, field=None, times=None, *, dtype="complex64", backend="auto",
                 images=1, nthreads=0, device=0, stream=None, _gradients=None):
        self._dtype = complex_dtype(dtype)
        real = _arrays.real_dtype_of(self._dtype)
        self._shape = tuple(operator.index(n) for n in shape)
        if len(self._shape) not in (2, 3):
            raise ValueError(f"shape must be (Ny, Nx) or (Nz, Ny, Nx), got {shape!r}")
        self._shape = tuple(count64(n, f"shape[{i}]") for i, n in enumerate(self._shape))
        dim = len(self._shape)
        if dim == 2 and kz is not None:
            raise ValueError("kz given for a 2D image shape")
        if dim == 3 and kz is None:
            raise ValueError("a 3D image shape needs kz")
        kx = _host_real(kx, "kx", real)
        m = kx.size
        ky = _host_real(ky, "ky", real, m)
        kz = _host_real(kz, "kz", real, m if dim == 3 else None)
        nvox = math.prod(self._shape)
        field = _host_real(field, "field", real, nvox if field is not None else None)
        times = _host_real(times, "times", real, m if times is not None else None)
        grads = [np.empty(0, dtype=real)] * 3
        if _gradients is not None:
            if len(_gradients) != dim:
                raise ValueError(f"gradients must be {dim} image-shaped maps (x, y{', z' if dim == 3 else ''})")
            for d, g in enumerate(_gradients):
                grads[d] = _host_real(g, "xyz"[d] + " gradient", real, nvox)
        options = _core.DftOptions()
        options.backend = str(backend)
        options.images = count64(images, "images")
        options.nthreads = c_int_capped(nthreads, "nthreads")
        options.device = c_int(device, "device")
        if stream is not None:
            options.stream = _arrays.stream_handle(stream)
        elif backend != "cpu" and _core.build_info()["cuda"]:
            options.stream = _arrays.framework_current_stream(options.device)
        cls = _core.DftF if self._dtype == np.complex64 else _core.DftD
        with caller_terms(lambda message: dft_message(message, dim)):
            self._op = cls(list(reversed(self._shape)), kx, ky, kz, field, times, self._r2, grads[0], grads[1],
                           grads[2], _gradients is not None, options)
        self._device = options.device
        self._stream = options.stream
        # The library's rule for the CPU threads (fieldft::cpu_threads_for), which the operator used.
        self._nthreads = _core.cpu_threads_for(options.nthreads) if self._op.backend == "cpu" else 0

    shape = property(lambda self: self._shape, doc="image shape (Ny, Nx) or (Nz, Ny, Nx)")
    num_samples = property(lambda self: self._op.num_samples, doc="M")
    images = property(lambda self: self._op.images, doc="images (coils, shots) per call")
    dtype = property(lambda self: self._dtype)
    backend = property(lambda self: self._op.backend)
    r2 = property(lambda self: self._op.r2, doc="True for DftR2")
    nthreads = property(lambda self: self._nthreads,
                        doc="CPU threads the operator uses (the nthreads argument, capped; 0 on the CUDA backend)")
    domain_shape = property(lambda self: ((self.images,) if self.images > 1 else ()) + self._shape)
    codomain_shape = property(lambda self: ((self.images,) if self.images > 1 else ()) + (self.num_samples,))

    def __repr__(self):
        return (f"fieldft.{type(self).__name__}(shape={self._shape}, num_samples={self.num_samples}, "
                f"images={self.images}, dtype={self._dtype}, backend={self.backend})")

    def forward(self, image, out=None):
        """samples = E image: image (C, *shape) or shape -> samples (C, M) or (M,)."""
        return self._run(image, out, self._shape, (self.num_samples,), self._op.forward, "image")

    def adjoint(self, samples, out=None):
        """image = E^H samples (conjugate phase)."""
        return self._run(samples, out, (self.num_samples,), self._shape, self._op.adjoint, "samples")

    def _run(self, data, out, in_tail, out_tail, call, name):
        c = self.images
        d = _arrays.inspect(data, name)
        if d.dtype != self._dtype:
            raise TypeError(f"`{name}` has dtype {d.dtype}; this operator takes {self._dtype}")
        lead = lead_shape(d.shape, in_tail, c)
        if lead is None:
            raise ValueError(f"`{name}` must have shape {expected_shape_text(in_tail, c)}, got {d.shape}")
        if d.on_device:
            if self.backend != "cuda":
                raise ValueError(f"`{name}` is on CUDA device {d.device} but this operator runs on the CPU backend")
            if d.device != self._device:
                raise ValueError(f"`{name}` is on CUDA device {d.device} but this operator runs on device {self._device}")
        if out is None:
            o = _arrays.empty_like(d, lead + tuple(out_tail), self._dtype)
        else:
            o = _arrays.inspect(out, "out")
            if o.dtype != self._dtype:
                raise TypeError(f"`out` has dtype {o.dtype}; this operator writes {self._dtype}")
            if lead_shape(o.shape, out_tail, c) is None:
                raise ValueError(f"`out` must have shape {expected_shape_text(out_tail, c)}, got {o.shape}")
            if not o.c_contiguous or not o.writable:
                raise ValueError("`out` must be C-contiguous and writable")
            if o.device != d.device:
                raise ValueError(f"`out` is in {o.where()} but `{name}` is in {d.where()}")
        if not d.c_contiguous:
            d = _arrays.contiguous_copy(d, name)
        if d.on_device:
            # The operator synchronises its own stream before returning, so only the input needs
            # ordering: after the caller's stream (an event when the operator's stream is known,
            # else a host wait, since the operator's own stream is not visible from here).
            user = _arrays.current_stream(d)
            if user is not None and self._stream == 0:
                _core.stream_synchronize(self._device, user)
            elif user is not None and user != self._stream:
                _core.stream_wait(self._device, self._stream, user)
        call(d.ptr, o.ptr, d.on_device)
        return o.obj


class DftR2(Dft):
    """Field-corrected DFT with the R2* (within-voxel field gradient) factor.

    DftR2(shape, kx, ky, kz=None, field=None, times=None, gradients=None, *, dtype=..., ...)

    gradients: (gx, gy) or (gx, gy, gz) image-shaped maps in Hz per voxel along x, y, z; None
    derives them from central differences of field / 2 pi (include/fieldft/mri/dft.hpp).
    """

    _r2 = True

    def __init__(self, shape, kx, ky, kz=None, field=None, times=None, gradients=None, **kwargs):
        super().__init__(shape, kx, ky, kz, field, times, _gradients=gradients, **kwargs)
