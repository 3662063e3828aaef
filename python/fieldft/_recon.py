"""fieldft.recon: one call from multi-coil non-Cartesian k-space to an image.

    image = fieldft.recon(kspace, coords, (256, 256), maps, iterations=30)      # numpy, cupy or torch

It builds the SENSE model y_c = E(S_c ∘ x) (fieldft.mri: the NUFFT; with a field map, time
segmentation on the NUFFT or the exact DFT), or the multi-shot pcSENSE model
y_{s,c} = E_s(S_c ∘ e^{iφ_s} ∘ x) when shot phase maps are given, then runs a solver from
fieldft.solve on the arrays' device, with a progress bar (tqdm where installed, else one line on
stderr) and an optional per-iteration callback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import time
from typing import Callable, Optional

import numpy as np

from . import _arrays, _core, mri, op, solve

__all__ = ["recon"]

_METHODS = ("cg", "pwls", "l1-wavelet", "tv")
_ENCODINGS = ("nufft", "dft", "tseg", "auto")
_SPLITS = ("auto", "problems", "coils", "none")


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


def recon(kspace, coords, shape, maps=None, *, devices=None, split: str = "auto", **options):
    """Reconstructs an image from multi-coil non-Cartesian k-space (see _recon_one for the
    options), one problem with its coils shared by several devices or MPI ranks, or P independent
    problems dealt to devices or MPI ranks.

    devices: CUDA device ordinals (e.g. [0, 1]).
    split: how the work is spread over the places (the devices, or the ranks under mpirun with
      mpi4py importable and MPI_COMM_WORLD's size K > 1):
      "problems"  P independent problems: kspace (P, C, M) numpy, one problem per leading entry
                  (slices after an inverse FFT along k_z, frames of one trajectory), sharing
                  coords, times and shots; maps, field_map and phase_maps then carry the leading
                  P axis too (or are None / a string). Problems are dealt dynamically to one host
                  thread per device (each a whole problem on its device: the image is the one a
                  single device gives). Returns (P, *shape) numpy (with info=True, a list of
                  results). Under mpirun, problem i runs on rank i mod K (on devices[local rank
                  mod len(devices)], else `device`) and one Allgatherv of MPI_COMM_WORLD gives
                  every rank the whole (P, *shape) result.
      "coils"     ONE problem, kspace (C, M) numpy (and numpy maps, weights): place r of K holds
                  the coils fieldft.dist.split(C, K, r), their maps and k-space rows, builds
                  their SENSE (or pcSENSE) model and wraps it in fieldft.dist.rank_sum; the same
                  CG runs on every place, with one image-sized sum per iteration (NCCL between the
                  devices of this process, one host thread each; under mpirun MPI between CPU
                  ranks, or NCCL over MPI between GPU ranks, rank r on devices[local rank mod
                  len(devices)]). Every place keeps the same image; returns it as numpy (on every
                  rank under mpirun). It differs from one place's image only by the order of the
                  coil sums (float rounding). method="cg" only (PWLS's line search and the
                  objectives of FISTA and ADMM would differ per share). Maps estimated from the
                  data ("rss", "espirit"), the scaling and encoding="auto"'s choice are computed
                  once (on rank 0 under mpirun) for all shares. Needs C >= K; several devices of
                  one process need a build with NCCL, mpirun one with MPI and mpi4py on the same
                  MPI. Under mpirun every rank passes the same arguments.
      "none"      no spreading: this process alone solves the problem (under mpirun too; devices
                  with one entry: on that device).
      "auto"      (default) "problems" for a stack (P, C, M); for one problem "coils" when
                  devices has more than one entry or under mpirun, else "none".
    """
    if split not in _SPLITS:
        raise _core.InvalidArgumentError(f"split={split!r} is not one of {', '.join(map(repr, _SPLITS))}")
    problems = isinstance(kspace, np.ndarray) and kspace.ndim == 3
    if devices is not None:
        if isinstance(devices, (str, int)) or not len(devices):
            raise _core.InvalidArgumentError(f"devices={devices!r}: expected a non-empty list of CUDA device ordinals")
        devices = [int(d) for d in devices]
    if split == "coils" and problems:
        raise _core.ShapeMismatchError(f"split='coils' shares the coils of ONE problem, kspace (C, M); got a stack "
                                       f"{tuple(kspace.shape)} of independent problems: use split='problems' "
                                       "(or 'auto')")
    if split == "none" or (not problems and split != "problems"):
        world = _mpi_world() if split != "none" else None
        if split == "coils" or world is not None or (devices is not None and len(devices) > 1):
            return _recon_coils(kspace, coords, shape, maps, devices, world, options)
        if devices is not None:
            if len(devices) > 1:
                raise _core.InvalidArgumentError(f"split='none' runs on one place; got devices={devices}")
            if options.get("device") is not None:
                raise _core.InvalidArgumentError("give devices= or device=, not both")
            options["device"] = f"cuda:{devices[0]}"
        with _current_device(options.get("device"), kspace):
            return _recon_one(kspace, coords, shape, maps, **options)
    world = _mpi_world() if problems else None
    if devices is None and world is None:
        with _current_device(options.get("device"), kspace):
            return _recon_one(kspace, coords, shape, maps, **options)
    k = np.asarray(kspace) if isinstance(kspace, np.ndarray) else None
    if k is None or k.ndim != 3:
        raise _core.ShapeMismatchError("recon with devices= or under mpirun takes P independent problems: kspace as a "
                                       f"numpy array (P, C, M), got {type(kspace).__name__} of shape "
                                       f"{tuple(getattr(kspace, 'shape', ()))}")
    count = k.shape[0]
    per = {}
    for name, value in (("maps", maps), ("field_map", options.pop("field_map", None)),
                        ("phase_maps", options.pop("phase_maps", None))):
        if value is not None and not isinstance(value, str) and len(value) != count:
            raise _core.ShapeMismatchError(f"`{name}` has {len(value)} entries along its first axis; expected one per "
                                           f"problem ({count})")
        per[name] = value
    devs = [int(d) for d in devices] if devices is not None else None
    info = options.get("info", False)
    show = options.pop("progress", True)
    default_device = options.pop("device", None)  # MPI ranks without devices=: where each rank runs

    def one(i, device):
        args = {n: (v if v is None or isinstance(v, str) else v[i]) for n, v in per.items()}
        m = args.pop("maps")
        with _current_device(device, None):
            return _recon_one(k[i], coords, shape, m, device=device, progress=False, **args, **options)

    results = [None] * count
    if world is not None:
        rank, size = world.Get_rank(), world.Get_size()
        device = f"cuda:{devs[_local_rank() % len(devs)]}" if devs else default_device
        bar = _Progress(len(range(rank, count, size)), "fieldft recon (rank 0)") if show and rank == 0 else None
        failure = None
        try:
            for n, i in enumerate(range(rank, count, size)):
                results[i] = one(i, device)
                if bar is not None:
                    bar.update(solve.Report(iteration=n + 1, residual=0.0, seconds=time.perf_counter() - bar.start))
        except Exception as e:  # agreed below, so that no rank waits in the Allgatherv
            failure = e
        finally:
            if bar is not None:
                bar.close()
        from mpi4py import MPI
        failed = world.allreduce(0 if failure is None else rank + 1, op=MPI.MAX)
        if failed:
            message = world.bcast(None if failure is None else f"{type(failure).__name__}: {failure}", root=failed - 1)
            if failure is not None:
                raise failure
            raise _core.InternalError(f"fieldft.recon: rank {failed - 1} of {size} failed: {message}")
        # Every rank gets every image: one Allgatherv of each rank's own images (problems rank,
        # rank + K, ...), then put in problem order. (Before: one Allreduce of the whole result, the
        # other ranks adding zeros; 34 MB over 2 / 3 ranks on 2 cores: 19 / 44 ms against 16 / 24.)
        own = [results[i][0] if info else results[i] for i in range(rank, count, size)]
        plane = tuple(own[0].shape) if own else tuple(int(n) for n in shape)
        dtype = own[0].dtype if own else k.dtype  # a rank without a problem (count < size): the data's
        mine = np.ascontiguousarray(np.stack(own)) if own else np.zeros((0,) + plane, dtype=dtype)
        per = int(np.prod(plane))
        gathered = np.empty((count,) + plane, dtype=dtype)
        world.Allgatherv(mine, [gathered, [len(range(r, count, size)) * per for r in range(size)]])
        image = np.empty_like(gathered)
        image[np.concatenate([np.arange(r, count, size) for r in range(size)])] = gathered
        return (image, [results[i][1] if results[i] is not None else None for i in range(count)]) if info else image
    import threading
    lock = threading.Lock()
    state = {"next": 0, "done": 0, "error": None}
    bar = _Progress(count, "fieldft recon (problems)") if show else None

    def worker(dev):
        while True:
            with lock:
                i = state["next"]
                if i >= count or state["error"] is not None:
                    return
                state["next"] = i + 1
            try:
                results[i] = one(i, f"cuda:{dev}")
            except Exception as e:  # the first stops the dealing; threads finish their problem
                with lock:
                    if state["error"] is None:
                        state["error"] = (i, dev, e)
                return
            with lock:
                state["done"] += 1
                if bar is not None:
                    bar.update(solve.Report(iteration=state["done"], residual=0.0,
                                            seconds=time.perf_counter() - bar.start))

    threads = [threading.Thread(target=worker, args=(d,)) for d in devs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if bar is not None:
        bar.close()
    if state["error"] is not None:
        i, dev, e = state["error"]
        raise type(e)(f"problem {i} on cuda:{dev}: {e}") from e
    images = [r[0] if info else r for r in results]
    image = np.stack(images)
    return (image, [r[1] for r in results]) if info else image


def _recon_coils(kspace, coords, shape, maps, devices, world, options):
    """One problem with its coils shared (split="coils"): by the ranks of `world` (mpi4py, under
    mpirun), else by `devices` (one host thread each), else by one place (options' device)."""
    from . import dist
    device = options.pop("device", None)
    if devices is not None and device is not None:
        raise _core.InvalidArgumentError("give devices= or device=, not both")
    parts = world.Get_size() if world is not None else len(devices) if devices is not None else 1
    coils = 1 if np.ndim(kspace) == 1 else int(np.shape(kspace)[0])
    if coils < parts:
        raise _core.InvalidArgumentError(f"split='coils': {coils} coil{'s' if coils != 1 else ''} cannot be shared "
                                         f"by {parts} places (each needs at least one); use fewer")
    if world is not None:
        place = f"cuda:{devices[_local_rank() % len(devices)]}" if devices else str(device or "cpu")
        host = dist.mpi(world)
        comms = [dist.nccl_over(host, _ordinal(place)) if place.startswith("cuda") else host]
        places = [place]
    elif devices is not None and len(devices) > 1:
        if not dist.have_nccl():
            raise _core.BackendUnavailableError(
                f"split='coils' over devices {devices} sums the image between them with NCCL, and this fieldft "
                "was built without it (a CUDA build with FIELDFT_NCCL: nccl.h and libnccl, e.g. pip install "
                "nvidia-nccl-cu13); use one device, or split='problems' for a stack")
        comms, places = dist.nccl_devices(devices), [f"cuda:{d}" for d in devices]
    else:
        comms = [dist.single()]
        places = [f"cuda:{devices[0]}" if devices else str(device or "cpu")]
    return _recon_one(kspace, coords, shape, maps, **options, _coils=_CoilSplit(places, comms, world))


def _ordinal(device: str) -> int:
    return int(device.split(":")[1]) if ":" in device else 0


def _mpi_world():
    """MPI_COMM_WORLD when mpi4py is importable and this process runs under mpirun with K > 1."""
    import os
    if int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE", "1")) or 1) <= 1:
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD if MPI.COMM_WORLD.Get_size() > 1 else None


def _local_rank():
    import os
    for name in ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def _recon_one(kspace, coords, shape, maps=None, *, method: str = "cg", weights=None, lam: float = 0.0,
               iterations: int = 30, tol: float = 0.0, encoding: str = "auto", eps: float = 1e-4,
               accuracy: float = 1e-3, field_map=None, times=None, shots=None, phase_maps=None, field=None,
               device=None, nthreads: int = 0, progress: bool = True, delta: float = 0.01,
               levels: int = 4, rho: float = 1.0, cg_iterations: int = 5,
               callback: Optional[Callable[[solve.Report], Optional[bool]]] = None, info: bool = False,
               gram: bool = False, _coils: Optional["_CoilSplit"] = None):
    """Reconstructs an image from multi-coil non-Cartesian k-space (with `_coils`, recon's
    split="coils": the data prepared here once, then solved by the coil shares of _coils' places).

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
    field_map: the off-resonance map Δω in rad/s, of the image shape (numpy, cupy or torch);
      times: the M readout times in seconds (required with a field map). The model's phase is
      exp(-i Δω_v t_j) (fieldft.mri.Encoding). `field` is an older name of field_map.
    shots: M integer shot labels >= 0 (fieldft.mri.shot_labels makes them for the simulated
      trajectories); phase_maps: (S, *shape) real phases in radians, one per shot, S = the
      largest label + 1 (1 without labels). With phase_maps the model is pcSENSE,
      y_{s,c} = E_s(S_c ∘ e^{+iφ_s} ∘ x) (fieldft.mri.pcsense: φ_s is the phase of shot s's own
      image relative to x); without, shots only label the samples. Give coil maps explicitly
      with phase maps: maps estimated from the data carry the shots' phases.
    encoding: "nufft" (the fast transform; no field map), "dft" (the exact field-corrected DFT),
      "tseg" (time segmentation on the NUFFT: the field map through L NUFFTs, L chosen so that
      the worst-case phase error is within `accuracy`; fieldft.mri.TimeSegmentedEncoding) or
      "auto" (default): "nufft" without a field map; with one, "dft" or "tseg" by predicted cost
      for `iterations` iterations (fieldft.mri.choose_field_model; its reason is printed with
      progress=True and, with info=True, the result carries the choice's dict as
      `encoding_choice`).
    gram: with phase_maps and encoding="dft", pcSENSE's normal through the stored Gram matrix of the
      exact-DFT model (fieldft.mri.pcsense's gram: on a GPU in complex64, faster iterations for a
      set-up of voxels/32 DFT passes and voxels² stored values; elsewhere no change).
    eps: the NUFFT's tolerance ("nufft", "tseg"). accuracy: the time segmentation's ("tseg").
    device: where to run (default: where kspace is). Host arrays with device="cuda:N" are moved
      to that device (with cupy) and the image comes back as numpy.
    progress: a progress bar (forces one residual per iteration onto the host).
    callback(fieldft.solve.Report): after every iteration; return False to stop.
    info=True returns (image, fieldft.solve.Result).
    """
    if method not in _METHODS:
        raise _core.InvalidArgumentError(f"method {method!r} is not one of {', '.join(_METHODS)}")
    if encoding not in _ENCODINGS:
        raise _core.InvalidArgumentError(f"encoding {encoding!r} is not one of {', '.join(_ENCODINGS)}")
    if gram and (encoding != "dft" or phase_maps is None):
        raise _core.InvalidArgumentError("gram=True: the stored Gram normal is multi-shot pcSENSE's on the exact DFT; it "
                                         f"needs phase_maps and encoding='dft' (given encoding={encoding!r}"
                                         f"{', no phase_maps' if phase_maps is None else ''})")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise _core.InvalidArgumentError(f"iterations must be an integer >= 1, got {iterations!r}")
    if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
        raise _core.InvalidArgumentError(f"lam must be a finite number >= 0, got {lam!r}")
    if _coils is not None and method != "cg":
        raise _core.NotImplementedFeatureError(
            f"method={method!r} with split='coils': only 'cg' runs on coils shared by several places (pwls' line "
            "search takes k-space dots that differ per share; fista and admm would report only one share's "
            "objective); use method='cg', or split='none'")
    k = _arrays.inspect(kspace, "kspace")
    if _coils is not None and k.on_device:
        raise _core.ContextMismatchError("split='coils' takes host (numpy) k-space: each place's share of the coils "
                                         "is moved to its device (pass the arrays as numpy)")
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
    if field is not None:
        if field_map is not None:
            raise TypeError("recon: give field_map or its older name field, not both")
        field_map = field
    if field_map is not None and times is None:
        raise _core.InvalidArgumentError("recon: a field_map needs the readout times (times=, M values in "
                                         "seconds): without them the off-resonance phase Δω·t is zero")
    auto = encoding == "auto"
    if auto and field_map is None:
        encoding = "nufft"
    if encoding == "nufft" and field_map is not None:
        raise _core.InvalidArgumentError("encoding='nufft' cannot apply a field map; use encoding='tseg' (time "
                                         "segmentation on the NUFFT) or 'dft' (the exact field-corrected DFT), "
                                         "or encoding='auto'")
    device = _device_of(k) if device is None else device
    # The one-call API runs where it is asked: host data with device="cuda:N" goes to that device
    # (cupy) once, here, and the image comes back to the host (the operators themselves never copy).
    to_host = str(device).startswith("cuda") and not k.on_device
    if to_host:
        kspace = _to_device(kspace, device, "kspace")
        weights = None if weights is None else _to_device(weights, device, "weights")
        k = _arrays.inspect(kspace, "kspace")
    enc = mri.Encoding(shape, coords, times=times, field=field_map, shots=shots)
    if enc.num_samples != k.shape[-1]:
        raise _core.ShapeMismatchError(f"`kspace` has {k.shape[-1]} samples per coil but `coords` has "
                                       f"{enc.num_samples}")
    dtype = k.dtype
    choice = None
    if auto and field_map is not None:
        solver_place = device if _coils is None else _coils.places[0]
        choice = _decide(_coils, lambda: mri.choose_field_model(
            enc, coils if _coils is None else _coils.largest_share(coils), per_shot=phase_maps is not None,
            accuracy=accuracy, eps=eps, iterations=iterations,
            device="cuda" if str(solver_place).startswith("cuda") else "cpu", nthreads=nthreads, dtype=dtype))
        encoding = choice["encoding"]
        if progress and (_coils is None or _coils.root):
            print(f"fieldft recon: {choice['reason']}", file=sys.stderr)
    place = dict(dtype=dtype, device=device, nthreads=nthreads)
    kind = dict(kind=encoding, eps=eps, accuracy=accuracy)
    y = kspace if not single else kspace.reshape((1, -1))
    if estimate is not None:
        maps = _decide(_coils, lambda: mri.estimate_coil_maps(enc, y, method=estimate, nthreads=nthreads))
    # The solvers' scalars (ρ = ‖r‖², pᴴAᴴAp, …) are of the problem's precision and grow like
    # |S|⁶·|y|²: unnormalised maps (|S| ~ 1e5) overflow float32 (pᴴAᴴAp > 3.4e38, NaN images).
    # So the problem is solved in units where max_v Σ_c |S_c(v)|² = 1 and ‖y‖_rms = 1, and the
    # image, the weights λ (and δ, ρ) and the reported objective are mapped back (_Scaling).
    scaling = _decide(_coils, lambda: _Scaling(maps, y))  # the same λ' on every share
    if scaling.active:
        maps = maps / scaling.maps if maps is not None else None
        y = y / scaling.data
    if phase_maps is not None and maps is None:
        maps = np.ones((1,) + shape, dtype=dtype)

    def model(maps, coils, place):
        """The encoding operator of `coils` coils with sensitivities `maps` (or None) at `place`."""
        if phase_maps is not None:
            return mri.pcsense(enc, maps, phase_maps, gram=gram, **kind, **place)
        if maps is not None:
            return mri.sense(enc, maps, **kind, **place)
        if encoding == "nufft":
            return mri.NufftEncoding(enc, eps, batch=coils, **place)
        if encoding == "dft":
            return mri.DftEncoding(enc, batch=coils, **place)
        return mri.TimeSegmentedEncoding(enc, accuracy=accuracy, eps=eps, batch=coils, **place)

    a = model(maps, coils, place) if _coils is None else None
    w = None
    if weights is not None:
        wi = _arrays.inspect(weights, "weights")
        if tuple(wi.shape) == (enc.num_samples,) and (coils > 1 or _coils is not None):
            weights = _broadcast_coils(wi, coils)
        w = weights
    show = progress and (_coils is None or _coils.root)
    bar = _Progress(iterations, f"fieldft {method}" + ("" if _coils is None else " (coils split)")) if show else None
    cb = None
    if bar is not None or callback is not None:
        def cb(report):
            report = scaling.report(report)
            if bar is not None:
                bar.update(report)
            return None if callback is None else callback(report)
        if _coils is not None and callback is not None:
            cb = _coils.agreed_callback(cb)
    common = dict(weights=w, max_iter=iterations, tol=tol, callback=cb, info=True)
    sm, sd = scaling.maps, scaling.data
    try:
        if _coils is not None:
            x, result = _coils.solve(model, place, y, maps, lam=lam / sm ** 2, **common)
        elif method == "cg":
            x, result = solve.cg(a, y, lam=lam / sm ** 2, **common)
        elif method == "pwls":
            d = op.finite_difference(shape, **place)
            x, result = solve.pwls_pcg(a, y, d, beta=lam / sm ** 2, potential="hyperbolic", delta=delta * sm / sd,
                                       **common)
        elif method == "l1-wavelet":
            psi = op.wavelet(shape, min(levels, op.wavelet_max_levels(shape)), kind="daubechies4", **place)
            x, result = solve.fista(a, y, psi=psi, lam=lam / (sm * sd), **common)
        else:
            d = op.finite_difference(shape, **place)
            x, result = solve.admm(a, y, d, lam=lam / (sm * sd), rho=rho / sm ** 2, cg_iterations=cg_iterations,
                                   isotropic=True, **common)
    finally:
        if bar is not None:
            bar.close()
    if scaling.active:
        x = x * (sd / sm)
        result = scaling.report(result)
    if choice is not None:
        result = ReconResult(**dataclasses.asdict(result), encoding_choice=choice)
    if to_host:
        x = x.get()
    return (x, result) if info else x


def _current_device(device, kspace):
    """The CUDA device the solve runs on as cupy's current device (cupy allocates the results of
    array arithmetic there, e.g. the scaling of the data and image): `device` ("cuda:N") or, without
    one, the device of a cupy kspace; nothing to do otherwise."""
    ordinal = None
    if isinstance(device, str) and device.startswith("cuda"):
        ordinal = _ordinal(device)
    elif device is None and type(kspace).__module__.startswith("cupy"):
        ordinal = kspace.device.id
    if ordinal is None:
        return contextlib.nullcontext()
    try:
        import cupy
    except ImportError:
        return contextlib.nullcontext()
    return cupy.cuda.Device(ordinal)


def _decide(split, fn):
    """fn() computed once for a coil split (on MPI rank 0, then broadcast), so that every share
    solves with the same maps, scaling and model; plainly fn() otherwise."""
    return fn() if split is None else split.decide(fn)


class _CoilSplit:
    """Where the coil shares of one problem are solved: this process's places (device strings) and
    their communicators (fieldft.dist: single, NCCL over this process's devices, MPI or NCCL over
    MPI ranks); world: the mpi4py communicator under mpirun (None in one process)."""

    def __init__(self, places, comms, world=None):
        self.places, self.comms, self.world = list(places), list(comms), world
        self.parts = self.comms[0].size
        self.root = world is None or world.Get_rank() == 0

    def largest_share(self, coils):
        return -(-coils // self.parts)

    def decide(self, fn):
        if self.world is None:
            return fn()
        value, failure = None, None
        if self.world.Get_rank() == 0:
            try:
                value = fn()
            except Exception as e:  # broadcast, so that no rank waits
                failure = (type(e).__name__, str(e))
                self.world.bcast((None, failure), root=0)
                raise
        value, failure = self.world.bcast((value, None), root=0)
        if failure is not None:
            raise getattr(_core, failure[0], _core.InternalError)(f"rank 0: {failure[1]}")
        return value

    def agree(self, failure):
        """Every rank: raises when any rank's set-up failed (its own error on the failing rank)."""
        if self.world is None:
            if failure is not None:
                raise failure
            return
        from mpi4py import MPI
        rank, size = self.world.Get_rank(), self.world.Get_size()
        failed = self.world.allreduce(0 if failure is None else rank + 1, op=MPI.MAX)
        if failed:
            message = self.world.bcast(None if failure is None else f"{type(failure).__name__}: {failure}",
                                       root=failed - 1)
            if failure is not None:
                raise failure
            raise _core.InternalError(f"fieldft.recon: rank {failed - 1} of {size} failed: {message}")

    def agreed_callback(self, cb):
        """A callback whose decision every MPI rank takes together (any rank's False, or its
        exception, stops all: a rank that stopped alone would leave the others in a collective)."""
        if self.world is None:
            return cb
        from mpi4py import MPI
        state = {"error": None}

        def agreed(report):
            stop = 0
            try:
                stop = int(cb(report) is False)
            except Exception as e:
                state["error"], stop = e, 1
            if self.world.allreduce(stop, op=MPI.MAX):
                if state["error"] is not None:
                    raise state["error"]
                return False
            return None

        return agreed

    def solve(self, model, place, y, maps, *, lam, weights, max_iter, tol, callback, info):
        """CG on this process's shares: place i builds model(its maps, its coil count, place) on
        coils dist.split(C, K, rank) and wraps it in dist.rank_sum; x from place 0, as numpy."""
        from . import dist
        coils, w = y.shape[0], weights
        ops, ys, ws, failure = [], [], [], None
        try:
            for device, comm in zip(self.places, self.comms):
                b, e = dist.split(coils, comm.size, comm.rank)
                yr, wr = np.ascontiguousarray(y[b:e]), None if w is None else np.ascontiguousarray(w[b:e])
                if device.startswith("cuda"):
                    yr = _to_device(yr, device, "kspace")
                    wr = None if wr is None else _to_device(wr, device, "weights")
                part = model(None if maps is None else np.ascontiguousarray(maps[b:e]), e - b, {**place, "device": device})
                ops.append(dist.rank_sum(part, comm))
                # A share of one coil is a model of shape (M,), not (1, M): its rows in its shape,
                # here, where a mismatch is agreed on (cg_ranks' own checks come after).
                ys.append(yr.reshape(part.oshape))
                ws.append(None if wr is None else wr.reshape(part.oshape))
        except Exception as e:  # agreed below, so that no rank waits in the solve's collectives
            failure = e
        self.agree(failure)
        images, result = dist.cg_ranks(ops, self.comms, ys, weights=None if w is None else ws, lam=lam,
                                       max_iter=max_iter, tol=tol, callback=callback, info=True)
        x = images[0]
        if not isinstance(x, np.ndarray):
            x = x.get()
        return x, result


def _to_device(array, device: str, name: str):
    """A host array on CUDA device `device` ("cuda" or "cuda:N") as a cupy array."""
    try:
        import cupy
    except ImportError:
        raise _core.ContextMismatchError(
            f"`{name}` is a host array and device={device!r}: moving it to the GPU needs cupy (pip install "
            "cupy-cuda12x), or pass a cupy array or a torch CUDA tensor") from None
    with cupy.cuda.Device(_ordinal(device)):
        return cupy.asarray(np.asarray(array))


class _Scaling:
    """The units the solve runs in: maps divided by `maps` = sqrt(max_v Σ_c |S_c(v)|²) and data by
    `data` = ‖y‖_rms. With x' = x·maps/data the problem ½‖A'x' − y'‖² + λ'R(x') is the original
    one divided by data², when λ' = λ/maps² for Tikhonov and the hyperbolic penalty (whose δ scales
    like x: δ' = δ·maps/data), λ' = λ/(maps·data) for ℓ1 and TV, and ADMM's ρ' = ρ/maps²; the
    solvers' relative residuals are unchanged, their objectives are data² times smaller."""

    def __init__(self, maps, y):
        self.maps = self.data = 1.0
        # Each a few scalars from the arrays' own framework and device; the squares are taken
        # after dividing by the largest magnitude, so that they cannot overflow either.
        if maps is not None:
            top = float(abs(maps).max())
            if math.isfinite(top) and top > 0:
                self.maps = top * math.sqrt(float(((abs(maps) / top) ** 2).sum(0).max()))
        count = math.prod(getattr(y, "shape", ()))
        top = float(abs(y).max()) if count > 0 else 0.0
        if math.isfinite(top) and top > 0:
            self.data = top * math.sqrt(float(((abs(y) / top) ** 2).sum()) / count)
        self.active = self.maps != 1.0 or self.data != 1.0

    def report(self, r):
        """A solver Report or Result with its objective in the original units."""
        if not self.active or not math.isfinite(r.objective):
            return r
        return dataclasses.replace(r, objective=r.objective * self.data ** 2)


@dataclasses.dataclass(frozen=True)
class ReconResult(solve.Result):
    """solve.Result with the choice of encoding="auto" (fieldft.mri.choose_field_model's dict)."""
    encoding_choice: Optional[dict] = None


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
