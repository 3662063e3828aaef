"""fieldft.io: round trips with numpy (.npy both ways, every dtype and order), BART .cfl layouts
against a reference reader written here from BART's format description, NIfTI headers parsed by
hand, PNG mosaics, and bad files."""

import os
import struct
import zlib

import numpy as np
import pytest

import fieldft
from fieldft import io

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64",
          "complex64", "complex128"]


def sample(dtype, shape=(3, 4, 5)):
    n = int(np.prod(shape))
    a = (np.arange(n) % 100 - (0 if np.dtype(dtype).kind == "u" else 50)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * np.arange(n).astype(dtype) / 4
    return a.reshape(shape)


# --- .npy ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_npy_round_trips_with_numpy(tmp_path, dtype):
    a = sample(dtype)
    io.write_npy(tmp_path / "f.npy", a)
    b = np.load(tmp_path / "f.npy")
    assert b.dtype == a.dtype and b.shape == a.shape and np.array_equal(a, b)
    np.save(tmp_path / "n.npy", a)
    c = io.read_npy(tmp_path / "n.npy")
    assert c.dtype == a.dtype and np.array_equal(a, c)
    # numpy's and fieldft's files are byte-identical.
    assert (tmp_path / "f.npy").read_bytes() == (tmp_path / "n.npy").read_bytes()


def test_npy_orders_versions_endianness_bool(tmp_path):
    a = sample("float64", (2, 3, 4))
    np.save(tmp_path / "f.npy", np.asfortranarray(a))
    assert io.npy_header(tmp_path / "f.npy")["fortran_order"]
    assert np.array_equal(io.read_npy(tmp_path / "f.npy"), a)
    io.write_npy(tmp_path / "g.npy", a, fortran_order=True)
    g = np.load(tmp_path / "g.npy")
    assert g.flags.f_contiguous and np.array_equal(g, a)
    for version in [(2, 0), (3, 0)]:
        with open(tmp_path / "v.npy", "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        assert io.npy_header(tmp_path / "v.npy")["version"] == version[0]
        assert np.array_equal(io.read_npy(tmp_path / "v.npy"), a)
    np.save(tmp_path / "be.npy", a.astype(">f4"))
    assert np.array_equal(io.read_npy(tmp_path / "be.npy"), a.astype(np.float32))
    np.save(tmp_path / "b.npy", np.array([True, False, True]))
    r = io.read_npy(tmp_path / "b.npy")
    assert r.dtype == np.bool_ and r.tolist() == [True, False, True]
    np.save(tmp_path / "s.npy", np.float32(2.5))
    assert io.read_npy(tmp_path / "s.npy").shape == ()


def test_npy_conversions_and_nonfinite(tmp_path):
    np.save(tmp_path / "i.npy", np.array([1, 300], dtype=np.int16))
    assert io.read_npy(tmp_path / "i.npy", np.float32).dtype == np.float32
    with pytest.raises(fieldft.InvalidArgumentError, match="without loss"):
        io.read_npy(tmp_path / "i.npy", np.int8)
    with pytest.raises(fieldft.InvalidArgumentError, match="element 1"):
        io.read_npy(tmp_path / "i.npy", np.int8, conversion="any")
    np.save(tmp_path / "d.npy", np.array([0.5, 2.0]))
    assert io.read_npy(tmp_path / "d.npy", np.float32, conversion="any").tolist() == [0.5, 2.0]
    np.save(tmp_path / "n.npy", np.array([1.0, np.nan]))
    with pytest.raises(fieldft.NonFiniteError, match="n.npy.*element 1"):
        io.read_npy(tmp_path / "n.npy")
    assert np.isnan(io.read_npy(tmp_path / "n.npy", allow_nonfinite=True)[1])


def test_npy_bad_files(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((10, 10), np.float32))
    raw = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(raw[:-4])
    with pytest.raises(fieldft.InvalidArgumentError, match="t.npy.*truncated"):
        io.read_npy(tmp_path / "t.npy")
    (tmp_path / "l.npy").write_bytes(raw.replace(b"(10, 10)", b"(90, 90)"))  # a lying header
    with pytest.raises(fieldft.InvalidArgumentError, match="l.npy.*needs 32400.*has 400"):
        io.read_npy(tmp_path / "l.npy")
    (tmp_path / "x.npy").write_bytes(b"not numpy at all")
    with pytest.raises(fieldft.InvalidArgumentError, match="not a .npy file"):
        io.read_npy(tmp_path / "x.npy")
    with pytest.raises(fieldft.InvalidArgumentError, match="missing.npy"):
        io.read_npy(tmp_path / "missing.npy")


# --- BART ----------------------------------------------------------------------------------------

def bart_readcfl(name):
    """BART's format by hand: '# Dimensions' then the dims; complex64, first index fastest."""
    lines = open(str(name) + ".hdr").read().splitlines()
    dims = [int(v) for v in lines[lines.index("# Dimensions") + 1].split()]
    data = np.fromfile(str(name) + ".cfl", dtype=np.complex64)
    return data.reshape(dims, order="F"), dims


def test_cfl_round_trip_matches_bart_format(tmp_path, rng):
    a = (rng.standard_normal((4, 3, 2)) + 1j * rng.standard_normal((4, 3, 2))).astype(np.complex64)
    io.write_cfl(tmp_path / "a", a)
    ref, dims = bart_readcfl(tmp_path / "a")
    assert dims == [4, 3, 2] + [1] * 13
    assert np.array_equal(ref[:, :, :, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], a)
    b = io.read_cfl(tmp_path / "a.cfl")
    assert b.shape == (4, 3, 2) and np.array_equal(b, a)


def test_bart_layouts(tmp_path, rng):
    # k-space: fieldft (coils, spokes, samples) <-> BART [1, samples, spokes, coils].
    ksp = (rng.standard_normal((2, 5, 7)) + 1j * rng.standard_normal((2, 5, 7))).astype(np.complex64)
    io.write_bart_kspace(tmp_path / "k", ksp)
    ref, dims = bart_readcfl(tmp_path / "k")
    assert dims[:4] == [1, 7, 5, 2]
    assert ref[0, 3, 4, 1].item() == ksp[1, 4, 3]
    assert np.array_equal(io.read_bart_kspace(tmp_path / "k"), ksp)
    # Trajectory: fieldft k (spokes, samples, ndim) columns (ky, kx) <-> BART [3, samples, spokes] rows x, y, z.
    k = rng.uniform(-16, 16, (5, 7, 2)).astype(np.float32)
    io.write_bart_trajectory(tmp_path / "t", k)
    ref, dims = bart_readcfl(tmp_path / "t")
    assert dims[:3] == [3, 7, 5]
    assert ref[0, 2, 3].real == k[3, 2, 1] and ref[1, 2, 3].real == k[3, 2, 0] and ref[2, 2, 3] == 0
    assert np.array_equal(io.read_bart_trajectory(tmp_path / "t"), k)
    k3 = rng.uniform(-8, 8, (4, 6, 3)).astype(np.float32)
    io.write_bart_trajectory(tmp_path / "t3", k3)
    assert np.array_equal(io.read_bart_trajectory(tmp_path / "t3"), k3)
    # Images and coil maps: fieldft (C, [Nz,] Ny, Nx) <-> BART [x, y, z, coils].
    maps = (rng.standard_normal((3, 4, 6)) + 0j).astype(np.complex64)
    io.write_bart_image(tmp_path / "m", maps, coils=True)
    ref, dims = bart_readcfl(tmp_path / "m")
    assert dims[:4] == [6, 4, 1, 3]
    assert ref[5, 2, 0, 1] == maps[1, 2, 5]
    assert np.array_equal(io.read_bart_image(tmp_path / "m"), maps)
    vol = sample("complex64", (2, 3, 4))
    io.write_bart_image(tmp_path / "v", vol)
    assert bart_readcfl(tmp_path / "v")[1][:4] == [4, 3, 2, 1]
    assert np.array_equal(io.read_bart_image(tmp_path / "v"), vol)
    # A fieldft array is the transpose of the BART array.
    assert np.array_equal(io.read_cfl(tmp_path / "v").T, vol)
    with pytest.raises(fieldft.ShapeMismatchError):
        io.read_bart_kspace(tmp_path / "m")


def test_cfl_bad_files(tmp_path):
    io.write_cfl(tmp_path / "a", np.zeros((4, 4), np.complex64))
    raw = (tmp_path / "a.cfl").read_bytes()
    (tmp_path / "a.cfl").write_bytes(raw[:-8])
    with pytest.raises(fieldft.InvalidArgumentError, match="a.cfl.*truncated"):
        io.read_cfl(tmp_path / "a")
    (tmp_path / "b.hdr").write_text("# Dimensions\n100000 100000 100000\n")
    (tmp_path / "b.cfl").write_bytes(b"\0" * 64)
    with pytest.raises(fieldft.InvalidArgumentError, match="b.cfl"):
        io.read_cfl(tmp_path / "b")
    io.write_cfl(tmp_path / "n", np.array([1, np.nan], np.complex64))
    with pytest.raises(fieldft.NonFiniteError, match="element 1"):
        io.read_cfl(tmp_path / "n")


def test_writes_are_atomic(tmp_path):
    with pytest.raises(fieldft.InvalidArgumentError, match="nodir"):
        io.write_cfl(tmp_path / "nodir" / "a", np.zeros(3, np.complex64))
    with pytest.raises(fieldft.InvalidArgumentError):
        io.write_npy(tmp_path / "nodir" / "a.npy", np.zeros(3))
    with pytest.raises(fieldft.Error):
        io.write_png(tmp_path / "nodir" / "a.png", np.ones((4, 4)))
    assert os.listdir(tmp_path) == []


# --- NIfTI and previews --------------------------------------------------------------------------

def nifti1_header(path):
    raw = zlib.decompress(open(path, "rb").read(), 31) if str(path).endswith(".gz") else open(path, "rb").read()
    (sizeof_hdr,) = struct.unpack_from("<i", raw, 0)
    dim = struct.unpack_from("<8h", raw, 40)
    (datatype,) = struct.unpack_from("<h", raw, 70)
    pixdim = struct.unpack_from("<8f", raw, 76)
    (vox_offset,) = struct.unpack_from("<f", raw, 108)
    magic = raw[344:348]
    return dict(sizeof_hdr=sizeof_hdr, dim=dim, datatype=datatype, pixdim=pixdim, vox_offset=int(vox_offset),
                magic=magic, raw=raw)


@pytest.mark.skipif(not io.nifti_available(), reason="fieldft built without libnifti2 (FIELDFT_NIFTI)")
def test_nifti_magnitude_phase_complex(tmp_path, rng):
    vol = (rng.standard_normal((4, 5, 6)) + 1j * rng.standard_normal((4, 5, 6))).astype(np.complex64)
    io.write_nifti(tmp_path / "m.nii", vol, fov_mm=(40, 200, 240))
    h = nifti1_header(tmp_path / "m.nii")
    assert h["sizeof_hdr"] == 348 and h["magic"] == b"n+1\0"
    assert h["dim"][:4] == (3, 6, 5, 4) and h["datatype"] == 16
    assert h["pixdim"][1:4] == (40.0, 40.0, 10.0)
    mag = np.frombuffer(h["raw"], np.float32, count=vol.size, offset=h["vox_offset"]).reshape(vol.shape)
    assert np.allclose(mag, np.abs(vol), rtol=1e-6)
    io.write_nifti(tmp_path / "p.nii.gz", vol, kind="phase")
    h = nifti1_header(tmp_path / "p.nii.gz")
    ph = np.frombuffer(h["raw"], np.float32, count=vol.size, offset=h["vox_offset"]).reshape(vol.shape)
    assert np.allclose(ph, np.angle(vol), atol=1e-6)
    io.write_nifti(tmp_path / "c.nii", vol, kind="complex")
    h = nifti1_header(tmp_path / "c.nii")
    assert h["datatype"] == 32
    c = np.frombuffer(h["raw"], np.complex64, count=vol.size, offset=h["vox_offset"]).reshape(vol.shape)
    assert np.array_equal(c, vol)
    with pytest.raises(fieldft.InvalidArgumentError, match="fov_mm"):
        io.write_nifti(tmp_path / "x.nii", vol, fov_mm=(1, 2))
    with pytest.raises(fieldft.InvalidArgumentError, match=".nii"):
        io.write_nifti(tmp_path / "x.img", vol)
    bad = vol.copy()
    bad[0, 0, 1] = np.nan
    with pytest.raises(fieldft.NonFiniteError):
        io.write_nifti(tmp_path / "x.nii", bad)
    assert sorted(os.listdir(tmp_path)) == ["c.nii", "m.nii", "p.nii.gz"]


def test_png_mosaic(tmp_path):
    vol = np.ones((5, 6, 7), np.float32)  # (Nz, Ny, Nx): 3 x 2 tiles of 7 x 6
    io.write_png(tmp_path / "v.png", vol)
    raw = (tmp_path / "v.png").read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", raw[16:24])
    assert (width, height) == (21, 12)
    io.preview(tmp_path / "v.pgm", vol, columns=5)
    assert (tmp_path / "v.pgm").read_bytes().startswith(b"P5\n35 6\n255\n")
    with pytest.raises(fieldft.InvalidArgumentError, match=".png or .pgm"):
        io.write_png(tmp_path / "v.jpg", vol)


# --- ISMRMRD -------------------------------------------------------------------------------------

needs_ismrmrd = pytest.mark.skipif(not io.ismrmrd_available(),
                                   reason="fieldft built without libismrmrd (FIELDFT_ISMRMRD; Debian libismrmrd-dev)")


def simulated_raw(shape=(24, 20), coils=3, interleaves=4, shots=2):
    """Multi-shot spiral data with readout times, coil, field and phase maps and the truth: the
    shapes and values of fieldft.mri's simulation helpers."""
    from fieldft import mri
    k = mri.spiral(shape, interleaves=interleaves)                  # (interleaves, samples, 2)
    labels = mri.shot_labels(k, shots).reshape(-1)
    times = mri.readout_times(k, 4e-6).reshape(-1)
    coords = k.reshape(-1, 2)
    truth = mri.shepp_logan(shape).astype(np.complex128)
    maps = mri.coil_maps(shape, coils)
    field = mri.field_map(shape, max_hz=40)
    phase = mri.shot_phase_maps(shape, shots)
    enc = mri.Encoding(shape, coords)
    kspace = np.asarray(mri.sense(enc, maps, eps=1e-6, dtype="complex128")(truth))
    return io.IsmrmrdData(kspace=kspace.astype(np.complex128), coords=coords, shape=shape, times=times,
                          shots=labels, readouts=np.full(interleaves, k.shape[1], dtype=np.int64), coil_maps=maps,
                          field_map=field, phase_maps=phase, truth=truth, fov_mm=(240.0, 200.0),
                          trajectory="spiral")


@needs_ismrmrd
def test_ismrmrd_round_trip(tmp_path):
    d = simulated_raw()
    io.write_ismrmrd(tmp_path / "raw.h5", d)
    assert sorted(os.listdir(tmp_path)) == ["raw.h5"]  # no temporary file left
    r = io.read_ismrmrd(tmp_path / "raw.h5")
    assert r.shape == d.shape and r.kspace.shape == d.kspace.shape and r.coords.shape == d.coords.shape
    assert r.trajectory == "spiral" and r.num_shots == 2 and r.fov_mm == d.fov_mm
    assert list(r.readouts) == list(d.readouts)
    # ISMRMRD stores samples, trajectories and times as float32: equal to float32 rounding.
    f32 = np.finfo(np.float32).eps
    np.testing.assert_allclose(r.kspace, d.kspace, rtol=0, atol=2 * f32 * np.abs(d.kspace).max())
    np.testing.assert_allclose(r.coords, d.coords, rtol=2 * f32, atol=0)
    np.testing.assert_allclose(r.times, d.times, rtol=2 * f32, atol=0)
    assert np.array_equal(r.shots, d.shots)
    # The coil maps are held in single precision (like the samples): equal to float32 rounding.
    # The field and phase maps and the truth are NDArrays of doubles: exact.
    assert r.coil_maps.shape == d.coil_maps.shape and r.coil_maps.dtype == np.complex128
    assert np.array_equal(r.coil_maps, d.coil_maps.astype(np.complex64))
    for name in ("field_map", "phase_maps", "truth"):
        a, b = getattr(r, name), getattr(d, name)
        assert a.shape == b.shape and np.array_equal(a, b), name


@needs_ismrmrd
def test_ismrmrd_keywords_3d_and_y_fastest(tmp_path):
    from fieldft import mri
    shape = (6, 8, 10)
    k = mri.spiral(shape, interleaves=2).reshape(-1, 3)
    y = (np.arange(2 * k.shape[0]) * (1 + 0.5j)).reshape(2, -1)
    field = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    io.write_ismrmrd(tmp_path / "v.h5", kspace=y, coords=k, shape=shape, field_map=field, map_order="y-fastest")
    r = io.read_ismrmrd(tmp_path / "v.h5", map_order="y-fastest")
    assert r.shape == shape and r.coords.shape == k.shape and r.coil_maps is None
    assert not np.any(r.times)  # no time column and no dwell time: the reader's times are 0
    assert sum(r.readouts) == k.shape[0] and max(r.readouts) <= 65535
    np.testing.assert_allclose(r.coords, k, rtol=2 * np.finfo(np.float32).eps, atol=0)
    np.testing.assert_allclose(r.kspace, y, rtol=2 * np.finfo(np.float32).eps)
    assert np.array_equal(r.field_map, field)
    # Read in the other voxel order, the map comes back transposed in x and y.
    assert not np.array_equal(io.read_ismrmrd(tmp_path / "v.h5").field_map, field)


@needs_ismrmrd
def test_ismrmrd_bad_input(tmp_path):
    d = simulated_raw()
    with pytest.raises(fieldft.ShapeMismatchError, match="coil_maps"):
        io.write_ismrmrd(tmp_path / "bad.h5", kspace=d.kspace, coords=d.coords, shape=d.shape,
                         coil_maps=d.coil_maps[:1])
    bad = d.kspace.copy()
    bad[0, 3] = np.nan
    with pytest.raises(fieldft.NonFiniteError):
        io.write_ismrmrd(tmp_path / "nan.h5", kspace=bad, coords=d.coords, shape=d.shape)
    assert os.listdir(tmp_path) == []  # a refused write leaves nothing
    (tmp_path / "junk.h5").write_bytes(b"not hdf5" * 100)
    with pytest.raises(fieldft.InvalidArgumentError, match="junk.h5"):
        io.read_ismrmrd(tmp_path / "junk.h5")
    with pytest.raises(fieldft.InvalidArgumentError, match="units"):
        io.read_ismrmrd(tmp_path / "junk.h5", units="furlongs")
    with pytest.raises(fieldft.InvalidArgumentError, match="select"):
        io.read_ismrmrd(tmp_path / "junk.h5", select={"echo": 1})


@pytest.mark.skipif(io.ismrmrd_available(), reason="this build has ISMRMRD")
def test_ismrmrd_absent(tmp_path):
    with pytest.raises(fieldft.BackendUnavailableError):
        io.read_ismrmrd(tmp_path / "x.h5")
