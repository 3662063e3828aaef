"""fieldft.io: files in and out, through fieldft's C++ readers and writers (src/io).

    a = fieldft.io.read_cfl("ksp")                   # BART .cfl/.hdr, as BART's own python/cfl.py
    fieldft.io.write_cfl("img", a)
    ksp = fieldft.io.read_bart_kspace("ksp")         # (coils, spokes, samples): fieldft's layout
    k = fieldft.io.read_bart_trajectory("traj")      # (spokes, samples, ndim), columns (ky, kx) / (kz, ky, kx)
    fieldft.io.write_nifti("x.nii.gz", image, fov_mm=(220, 220))   # magnitude float32
    fieldft.io.write_png("x.png", volume)            # mosaic of the z slices
    a = fieldft.io.read_npy("a.npy")                 # the C++ reader (numpy's np.load is the usual one)
    d = fieldft.io.read_ismrmrd("raw.h5")            # ISMRMRD raw data (a build with libismrmrd)
    image = fieldft.recon(d.kspace, d.coords, d.shape, d.coil_maps, field_map=d.field_map, times=d.times)
    fieldft.io.write_ismrmrd("out.h5", d)

Layouts. fieldft's Python arrays are (..., [Nz,] Ny, Nx) in C order, x last; BART's arrays are
column-major with x first ([x, y, z, coils], k-space [1, samples, spokes, coils], trajectory
[3, samples, spokes]). The same memory is both: a fieldft array is the transpose (`.T`) of the
BART array. The trajectory's values need no conversion: BART's unit is fieldft's, cycles per
field of view (k = ±N/2 at the grid's edge); only the column order is reversed (BART x, y, z;
fieldft ..., y, x). src/io/cfl.hpp records BART's sign, centre and scaling conventions
(`bart nufft` = fieldft's encoding / sqrt(voxels) for even sizes).

Every reader checks a file against its header before allocating, and refuses NaN/Inf unless
allow_nonfinite=True; every writer writes a temporary file and renames it, so an output is never
half written. Errors are fieldft.Error subclasses naming the file and what was expected.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

import numpy as np

from . import _core

__all__ = ["read_npy", "write_npy", "npy_header", "read_cfl", "write_cfl", "read_bart_kspace", "write_bart_kspace",
           "read_bart_trajectory", "write_bart_trajectory", "read_bart_image", "write_bart_image", "write_nifti",
           "nifti_available", "write_png", "preview", "IsmrmrdData", "read_ismrmrd", "write_ismrmrd",
           "ismrmrd_available"]

_NPY_DTYPES = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64",
               "complex64", "complex128"}


def _path(p) -> str:
    return os.fspath(p)


def _host_array(a, name):
    if not isinstance(a, np.ndarray):
        if hasattr(a, "__cuda_array_interface__") or hasattr(a, "device") and str(getattr(a, "device")) != "cpu":
            raise TypeError(f"{name}: a host (numpy) array is expected; copy device arrays to the host first")
        a = np.asarray(a)
    return a


# --- .npy --------------------------------------------------------------------------------------

def npy_header(path) -> dict:
    """The header of a .npy file: dtype (numpy name), shape, fortran_order, version (1, 2 or 3)."""
    dtype, shape, fortran, version = _core.io_npy_header(_path(path))
    return {"dtype": dtype, "shape": tuple(shape), "fortran_order": fortran, "version": version}


def read_npy(path, dtype=None, *, conversion: str = "lossless", allow_nonfinite: bool = False) -> np.ndarray:
    """A .npy file (versions 1.0-3.0) as a C-ordered numpy array, through fieldft's C++ reader.

    dtype: None keeps the stored type (bool included); otherwise the result's dtype, reached by
    `conversion`: "exact" (the file must hold it), "lossless" (default: only conversions that keep
    every value, e.g. int16 -> float32, float32 -> complex64), "any" (also narrowing; a value that
    does not survive, e.g. 1.5 -> int or an imaginary part -> real, is an error)."""
    path = _path(path)
    if dtype is None:
        stored = _core.io_npy_header(path)[0]
        data, shape = _core.io_read_npy(path, "", conversion, allow_nonfinite)
        out = data.reshape(shape)
        return out.astype(bool) if stored == "bool" else out
    name = np.dtype(dtype).name
    if name not in _NPY_DTYPES:
        raise TypeError(f"read_npy: dtype {name} is not supported (expected one of {sorted(_NPY_DTYPES)})")
    data, shape = _core.io_read_npy(path, name, conversion, allow_nonfinite)
    return data.reshape(shape)


def write_npy(path, array, *, fortran_order: bool = False) -> None:
    """Writes a .npy file (version 1.0, little-endian) that np.load reads back identically;
    fortran_order=True stores the data column-major, as np.save does for Fortran arrays."""
    a = _host_array(array, "write_npy")
    if a.dtype == np.bool_:
        raise TypeError("write_npy: bool arrays are not written by fieldft (use numpy's np.save)")
    a = a.astype(a.dtype.newbyteorder("="), copy=False)
    if a.dtype.name not in _NPY_DTYPES:
        raise TypeError(f"write_npy: dtype {a.dtype} is not supported (expected one of {sorted(_NPY_DTYPES)})")
    shape = [int(n) for n in a.shape]
    # Fortran order: the memory of a column-major a is the C-ordered a.T.
    buf = np.ascontiguousarray(a.T if fortran_order else a)
    _core.io_write_npy(_path(path), buf.ctypes.data, buf.size, a.dtype.name, shape, fortran_order)


# --- BART .cfl/.hdr ----------------------------------------------------------------------------

def read_cfl(name, *, allow_nonfinite: bool = False) -> np.ndarray:
    """A BART dataset (name, name.cfl or name.hdr) as BART's own python/cfl.py returns it: a
    complex64 array of the header's dimensions without trailing ones, in Fortran order
    (a[x, y, z, coil, ...]). Its transpose `.T` is fieldft's layout."""
    dims, data = _core.io_read_cfl(_path(name), allow_nonfinite)
    dims = list(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return data.reshape(dims, order="F")


def write_cfl(name, array) -> None:
    """Writes `array` (any shape, cast to complex64) as name.cfl/name.hdr with dims = array.shape,
    as BART's python/cfl.py writecfl does."""
    a = _host_array(array, "write_cfl")
    dims = [int(n) for n in a.shape] or [1]
    buf = np.ascontiguousarray(a.astype(np.complex64, copy=False).T)  # column-major memory
    _core.io_write_cfl(_path(name), dims, buf.ctypes.data, buf.size)


def _strip(a: np.ndarray, ndim: int, what: str, layout: str) -> np.ndarray:
    """BART array (Fortran order) padded or checked to `ndim` leading axes, the rest 1."""
    if a.ndim > ndim and any(n != 1 for n in a.shape[ndim:]):
        raise _core.ShapeMismatchError(f"BART {what} {list(a.shape)}: expected {layout} with 1 beyond")
    a = a.reshape(a.shape[:ndim] + (1,) * max(0, ndim - a.ndim), order="F")
    return a


def read_bart_kspace(name, *, allow_nonfinite: bool = False) -> np.ndarray:
    """Non-Cartesian k-space [1, samples, spokes, coils] as fieldft's (coils, spokes, samples)."""
    a = _strip(read_cfl(name, allow_nonfinite=allow_nonfinite), 4, "k-space", "[1, samples, spokes, coils]")
    if a.shape[0] != 1:
        raise _core.ShapeMismatchError(f"BART k-space {list(a.shape)}: expected [1, samples, spokes, coils]")
    return np.ascontiguousarray(a.T[..., 0])


def write_bart_kspace(name, data) -> None:
    """fieldft's k-space (coils, spokes, samples), (spokes, samples) or (samples,) as BART's
    [1, samples, spokes, coils]."""
    a = np.asarray(_host_array(data, "write_bart_kspace"))
    if a.ndim < 1 or a.ndim > 3:
        raise _core.InvalidArgumentError(f"write_bart_kspace: 1 to 3 axes (coils, spokes, samples) expected, got {a.ndim}")
    a = a.reshape((1,) * (3 - a.ndim) + a.shape)
    write_cfl(name, a.T[None])  # [1, samples, spokes, coils]


def read_bart_trajectory(name, ndim: int | None = None) -> np.ndarray:
    """A BART trajectory [3, samples, spokes] as fieldft's k of shape (spokes, samples, ndim) in
    cycles/FOV (no unit change), columns (ky, kx) in 2D or (kz, ky, kx) in 3D. ndim None: 3 when
    any kz is non-zero, else 2."""
    a = _strip(read_cfl(name), 3, "trajectory", "[3, samples, spokes]")
    if a.shape[0] not in (2, 3):
        raise _core.ShapeMismatchError(f"BART trajectory {list(a.shape)}: expected [3, samples, spokes]")
    if np.any(a.imag != 0):
        raise _core.InvalidArgumentError("BART trajectory: imaginary parts present; expected real coordinates")
    k = a.real.T  # (spokes, samples, 3) columns x, y, z
    if ndim is None:
        ndim = 3 if k.shape[-1] == 3 and np.any(k[..., 2] != 0) else 2
    if ndim not in (2, 3) or ndim > k.shape[-1]:
        raise _core.InvalidArgumentError(f"read_bart_trajectory: ndim must be 2 or 3 (the file has {k.shape[-1]} rows)")
    return np.ascontiguousarray(k[..., :ndim][..., ::-1], dtype=np.float32)


def write_bart_trajectory(name, k) -> None:
    """fieldft's k (..., samples, ndim) in cycles/FOV, columns (ky, kx) or (kz, ky, kx), as BART's
    [3, samples, spokes] (leading axes flattened into spokes)."""
    k = np.asarray(_host_array(k, "write_bart_trajectory"), dtype=np.float64)
    if k.ndim < 2 or k.shape[-1] not in (2, 3):
        raise _core.InvalidArgumentError(f"write_bart_trajectory: k of shape (..., samples, 2 or 3) expected, got {k.shape}")
    if not np.all(np.isfinite(k)):
        raise _core.NonFiniteError("write_bart_trajectory: non-finite k")
    k = k.reshape(-1, k.shape[-2], k.shape[-1])[..., ::-1]  # (spokes, samples, [x, y, z])
    t = np.zeros(k.shape[:2] + (3,), dtype=np.complex64)
    t[..., :k.shape[-1]] = k
    write_cfl(name, t.T)


def read_bart_image(name, *, allow_nonfinite: bool = False) -> np.ndarray:
    """A BART image or set of coil images / maps [x, y, z, coils] as fieldft's
    ([coils,] [Nz,] Ny, Nx): z and coils only when they are not 1."""
    a = _strip(read_cfl(name, allow_nonfinite=allow_nonfinite), 4, "image", "[x, y, z, coils]")
    out = a.T  # (coils, z, y, x)
    if out.shape[1] == 1:
        out = out[:, 0]
    if out.shape[0] == 1:
        out = out[0]
    return np.ascontiguousarray(out)


def write_bart_image(name, image, *, coils: bool = False) -> None:
    """fieldft's image ([Nz,] Ny, Nx), or with coils=True coil images / maps (C, [Nz,] Ny, Nx),
    as BART's [x, y, z, coils]."""
    a = np.asarray(_host_array(image, "write_bart_image"))
    spatial = a.ndim - (1 if coils else 0)
    if spatial not in (2, 3):
        raise _core.InvalidArgumentError(
            f"write_bart_image: ([C,] [Nz,] Ny, Nx) expected, got {a.ndim} axes (coils={coils})")
    if not coils:
        a = a[None]
    if spatial == 2:
        a = a[:, None]
    write_cfl(name, a.T)


# --- NIfTI, previews ---------------------------------------------------------------------------

def nifti_available() -> bool:
    """Whether this build writes NIfTI (built with libnifti2; otherwise write_nifti raises
    BackendUnavailableError)."""
    return bool(_core.io_nifti_available())


def _image_args(image, name, max_axes):
    a = _host_array(image, name)
    if a.dtype.kind == "c":
        a = a.astype(np.complex128 if a.dtype == np.complex128 else np.complex64, copy=False)
    elif a.dtype.kind in "fiub":
        a = a.astype(np.float64 if a.dtype == np.float64 else np.float32, copy=False)
    else:
        raise TypeError(f"{name}: real or complex data expected, got {a.dtype}")
    if a.ndim < 2 or a.ndim > max_axes:
        raise _core.InvalidArgumentError(f"{name}: 2 to {max_axes} axes expected, got {a.ndim} ({a.shape})")
    a = np.ascontiguousarray(a)
    return a, [int(n) for n in a.shape[::-1]]


def write_nifti(path, image, *, kind: str = "magnitude", fov_mm=None, frame_seconds: float = 0.0,
                description: str = "") -> None:
    """A NIfTI-1 file (.nii or .nii.gz) of an image (Ny, Nx), a volume (Nz, Ny, Nx) or frames
    (Nt, Nz, Ny, Nx). kind: "magnitude" (float32 |v|, the default), "phase" (float32 radians),
    "complex" (complex64) or "real". fov_mm: the field of view in millimetres in the image's axis
    order ((fov_y, fov_x) or (fov_z, fov_y, fov_x)); voxel sizes are fov / N (1 mm without it)."""
    a, shape = _image_args(image, "write_nifti", 4)
    fov = [0.0, 0.0, 0.0]
    if fov_mm is not None:
        f = [float(v) for v in np.atleast_1d(fov_mm)][::-1]  # to (x, y, z)
        spatial = min(a.ndim, 3)
        if len(f) != spatial:
            raise _core.InvalidArgumentError(f"write_nifti: fov_mm needs {spatial} values (one per spatial axis), got {len(f)}")
        fov[:len(f)] = f
    _core.io_write_nifti(_path(path), shape, a.ctypes.data, a.size, a.dtype.name, kind, fov, float(frame_seconds),
                         str(description))


def write_png(path, image, *, percentile: float = 99.5, columns: int = 0) -> None:
    """An 8-bit grayscale preview (.png or .pgm) of |image|: an image (Ny, Nx) or a mosaic of
    the slices of a volume (Nz, Ny, Nx), ⌈√Nz⌉ per row unless `columns`; the percentile-th
    percentile of the magnitudes is white (robust to a few bright voxels); y upwards."""
    a, shape = _image_args(image, "write_png", 3)
    _core.io_write_preview(_path(path), shape, a.ctypes.data, a.size, a.dtype.name, float(percentile), int(columns))


preview = write_png


# --- ISMRMRD -----------------------------------------------------------------------------------

def ismrmrd_available() -> bool:
    """Whether this build reads and writes ISMRMRD (built with libismrmrd; otherwise read_ismrmrd
    and write_ismrmrd raise BackendUnavailableError)."""
    return bool(_core.io_ismrmrd_available())


@dataclasses.dataclass
class IsmrmrdData:
    """Raw data in fieldft's Python layouts (the C++ io::RawData, src/io/ismrmrd.hpp).

    shape: the image grid, (Ny, Nx) or (Nz, Ny, Nx). kspace: (C, M) complex128, the samples of
    every readout in file order. coords: (M, ndim) k in cycles per field of view, columns in
    image-axis order ((ky, kx) or (kz, ky, kx)), fieldft.mri.Encoding's convention. times: (M,)
    seconds or None. shots: (M,) int32 labels (0 … num_shots-1). readouts: samples per readout
    (acquisition), summing to M. coil_maps (C, *shape) complex128, field_map (*shape) rad/s,
    phase_maps (S, *shape) radians, truth (*shape) complex128: from the NDArrays SENSEMap,
    FieldMap, PhaseMaps and Truth, or None; kspace and coil_maps hold single-precision values (as
    ISMRMRD acquisitions do; the reader and writer keep them in complex64). fov_mm: per image axis, in shape's order (0: not
    stored). trajectory: ISMRMRD's trajectory type ("spiral", "radial", "other", ...)."""

    kspace: np.ndarray
    coords: np.ndarray
    shape: tuple
    times: Optional[np.ndarray] = None
    shots: Optional[np.ndarray] = None
    readouts: Optional[np.ndarray] = None
    coil_maps: Optional[np.ndarray] = None
    field_map: Optional[np.ndarray] = None
    phase_maps: Optional[np.ndarray] = None
    truth: Optional[np.ndarray] = None
    fov_mm: Optional[tuple] = None
    trajectory: str = "other"

    @property
    def num_shots(self) -> int:
        return 1 if self.shots is None or self.shots.size == 0 else int(self.shots.max()) + 1


def read_ismrmrd(path, *, group: str = "dataset", encoding: int = 0, space: str = "encoded",
                 units: str = "auto", time_column: str = "auto", time_offset_s: float = 0.0,
                 shot_counter: str = "kspace_encode_step_1", select: Optional[dict] = None,
                 map_order: str = "x-fastest", read_maps: bool = True, coil_maps_path=None, field_map_path=None,
                 phase_maps_path=None, nyquist_tolerance: float = 1e-3, max_bytes: int = 0) -> IsmrmrdData:
    """An ISMRMRD file (HDF5) as IsmrmrdData, through the C++ reader (src/io/ismrmrd.hpp, which
    documents every rule). space: "encoded" or "recon". units of the trajectory: "auto" (the
    header's "trajectoryUnits", else cycles/FOV), "cycles/fov", "normalized", "1/m", "rad/m".
    time_column: "auto", "none", "last". shot_counter: the encoding counter that labels shots
    ("kspace_encode_step_1", "segment", ..., "none"). select: keep only readouts with these counter
    values, e.g. {"slice": 3} (keys slice, contrast, phase, repetition, set). map_order:
    "x-fastest" (ISMRMRD's image order) or "y-fastest" (PowerGrid's vectors). *_path: maps from
    separate ISMRMRD files. max_bytes: refuse files declaring more content (0: 16 GiB)."""
    sel = dict(select or {})
    keys = ("slice", "contrast", "phase", "repetition", "set")
    unknown = sorted(set(sel) - set(keys))
    if unknown:
        raise _core.InvalidArgumentError(f"read_ismrmrd: select has unknown keys {unknown}; expected {list(keys)}")
    (dim, grid, fov, coils, trajectory, readouts, kx, ky, kz, times, shots, num_shots, data, maps, field, phase,
     truth) = _core.io_read_ismrmrd(
        _path(path), group, int(encoding), space, units.lower(), time_column, float(time_offset_s), shot_counter,
        [int(sel.get(k, -1)) for k in keys], map_order, bool(read_maps), _path(coil_maps_path or ""),
        _path(field_map_path or ""), _path(phase_maps_path or ""), float(nyquist_tolerance), int(max_bytes))
    shape = tuple(int(n) for n in (grid[::-1] if dim == 3 else grid[1::-1]))
    m = kx.size
    cols = [kx, ky] + ([kz] if dim == 3 else [])
    coords = np.ascontiguousarray(np.stack(cols[::-1], axis=1))

    def image(a, k=None):
        if a.size == 0:
            return None
        return a.reshape(((k,) if k is not None else ()) + shape)

    return IsmrmrdData(
        kspace=data.astype(np.complex128).reshape((int(coils), m)), coords=coords, shape=shape, times=times if times.size else None,
        shots=shots, readouts=readouts, coil_maps=image(maps.astype(np.complex128), int(coils)), field_map=image(field),
        phase_maps=image(phase, int(num_shots)), truth=image(truth),
        fov_mm=tuple(float(v) for v in fov[:dim][::-1]), trajectory=trajectory)


def write_ismrmrd(path, data=None, *, kspace=None, coords=None, shape=None, times=None, shots=None, readouts=None,
                  coil_maps=None, field_map=None, phase_maps=None, truth=None, fov_mm=None,
                  trajectory: str = "other", map_order: str = "x-fastest") -> None:
    """Writes raw data as an ISMRMRD file that read_ismrmrd (and ISMRMRD's own tools) read back:
    either an IsmrmrdData `data`, or its fields as keywords (kspace (C, M) or (M,), coords
    (M, ndim) in cycles/FOV with columns (ky, kx) / (kz, ky, kx), shape; the rest optional, as in
    IsmrmrdData; readouts None: one readout per run of equal shot labels (all M samples without
    shots), split into pieces of at most 65535 samples, ISMRMRD's limit). The file is written under a temporary name and renamed
    when complete, so a failure leaves nothing half written."""
    if data is not None:
        if not isinstance(data, IsmrmrdData):
            raise TypeError("write_ismrmrd: data must be an IsmrmrdData (or give its fields as keywords)")
        f = dataclasses.asdict(data)
        kspace, coords, shape, times, shots, readouts = (f[k] for k in ("kspace", "coords", "shape", "times", "shots",
                                                                         "readouts"))
        coil_maps, field_map, phase_maps, truth = f["coil_maps"], f["field_map"], f["phase_maps"], f["truth"]
        fov_mm, trajectory = f["fov_mm"], f["trajectory"]
    if kspace is None or coords is None or shape is None:
        raise _core.InvalidArgumentError("write_ismrmrd: kspace, coords and shape are required")
    shape = tuple(int(n) for n in shape)
    dim = len(shape)
    if dim not in (2, 3):
        raise _core.InvalidArgumentError(f"write_ismrmrd: shape must be (Ny, Nx) or (Nz, Ny, Nx), got {shape}")
    k = np.asarray(_host_array(coords, "write_ismrmrd coords"), dtype=np.float64)
    if k.ndim != 2 or k.shape[1] != dim:
        raise _core.ShapeMismatchError(f"write_ismrmrd: coords of shape {k.shape}; expected (M, {dim})")
    m = k.shape[0]
    y = np.asarray(_host_array(kspace, "write_ismrmrd kspace"))
    y = y.reshape((1, -1)) if y.ndim == 1 else y
    if y.ndim != 2 or y.shape[1] != m:
        raise _core.ShapeMismatchError(f"write_ismrmrd: kspace of shape {y.shape}; expected (coils, {m})")
    coils = y.shape[0]

    def vec(a, dtype, name, n=None):
        if a is None:
            return None
        v = np.ascontiguousarray(np.asarray(_host_array(a, "write_ismrmrd " + name)), dtype=dtype).reshape(-1)
        if n is not None and v.size != n:
            raise _core.ShapeMismatchError(f"write_ismrmrd: {name} has {v.size} values; expected {n}")
        return v

    if shots is not None:
        shots = vec(shots, np.int32, "shots", m)
    if readouts is None:
        if shots is None or m == 0:
            readouts = [m]
        else:
            starts = np.flatnonzero(np.diff(shots)) + 1
            readouts = np.diff(np.concatenate(([0], starts, [m])))
        # ISMRMRD holds at most 65535 samples per acquisition.
        readouts = [min(65535, int(r) - i) for r in readouts for i in range(0, int(r), 65535)]
    voxels = int(np.prod(shape))
    num_shots = 1 if shots is None or m == 0 else int(shots.max()) + 1
    grid = list(shape[::-1]) + ([1] if dim == 2 else [])
    fov = [0.0, 0.0, 0.0]
    if fov_mm is not None:
        fv = [float(v) for v in fov_mm][::-1]
        if len(fv) != dim:
            raise _core.InvalidArgumentError(f"write_ismrmrd: fov_mm needs {dim} values, got {len(fv)}")
        fov[:dim] = fv
    _core.io_write_ismrmrd(
        _path(path), dim, grid, fov, coils, str(trajectory), vec(readouts, np.int64, "readouts"),
        vec(k[:, -1], np.float64, "kx"), vec(k[:, -2], np.float64, "ky"),
        vec(k[:, 0], np.float64, "kz") if dim == 3 else None, vec(times, np.float64, "times", m), shots, num_shots,
        vec(y, np.complex64, "kspace"), vec(coil_maps, np.complex64, "coil_maps", voxels * coils),
        vec(field_map, np.float64, "field_map", voxels), vec(phase_maps, np.float64, "phase_maps", voxels * num_shots),
        vec(truth, np.complex128, "truth", voxels), map_order)
