"""fieldft.recon: one call from multi-coil non-Cartesian k-space to an image.

    image = fieldft.recon(kspace, coords, (256, 256), maps, iterations=30)      # numpy, cupy or torch

It builds the SENSE model y_c = E(S_c ∘ x) (fieldft.mri: the NUFFT, or the exact DFT with a field
map), then runs a solver from fieldft.solve on the arrays' device, with a progress bar (tqdm where
installed, else one line on stderr) and an optional per-iteration callback.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Callable, Optional

import numpy as np

from . import _arrays, _core, mri, op, solve

__all__ = ["recon"]

_METHODS = ("cg", "pwls", "l1-wavelet", "tv")
_ENCODINGS = ("nufft", "dft")


class _Progress:
    """A progress bar over the solver's iterations: tqdm when importable, else a line on stderr
    rewritten in place (only when stderr is a terminal; a final line otherwise)."""

    def __init__(self, total: int, desc: str):
        self.total = total
        self.desc = desc
        self.bar = None
        self.start = time.perf_counter()
        try:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=total, desc=desc, unit="it", leave=False)
        except ImportError:
            pass
        self.tty = sys.stderr.isatty()
        self.last = None

    def update(self, report: solve.Report) -> None:
        self.last = report
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(residual=f"{report.residual:.2e}", refresh=False)
        elif self.tty:
            print(f"\r{self.desc}: {report.iteration}/{self.total} residual {report.residual:.2e}", end="",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.last is not None:
            print(f"{chr(10) if self.tty else ''}{self.desc}: {self.last.iteration} iterations, residual "
                  f"{self.last.residual:.2e}, {time.perf_counter() - self.start:.3f} s", file=sys.stderr)


def _device_of(info) -> str:
    return "cpu" if not info.on_device else f"cuda:{info.device}"


def recon(kspace, coords, shape, maps=None, *, method: str = "cg", weights=None, lam: float = 0.0,
          iterations: int = 30, tol: float = 0.0, encoding: str = "nufft", eps: float = 1e-4, times=None,
          field=None, device=None, nthreads: int = 0, progress: bool = True, delta: float = 0.01,
          levels: int = 4, rho: float = 1.0, cg_iterations: int = 5,
          callback: Optional[Callable[[solve.Report], Optional[bool]]] = None, info: bool = False):
    """Reconstructs an image from multi-coil non-Cartesian k-space.

    kspace: (C, M) complex samples of C coils (or (M,) for one coil), numpy, cupy or torch; the
      image comes back in the same framework and on the same device, with kspace's dtype
      (complex64 or complex128).
    coords: (M, ndim) k-space positions in cycles per field of view, columns in image-axis order
      ((ky, kx) in 2D), within [-N/2, N/2] per axis (fieldft.mri.Encoding's convention).
    shape: the image shape, (Ny, Nx) or (Nz, Ny, Nx).
    maps: (C, *shape) coil sensitivities; "rss" or "espirit" estimates them from the data
      (fieldft.mri.estimate_coil_maps, default options); None: "rss" for C > 1, S = 1 for one coil.
    method and lam (the regularisation weight, >= 0; its scale is the data term's, ½‖Ex − y‖²):
      "cg"          conjugate gradients on the normal equations, λ‖x‖² (Tikhonov);
      "pwls"        PWLS-PCG with the edge-preserving hyperbolic penalty λ Σ ψ_δ(|Dx|) on first
                    differences D (PowerGrid's choice; `delta` is δ in image units);
      "l1-wavelet"  FISTA with λ‖Ψx‖₁, Ψ an orthonormal Daubechies-4 wavelet (`levels`);
      "tv"          ADMM with isotropic total variation λ Σ |Dx| (`rho`, `cg_iterations`).
    weights: real k-space weights W >= 0, (M,) (the same for every coil) or (C, M).
    encoding: "nufft" (the fast transform; no field map) or "dft" (the exact field-corrected DFT:
      times (M,) in seconds and field (*shape) in rad/s give the off-resonance phase).
    eps: the NUFFT's tolerance. device: where to run (default: where kspace is).
    progress: a progress bar (forces one residual per iteration onto the host).
    callback(fieldft.solve.Report): after every iteration; return False to stop.
    info=True returns (image, fieldft.solve.Result).
    """
    if method not in _METHODS:
        raise _core.InvalidArgumentError(f"method {method!r} is not one of {', '.join(_METHODS)}")
    if encoding not in _ENCODINGS:
        raise _core.InvalidArgumentError(f"encoding {encoding!r} is not one of {', '.join(_ENCODINGS)}")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise _core.InvalidArgumentError(f"iterations must be an integer >= 1, got {iterations!r}")
    if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
        raise _core.InvalidArgumentError(f"lam must be a finite number >= 0, got {lam!r}")
    k = _arrays.inspect(kspace, "kspace")
    if k.dtype not in (np.complex64, np.complex128):
        raise op.DtypeError(f"`kspace` has dtype {k.dtype}; expected complex64 or complex128")
    shape = tuple(int(n) for n in shape)
    single = len(k.shape) == 1
    if not single and len(k.shape) != 2:
        raise _core.ShapeMismatchError(f"`kspace` has shape {k.shape}; expected (coils, samples) or (samples,)")
    coils = 1 if single else k.shape[0]
    estimate = maps if isinstance(maps, str) else ("rss" if maps is None and coils > 1 else None)
    if estimate is not None and estimate not in ("rss", "espirit"):
        raise _core.InvalidArgumentError(f"maps={maps!r}: expected an array, None, 'rss' or 'espirit'")
    if maps is not None and estimate is None:
        mshape = tuple(getattr(maps, "shape", ()))
        if mshape != (coils,) + shape:
            raise _core.ShapeMismatchError(f"`maps` has shape {mshape}; expected {(coils,) + shape} "
                                           "(coils, *image shape)")
    device = _device_of(k) if device is None else device
    enc = mri.Encoding(shape, coords, times=times, field=field)
    if enc.num_samples != k.shape[-1]:
        raise _core.ShapeMismatchError(f"`kspace` has {k.shape[-1]} samples per coil but `coords` has "
                                       f"{enc.num_samples}")
    dtype = k.dtype
    if encoding == "nufft":
        if field is not None:
            raise _core.InvalidArgumentError("encoding='nufft' cannot apply a field map; use encoding='dft' "
                                             "(the exact field-corrected DFT)")
        e = mri.NufftEncoding(enc, eps, batch=coils, dtype=dtype, device=device, nthreads=nthreads)
    else:
        e = mri.DftEncoding(enc, batch=coils, dtype=dtype, device=device, nthreads=nthreads)
    y = kspace if not single else kspace.reshape((1, -1))
    if estimate is not None:
        maps = mri.estimate_coil_maps(enc, y, method=estimate, nthreads=nthreads)
    a = e if maps is None else e @ op.diag_expand(maps, dtype=dtype, device=device, nthreads=nthreads)
    w = None
    if weights is not None:
        wi = _arrays.inspect(weights, "weights")
        if tuple(wi.shape) == (enc.num_samples,) and coils > 1:
            weights = _broadcast_coils(wi, coils)
        w = weights
    bar = _Progress(iterations, f"fieldft {method}") if progress else None
    cb = None
    if bar is not None or callback is not None:
        def cb(report):
            if bar is not None:
                bar.update(report)
            return None if callback is None else callback(report)
    place = dict(dtype=dtype, device=device, nthreads=nthreads)
    common = dict(weights=w, max_iter=iterations, tol=tol, callback=cb, info=True)
    try:
        if method == "cg":
            x, result = solve.cg(a, y, lam=lam, **common)
        elif method == "pwls":
            d = op.finite_difference(shape, **place)
            x, result = solve.pwls_pcg(a, y, d, beta=lam, potential="hyperbolic", delta=delta, **common)
        elif method == "l1-wavelet":
            psi = op.wavelet(shape, min(levels, op.wavelet_max_levels(shape)), kind="daubechies4", **place)
            x, result = solve.fista(a, y, psi=psi, lam=lam, **common)
        else:
            d = op.finite_difference(shape, **place)
            x, result = solve.admm(a, y, d, lam=lam, rho=rho, cg_iterations=cg_iterations, isotropic=True,
                                   **common)
    finally:
        if bar is not None:
            bar.close()
    return (x, result) if info else x


def _broadcast_coils(wi, coils):
    """(M,) weights repeated for every coil, (C, M), in their framework."""
    w = wi.obj
    if wi.framework == "torch":
        return w.reshape(1, -1).expand(coils, -1).contiguous()
    if wi.framework == "numpy":
        return np.ascontiguousarray(np.broadcast_to(w.reshape(1, -1), (coils, w.shape[0])))
    import cupy
    with cupy.cuda.Device(wi.device):
        return cupy.ascontiguousarray(cupy.broadcast_to(cupy.asarray(w).reshape(1, -1), (coils, w.shape[0])))
