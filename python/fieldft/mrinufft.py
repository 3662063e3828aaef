"""fieldft as an MRI-NUFFT backend: ``import fieldft.mrinufft`` registers the backend "fieldft".

    import mrinufft
    import fieldft.mrinufft                                    # registers "fieldft"
    op = mrinufft.get_operator("fieldft")(samples, (256, 256), n_coils=8, smaps=maps, density=True)
    kspace = op.op(image)                                      # (8, M)
    image = op.adj_op(kspace)                                  # (256, 256), density-compensated
    ofr = op.with_off_resonance_correction(readout_time, b0_map)   # fieldft's field-corrected model

Checked with MRI-NUFFT 1.5.1 (docs/mrinufft.md). The operator follows MRI-NUFFT's conventions,
as its other backends do: samples (M, ndim) in [-0.5, 0.5) or [-π, π) (normalised by MRI-NUFFT's
proper_trajectory), column d pairing with image axis d; forward y_j = Σ_r x_r exp(-2πi k_j·r) /
sqrt(2^ndim · prod(shape)) with r the voxel index minus shape/2; the adjoint is the conjugate
transpose times the density compensation weights when the operator has them. Images are
(n_batchs, n_coils or 1 with smaps, *shape), k-space (n_batchs, n_coils, M), with axes of size 1
squeezed when squeeze_dims (the default). Arrays: numpy, cupy or torch (CPU or CUDA); each result
comes back in the framework and on the device of the input. The operator runs on one device
(`device`): inputs elsewhere are moved there and the results back.

Underneath it is ONE fieldft operator (fieldft.mri): NufftEncoding over all batches and coils,
or SENSE with the coils as a batch axis of one transform; with a field map the exact
field-corrected DFT or time segmentation. data_consistency uses the operator's normal form
(fieldft's Toeplitz normal where its cost model picks it). See docs/mrinufft.md.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

try:
    from mrinufft._utils import proper_trajectory
    from mrinufft.operators.base import FourierOperatorBase
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("fieldft.mrinufft needs MRI-NUFFT (pip install mri-nufft)") from e

from . import _arrays
from . import mri as _mri
from . import op as _op

__all__ = ["MRIFieldft"]

_DTYPE_R2C = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_FIELD_MODELS = ("auto", "dft", "tseg")
_ORC_NAMES = {"fieldft": "auto", "fieldft-auto": "auto", "fieldft-dft": "dft", "fieldft-tseg": "tseg"}


# ---------------------------------------------------------------------------------------------
# Arrays: where they live, and moving them to the operator's device and back.

def _framework(a) -> str:
    """'numpy', 'cupy', 'torch' (CPU or CUDA), or TypeError."""
    if isinstance(a, np.ndarray):
        return "numpy"
    if _arrays._is_torch(a):
        return "torch"
    if type(a).__module__.split(".")[0] == "cupy":
        return "cupy"
    raise TypeError(f"the fieldft MRI-NUFFT backend takes numpy, cupy or torch arrays, got {type(a).__name__}")


def _device_of(a) -> int:
    """-1 for host memory, else the CUDA ordinal."""
    return _arrays.inspect(a, "array").device


def _to_device(a, device: int):
    """`a` at `device` (-1: host), in its own framework where that framework can hold it there
    (numpy on a GPU becomes cupy, or torch when cupy is missing; cupy on the host becomes numpy)."""
    fw = _framework(a)
    if _device_of(a) == device:
        return a
    if fw == "torch":
        return a.cpu() if device < 0 else a.to(f"cuda:{device}")
    if fw == "cupy":
        return a.get() if device < 0 else _cupy_on(a, device)
    if "cupy" in sys.modules or _importable("cupy"):
        return _cupy_on(a, device)
    import torch
    return torch.as_tensor(a, device=f"cuda:{device}")


def _cupy_on(a, device):
    import cupy
    with cupy.cuda.Device(device):
        return cupy.asarray(a)


def _importable(name) -> bool:
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _back(result, like):
    """`result` in the framework and at the device of `like` (the caller's input)."""
    fw = _framework(like)
    dev = _device_of(like)
    if _device_of(result) == dev and _framework(result) == fw:
        return result
    if fw == "numpy":
        return result.get() if _framework(result) == "cupy" else result.cpu().numpy()
    if fw == "cupy":
        return _cupy_on(result, dev)
    import torch
    if _framework(result) == "torch":
        return result.to(like.device)
    return torch.as_tensor(result if _framework(result) == "numpy" else result.get(), device=like.device)


def _cast(a, dtype):
    if _framework(a) == "torch":
        import torch
        want = getattr(torch, np.dtype(dtype).name)
        return a if a.dtype == want else a.to(want)
    return a if a.dtype == dtype else a.astype(dtype)


def _host(a, dtype=None):
    """A host numpy copy (for construction data: trajectories, maps, weights)."""
    if _arrays._is_torch(a):
        a = a.detach().resolve_conj().cpu().numpy()
    elif hasattr(a, "get") and hasattr(a, "__cuda_array_interface__"):
        a = a.get()
    a = np.asarray(a)
    return a if dtype is None else a.astype(dtype, copy=False)


def _parse_device(device, *arrays) -> int:
    """The operator's device: `device` when given ("cpu", "cuda", "cuda:N", N), else the GPU of the
    first GPU array among `arrays` (samples, smaps), else the host."""
    if device is None:
        for a in arrays:
            if a is not None and not isinstance(a, (bool, str, dict)) and hasattr(a, "shape"):
                try:
                    d = _device_of(a)
                except TypeError:
                    continue
                if d >= 0:
                    return d
        return -1
    return _op._parse_device(device)


# ---------------------------------------------------------------------------------------------

class MRIFieldft(FourierOperatorBase):
    """MRI-NUFFT operator computed by fieldft (backend name "fieldft").

    MRIFieldft(samples, shape, density=False, n_coils=1, n_batchs=1, smaps=None, squeeze_dims=True,
               n_trans=1, eps=1e-6, device=None, toeplitz="auto", b0_map=None, readout_time=None,
               field_model="auto", field_accuracy=1e-3, **kwargs)

    samples: (M, ndim) k-space positions, or (shots, samples, ndim); float32 gives a complex64
    operator, float64 complex128. shape: the image shape (2D or 3D). density: False, True (the
    Pipe–Menon estimate of MRI-NUFFT's "pipe" method, computed by fieldft), an array of M
    weights, a method name or {"name": ..., **kwargs} (MRI-NUFFT's density registry); the
    adjoint multiplies k-space by these weights, as MRI-NUFFT's backends do. n_coils, n_batchs,
    smaps (n_coils, *shape) and squeeze_dims as in MRI-NUFFT. n_trans: accepted for
    compatibility and ignored (every batch and coil goes through one batched transform).
    eps: the NUFFT's relative tolerance. device: "cpu", "cuda" or "cuda:N" (default: the GPU of
    samples or smaps if they are GPU arrays, else "cpu"). toeplitz: "auto" (default), "on" or
    "off": the normal operator AᴴA of data_consistency through fieldft's Toeplitz embedding.

    Off-resonance (fieldft's own field-corrected model instead of MRI-NUFFT's interpolators):
    b0_map (image-shaped, Hz) and readout_time (seconds: M values, or one shot's values repeated
    for every shot), with MRI-NUFFT's sign convention (its MRIFourierCorrected multiplies the
    signal of voxel r at time t by exp(+2πi b0(r) t)). field_model: "dft" (the exact
    field-corrected DFT), "tseg" (time segmentation, L chosen for field_accuracy, the worst-case
    phase error) or "auto" (fieldft.mri.choose_field_model's cheaper one). The usual way to ask
    for it is op.with_off_resonance_correction(readout_time, b0_map).

    kwargs: fieldft NUFFT options (upsampfac, method, max_batch, bin_size, fft_planning,
    spread_boxes) and nthreads.
    """

    backend = "fieldft"
    available = True
    autograd_available = False

    def __init__(self, samples, shape, density=False, n_coils=1, n_batchs=1, smaps=None, squeeze_dims=True,
                 n_trans=1, eps=1e-6, device=None, toeplitz="auto", b0_map=None, readout_time=None,
                 field_model="auto", field_accuracy=1e-3, **kwargs):
        super().__init__()
        self.shape = shape
        if len(self.shape) not in (2, 3):
            raise ValueError(f"the fieldft backend takes 2D or 3D images, got shape {self.shape}")
        self._device = _parse_device(device, samples, smaps)
        self.eps = float(eps)
        self.n_trans = int(n_trans)
        if toeplitz not in ("auto", "on", "off"):
            raise ValueError(f"toeplitz must be 'auto', 'on' or 'off', got {toeplitz!r}")
        self._toeplitz = toeplitz
        self._nthreads = kwargs.pop("nthreads", 0)
        normalized = kwargs.pop("_normalized_samples", False)  # _copy: self.samples as they are
        self._options = kwargs
        if field_model not in _FIELD_MODELS:
            raise ValueError(f"field_model must be one of {', '.join(_FIELD_MODELS)}, got {field_model!r}")
        self._field_model = field_model
        self._field_accuracy = float(field_accuracy)
        if (b0_map is None) != (readout_time is None):
            raise ValueError("off-resonance correction needs both b0_map and readout_time")
        self._b0_map = None if b0_map is None else _host(b0_map, np.float64)
        self._readout_time = None if readout_time is None else _host(readout_time, np.float64).ravel()
        self.n_coils = n_coils
        self.n_batchs = n_batchs
        self.squeeze_dims = squeeze_dims
        self._cache_key = None
        self._set_samples(samples, normalized)
        self.compute_density(density)
        self.compute_smaps(smaps)

    # -- geometry ---------------------------------------------------------------------------------
    def _set_samples(self, samples, normalized=False):
        """Samples in MRI-NUFFT's [-π, π) convention (self.samples), and the fieldft Encoding."""
        traj = _host(samples).reshape(-1, len(self.shape)) if normalized else \
            proper_trajectory(_host(samples), normalize="pi")
        if traj.shape[-1] != len(self.shape):
            raise ValueError(f"samples have {traj.shape[-1]} coordinates per point; a {len(self.shape)}D image "
                             f"shape {self.shape} needs {len(self.shape)}")
        dtype = np.dtype(traj.dtype)
        if dtype not in _DTYPE_R2C:
            dtype = np.dtype(np.float32)
        self._samples = np.asarray(traj, dtype=dtype)
        self.dtype = dtype
        self._encoding = None
        self._cache_key = None

    def update_samples(self, new_samples, *, unsafe=False):
        """New trajectory (the operator is rebuilt; the density recomputed by its method)."""
        self._set_samples(new_samples)
        if self._density_method is not None:
            self.compute_density(self._density_method)

    def _k_cycles(self):
        """k in cycles per field of view, columns in image-axis order (fieldft.mri.Encoding's k)."""
        unit = self._samples.astype(np.float64) / (2.0 * np.pi)  # cycles per sample spacing, [-1/2, 1/2]
        return unit * np.asarray(self.shape, dtype=np.float64)

    def _times(self):
        m, t = self.n_samples, self._readout_time
        if t.size == m:
            return t
        if t.size == 0 or m % t.size:
            raise ValueError(f"readout_time has {t.size} values; it must have {m} (one per sample) or divide that "
                             "number (one shot's times, repeated for every shot)")
        return np.tile(t, m // t.size)

    def _make_encoding(self):
        if self._encoding is None:
            times = field = None
            if self._b0_map is not None:
                if self._b0_map.shape != self.shape:
                    raise ValueError(f"b0_map has shape {self._b0_map.shape}; the fieldft backend needs the image "
                                     f"shape {self.shape}")
                # MRI-NUFFT's exp(+2πi b0 t) is fieldft's exp(-iΔω t) with Δω = -2π b0.
                field = -2.0 * np.pi * self._b0_map
                times = self._times()
            self._encoding = _mri.Encoding(self.shape, self._k_cycles(), times=times, field=field)
        return self._encoding

    # -- smaps (GPU arrays accepted; MRI-NUFFT's base setter takes numpy only) ----------------
    @FourierOperatorBase.smaps.setter
    def smaps(self, new_smaps):
        if new_smaps is None:
            self._smaps = None
            return
        if tuple(new_smaps.shape[1:]) != self.shape:
            raise ValueError(f"smaps have shape {tuple(new_smaps.shape)}; expected (n_coils, *{self.shape})")
        if new_smaps.shape[0] != self.n_coils:
            warnings.warn("updating number of coils via smaps.")
            self.n_coils = new_smaps.shape[0]
        self._smaps = new_smaps

    def compute_density(self, method=None):
        """MRI-NUFFT's compute_density; density=True (the "pipe" method) runs fieldft's estimate on
        this operator's device."""
        if method is True:
            method = {"name": "pipe"}
        if isinstance(method, dict) and method.get("name") == "pipe":
            method = {"backend": self.backend, "device": self.device, **method}
        super().compute_density(method)

    # -- the fieldft operators, built once per configuration -------------------------------------
    @property
    def field_model(self) -> str:
        """'nufft' without a field map, else 'dft' or 'tseg' (what field_model='auto' chose)."""
        return self._operators()["kind"]

    def _kind(self, enc):
        if not enc.has_field:
            return "nufft"
        if self._field_model != "auto":
            return self._field_model
        choice = _mri.choose_field_model(enc, coils=self.n_coils * self.n_batchs, accuracy=self._field_accuracy,
                                         eps=self.eps, device="cpu" if self._device < 0 else "cuda",
                                         dtype=self.cpx_dtype)
        return choice["encoding"]

    def _operators(self):
        key = (self.n_coils, self.n_batchs, self._device)
        cached = self._cache_key
        if cached is not None and cached[0] == key and cached[1] is self._smaps and cached[2] is self._density:
            return self._ops
        enc = self._make_encoding()
        kind = self._kind(enc)
        device = "cpu" if self._device < 0 else f"cuda:{self._device}"
        place = dict(dtype=self.cpx_dtype, device=device, nthreads=self._nthreads)
        b, c = self.n_batchs, self.n_coils
        tseg = dict(accuracy=self._field_accuracy)
        if self.uses_sense:
            a = _mri.sense(enc, _host(self._smaps), kind=kind, eps=self.eps, toeplitz=self._toeplitz,
                           **(tseg if kind == "tseg" else {}), **place, **(self._options if kind != "dft" else {}))
            if b > 1:
                a = _op.batch(a, b)
        elif kind == "nufft":
            a = _mri.NufftEncoding(enc, self.eps, batch=b * c, toeplitz=self._toeplitz, **place, **self._options)
        elif kind == "dft":
            a = _mri.DftEncoding(enc, batch=b * c, **place)
        else:
            a = _mri.TimeSegmentedEncoding(enc, eps=self.eps, batch=b * c, **tseg, **place, **self._options)
        core, scale = a, 1.0 / float(self.norm_factor)
        a = _op.scale(scale, core)
        adjoint, weighted_normal = a.H, None
        if self._density is not None:
            w = np.ascontiguousarray(np.broadcast_to(_host(self._density, np.float64).real.reshape(-1),
                                                     (b * c, self.n_samples))).reshape(a.oshape)
            d = _op.diag(w, dtype=self.cpx_dtype, device=device, nthreads=self._nthreads)
            adjoint = _op.compose(a.H, d)
            if self._toeplitz != "off":  # AᴴDA with D in the Toeplitz kernel, where the model has one
                n = core.weighted_normal(_to_device(w, self._device))
                weighted_normal = None if n is None else _op.scale(scale * scale, n)
        self._ops = {"A": a, "AH": adjoint, "AHDA": weighted_normal, "kind": kind}
        # Rebuilt when the coils, batches, maps or weights change (MRI-NUFFT's get_lipschitz_cst
        # drops the maps and coils for a while); arrays by identity: replace them, do not edit them.
        self._cache_key = (key, self._smaps, self._density)
        return self._ops

    # -- MRI-NUFFT's operator interface ------------------------------------------------------------
    def _apply(self, operator, data, in_shape, out_shape):
        local = _cast(_to_device(data, self._device), self.cpx_dtype)
        result = operator(local.reshape(in_shape))
        return _back(result.reshape(self._squeezed(out_shape)), data)

    def _squeezed(self, shape):
        """MRI-NUFFT's _safe_squeeze as a shape (axis 1, then axis 0, where of size 1), so that
        one reshape does it in every framework (torch's squeeze takes no `axis`)."""
        shape = tuple(shape)
        if self.squeeze_dims:
            if len(shape) > 1 and shape[1] == 1:
                shape = shape[:1] + shape[2:]
            if len(shape) > 0 and shape[0] == 1:
                shape = shape[1:]
        return shape

    def op(self, data, ksp=None):
        """k-space of an image: (n_batchs, n_coils or 1 with smaps, *shape) -> (n_batchs, n_coils, M),
        axes of size 1 squeezed when squeeze_dims. ksp: accepted for MRI-NUFFT's signature; the
        result is a new array."""
        self.check_shape(image=data, ksp=ksp)
        ops = self._operators()
        return self._apply(ops["A"], data, ops["A"].ishape, self.ksp_full_shape)

    def adj_op(self, coeffs, img=None):
        """Adjoint (density-weighted when the operator has density): (n_batchs, n_coils, M) ->
        (n_batchs, n_coils or 1 with smaps, *shape), squeezed when squeeze_dims."""
        self.check_shape(image=img, ksp=coeffs)
        ops = self._operators()
        return self._apply(ops["AH"], coeffs, ops["A"].oshape, self.img_full_shape)

    def data_consistency(self, image_data, obs_data):
        """The gradient Aᴴ D (A x - y) of the data-consistency term (D the density weights, or I),
        as AᴴDA x - AᴴD y with the normal operator's fast form where the model has one (fieldft's
        Toeplitz normal, with D in its kernel), else as Aᴴ D (A x - y)."""
        self.check_shape(image=image_data, ksp=obs_data)
        ops = self._operators()
        a, ah = ops["A"], ops["AH"]
        x = _cast(_to_device(image_data, self._device), self.cpx_dtype).reshape(a.ishape)
        y = _cast(_to_device(obs_data, self._device), self.cpx_dtype).reshape(a.oshape)
        if self._density is None:
            grad = a.N(x)
            grad -= ah(y)
        elif ops["AHDA"] is not None:
            grad = ops["AHDA"](x)
            grad -= ah(y)
        else:
            r = a(x)
            r -= y
            grad = ah(r)
        return _back(grad.reshape(self._squeezed(self.img_full_shape)), image_data)

    # -- off-resonance ------------------------------------------------------------------------------
    def with_off_resonance_correction(self, readout_time, b0_map=None, r2star_map=None, mask=None,
                                      interpolator="fieldft"):
        """An operator with off-resonance correction. interpolator "fieldft" (the default; also
        "fieldft-dft", "fieldft-tseg", "fieldft-auto", or {"name": ..., "accuracy": a}): a new
        fieldft operator with the field map in its model (exact DFT or time segmentation; `mask`
        is not needed: the model is accurate over the whole map). Any of MRI-NUFFT's own
        interpolators ("svd", "mti", "mfi", a (B, C) tuple), or an R2* map (fieldft's model is a
        real field map): MRI-NUFFT's MRIFourierCorrected around this operator."""
        name, options = interpolator, {}
        if isinstance(interpolator, dict):
            options = dict(interpolator)
            name = options.pop("name", None)
        if not isinstance(name, str) or name not in _ORC_NAMES:
            return super().with_off_resonance_correction(readout_time, b0_map, r2star_map, mask, interpolator)
        if r2star_map is not None or (b0_map is not None and np.iscomplexobj(_host(b0_map))):
            raise ValueError("fieldft's field-corrected model takes a real b0_map (Hz) without R2*; pass "
                             "interpolator='svd' (or 'mti', 'mfi') for MRI-NUFFT's own correction with R2*")
        if b0_map is None:
            raise ValueError("b0_map is required for fieldft's off-resonance correction")
        unknown = sorted(set(options) - {"accuracy"})
        if unknown:
            raise TypeError(f"unknown interpolator option(s) {', '.join(unknown)} for {name!r} (takes accuracy)")
        return self._copy(b0_map=b0_map, readout_time=readout_time, field_model=_ORC_NAMES[name],
                          field_accuracy=options.get("accuracy", self._field_accuracy))

    def _copy(self, **changes):
        args = dict(samples=self._samples, shape=self.shape, density=self._density, n_coils=self.n_coils,
                    n_batchs=self.n_batchs, smaps=self._smaps, squeeze_dims=self.squeeze_dims, n_trans=self.n_trans,
                    eps=self.eps, device=_op._device_name(self._device), toeplitz=self._toeplitz,
                    b0_map=self._b0_map, readout_time=self._readout_time, field_model=self._field_model,
                    field_accuracy=self._field_accuracy, nthreads=self._nthreads, _normalized_samples=True,
                    **self._options)
        args.update(changes)
        new = type(self)(**args)
        new._density_method = self._density_method
        return new

    @property
    def b0_map(self):
        """The off-resonance map in Hz (MRI-NUFFT's sign), or None."""
        return self._b0_map

    @property
    def readout_time(self):
        return self._readout_time

    # -- density ------------------------------------------------------------------------------------
    @classmethod
    def pipe(cls, kspace_loc, volume_shape, max_iter=10, osf=2, normalize=True, **kwargs):
        """MRI-NUFFT's "pipe" density compensation (density=True), computed by fieldft: the
        Pipe & Menon (1999) iteration of fieldft.mri.density_compensation with max_iter steps on a
        grid of osf cells per cycle/FOV, then MRI-NUFFT's normalisation (normalize: the weighted
        adjoint of the forward of a constant image has mean magnitude 1). kwargs: the operator's
        arguments (device, eps, ...). Returns M real weights (numpy)."""
        traj = proper_trajectory(_host(kspace_loc), normalize="pi")  # as the operator takes samples
        shape = tuple(int(n) for n in volume_shape)
        real = np.float64 if traj.dtype == np.float64 else np.float32
        enc = _mri.Encoding(shape, traj.astype(np.float64) / (2 * np.pi) * np.asarray(shape, dtype=np.float64))
        device = _parse_device(kwargs.get("device"), kspace_loc)
        weights = _mri.density_compensation(enc, iterations=max_iter, oversampling=float(osf), dtype=real,
                                            device=_op._device_name(device))
        if normalize:
            test = cls(kspace_loc, shape, **kwargs)
            image = np.ones(shape, dtype=test.cpx_dtype)
            psf = test.adj_op(weights * test.op(image))
            weights = weights / np.mean(np.abs(_host(psf)))
        return weights.astype(real, copy=False)

    # -- information --------------------------------------------------------------------------------
    @property
    def device(self) -> str:
        """'cpu' or 'cuda:N': where the operator runs."""
        return _op._device_name(self._device)

    def __repr__(self):
        return (f"MRIFieldft(shape={self.shape}, n_samples={self.n_samples}, n_coils={self.n_coils}, "
                f"n_batchs={self.n_batchs}, uses_sense={self.uses_sense}, uses_density={self.uses_density}, "
                f"eps={self.eps:g}, device={self.device}, dtype={self.cpx_dtype})")

