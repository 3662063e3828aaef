"""fieldft.recon over several devices or MPI ranks (issue 26). split="problems": P independent
problems dealt to CUDA devices (marker gpu, two devices needed) or, under `mpirun -n K python -m
pytest python/tests/test_recon_dist.py` with mpi4py, to the ranks of MPI_COMM_WORLD; each problem
is solved whole by one device or rank, by the same operations as alone: the images equal the
one-at-a-time images (GPU: within the rounding of the spreading's atomic sums, double, converged).
split="coils": one problem's coils shared by the ranks (MPI on the CPU; NCCL between the GPUs of
one process, marker gpu) or, without mpirun, by one place (fieldft.dist.single(): the whole
code path, the sums no-ops); the image equals one process's within the rounding of the coil sums'
order. fieldft.dist itself: rank_sum over single() is the part, cg_ranks is solve.cg."""
import os

import numpy as np
import pytest

import fieldft
from fieldft import mri
from support import have_gpu, rel_err

P, N, COILS = 5, 32, 4  # 32: 64² fine grids, whose FFTW plans are reproducible (48² ones varied between runs)


def problems(dtype=np.complex128):
    """P slices of one spiral: each its own image (a scaled Shepp-Logan) and coil maps."""
    shape = (N, N)
    k = mri.spiral(shape).reshape(-1, 2)
    maps = np.stack([mri.coil_maps(shape, COILS) * np.exp(0.3j * p) for p in range(P)]).astype(dtype)
    truth = mri.shepp_logan(shape).astype(dtype)
    y = np.stack([np.asarray(mri.sense(mri.Encoding(shape, k), maps[p], eps=1e-9, dtype=dtype)(truth * (1 + 0.1 * p)))
                  for p in range(P)])
    return y, k, shape, maps


# Converged in double (λ, many iterations) so that equality is to rounding, not to where CG stopped.
OPTS = dict(lam=1.0, iterations=60, eps=1e-9, progress=False)


def one_by_one(y, k, shape, maps, **device):
    return np.stack([fieldft.recon(y[p], k, shape, maps[p], split="none", **OPTS, **device) for p in range(P)])


def test_problems_need_a_stack():
    y, k, shape, maps = problems()
    with pytest.raises(fieldft.ShapeMismatchError, match=r"\(P, C, M\)"):
        fieldft.recon(y[0], k, shape, maps[0], devices=[0], split="problems", **OPTS)
    with pytest.raises(fieldft.ShapeMismatchError, match="one per problem"):
        fieldft.recon(y, k, shape, maps[:2], devices=[0], **OPTS)
    with pytest.raises(fieldft.ShapeMismatchError, match="ONE problem"):
        fieldft.recon(y, k, shape, maps, devices=[0], split="coils", **OPTS)
    with pytest.raises(fieldft.InvalidArgumentError, match="is not one of"):
        fieldft.recon(y, k, shape, maps, split="slices", **OPTS)


@pytest.mark.gpu
def test_every_device_equals_one():
    if not have_gpu() or len(fieldft.cuda_devices()) < 2:
        pytest.skip("fewer than two CUDA devices")
    y, k, shape, maps = problems()
    ref = np.stack([fieldft.recon(y[p], k, shape, maps[p], split="none", device="cuda:0", **COIL_OPTS)
                    for p in range(P)])
    got = fieldft.recon(y, k, shape, maps, devices=list(range(len(fieldft.cuda_devices()))), **COIL_OPTS)
    assert got.shape == (P,) + shape
    # Each problem solved whole on one of the GPUs: the spreading's atomic sums make the last bits
    # vary from run to run, so the problems must be solved to convergence (λ = 1000, see
    # COIL_OPTS) for the images to agree to rounding. At OPTS' λ = 1 CG stops at a residual of 4e-5
    # and the atomics' rounding moved the images by 2e-4 (measured on 4x H200).
    assert rel_err(got, ref) < 1e-10


@pytest.mark.skipif(int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) < 2, reason="not under mpirun -n K, K > 1")
def test_mpi_ranks_equal_one_process():
    pytest.importorskip("mpi4py")
    y, k, shape, maps = problems()
    ref = one_by_one(y, k, shape, maps, device="cpu", nthreads=1)
    got = fieldft.recon(y, k, shape, maps, nthreads=1, device="cpu", **OPTS)
    # Problem i on rank i mod K with the same operations as alone; the Allgatherv only moves them.
    assert np.array_equal(got, ref), rel_err(got, ref)
    # Fewer problems than ranks (under mpirun -n 3): a rank without one still takes part.
    two = fieldft.recon(y[:2], k, shape, maps[:2], nthreads=1, device="cpu", **OPTS)
    assert np.array_equal(two, ref[:2]), rel_err(two, ref[:2])


# ---- one problem, its coils split (split="coils") ----------------------------------------------

def world():
    """MPI_COMM_WORLD under mpirun -n K > 1 with mpi4py, else None."""
    if int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) < 2:
        return None
    mpi4py = pytest.importorskip("mpi4py")
    from mpi4py import MPI
    return MPI.COMM_WORLD


# The coil-split image against one process's: the image-sized sums over ranks add the coils'
# contributions in another order, so the images differ by rounding, which a converged CG does not
# amplify: 1e-11 in double (tests/dist/mpi_test.cpp's split-CG bound), 1e-5 in float
# (docs/scale-out.md: the split CG in float). Converged needs λ = 1000 here: at OPTS' λ = 1, 60
# iterations stop at a residual of 4e-5, where merely reordering the coils of ONE process moves
# the image by 3e-4 (measured); at λ = 1000 reordering moves it by 1.4e-15.
SPLIT_BOUND = {np.complex128: 1e-11, np.complex64: 1e-5}
COIL_OPTS = dict(OPTS, lam=1000.0)


def one_problem(dtype):
    """Problem 1 of problems() in `dtype`, and the options (the NUFFT's eps within float's reach)."""
    y, k, shape, maps = problems()
    opts = dict(COIL_OPTS, eps=1e-9 if dtype == np.complex128 else 1e-5)
    return y[1].astype(dtype), k, shape, maps[1].astype(dtype), opts


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_coil_split_equals_one_process(dtype):
    y, k, shape, maps, opts = one_problem(dtype)
    ref = fieldft.recon(y, k, shape, maps, split="none", nthreads=1, **opts)
    got = fieldft.recon(y, k, shape, maps, split="coils", nthreads=1, **opts)
    assert got.shape == shape and got.dtype == dtype and isinstance(got, np.ndarray)
    assert rel_err(got, ref) < SPLIT_BOUND[dtype]
    comm = world()
    if comm is not None:  # every rank holds the same image, bit for bit (rank_sum's promise)
        assert all(np.array_equal(got, other) for other in comm.allgather(got))


def test_coil_split_estimated_maps_weights_and_callback():
    # Maps estimated from the data ("rss") and the scaling are computed once (rank 0) for every
    # share; weights (M,) go with each share's rows; the callback's False stops every rank at once.
    y, k, shape, _ = problems()
    w = np.linspace(0.5, 1.5, k.shape[0])
    seen = []

    def stop_at_7(report):
        seen.append(report.iteration)
        return report.iteration < 7

    opts = dict(COIL_OPTS, weights=w, nthreads=1)
    ref, ref_info = fieldft.recon(y[0], k, shape, "rss", split="none", info=True, callback=stop_at_7, **opts)
    seen.clear()
    got, info = fieldft.recon(y[0], k, shape, "rss", split="coils", info=True, callback=stop_at_7, **opts)
    assert seen == list(range(1, 8)) and info.iterations == 7 and info.stopped
    # Stopped after 7 iterations, not converged: the rounding of the sums' order is not damped
    # as much, and rank 0's estimated maps may differ from another rank's own in the last bits
    # (FFTW plans differ between processes): 1e-9.
    assert rel_err(got, ref) < 1e-9


def test_coil_split_errors():
    y, k, shape, maps = problems()
    with pytest.raises(fieldft.NotImplementedFeatureError, match="only 'cg'"):
        fieldft.recon(y[0], k, shape, maps[0], split="coils", method="pwls", **OPTS)
    with pytest.raises(fieldft.InvalidArgumentError, match="cannot be shared"):
        fieldft.recon(y[0, :1], k, shape, maps[0, :1], split="coils", devices=[0, 1], **OPTS)
    if not fieldft.dist.have_nccl():
        # Without NCCL several devices cannot sum (and on mpirun, NCCL over MPI is missing too).
        with pytest.raises(fieldft.BackendUnavailableError, match="NCCL"):
            fieldft.recon(y[0], k, shape, maps[0], split="coils", devices=[0, 1], **OPTS)


def test_dist_api():
    assert fieldft.dist.split(10, 3, 0) == (0, 4) and fieldft.dist.split(10, 3, 2) == (7, 10)
    with pytest.raises(fieldft.InvalidArgumentError):
        fieldft.dist.split(4, 0, 0)
    one = fieldft.dist.single()
    assert (one.rank, one.size, one.engine) == (0, 1, "single")
    if not fieldft.dist.have_nccl():
        with pytest.raises(fieldft.BackendUnavailableError):
            fieldft.dist.nccl_devices([0])
    if fieldft.dist.have_mpi() and world() is not None:
        comm = fieldft.dist.mpi()
        assert (comm.rank, comm.size, comm.engine) == (world().Get_rank(), world().Get_size(), "mpi")
        assert comm.agree_max(comm.rank) == comm.size - 1
        # A communicator other than COMM_WORLD (dist::mpi_comm on its handle): the odd ranks' own
        odd = world().Split(world().Get_rank() % 2, world().Get_rank())
        sub = fieldft.dist.mpi(odd)
        assert (sub.rank, sub.size) == (odd.Get_rank(), odd.Get_size())
        assert sub.agree_max(sub.rank + 10 * (world().Get_rank() % 2)) == sub.size - 1 + 10 * (world().Get_rank() % 2)
    # cg_ranks on one rank is solve.cg (the same C++ solve; the rank_sum adds nothing)
    y, k, shape, maps = problems()
    a = mri.sense(mri.Encoding(shape, k), maps[0], eps=1e-9, dtype=np.complex128)
    want = fieldft.solve.cg(a, y[0], lam=1.0, max_iter=10)
    (got,), info = fieldft.dist.cg_ranks([fieldft.dist.rank_sum(a, one)], [one], [y[0]], lam=1.0, max_iter=10,
                                         info=True)
    assert info.iterations == 10 and np.array_equal(got, want)


def gpu_devices(need):
    if not have_gpu() or len(fieldft.cuda_devices()) < need:
        pytest.skip(f"fewer than {need} CUDA devices")
    return list(range(min(len(fieldft.cuda_devices()), COILS)))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_gpu_coil_split_every_device_equals_one(dtype):
    pytest.importorskip("cupy")
    if not fieldft.dist.have_nccl():
        pytest.skip("built without NCCL")
    devices = gpu_devices(2)
    y, k, shape, maps, opts = one_problem(dtype)
    ref = fieldft.recon(y, k, shape, maps, split="none", device="cuda:0", **opts)
    got = fieldft.recon(y, k, shape, maps, devices=devices, **opts)  # auto: the coils
    assert isinstance(got, np.ndarray) and got.shape == shape and got.dtype == dtype
    # The coil sums' order (NCCL) and the GPU spreading's atomic sums (two runs of one GPU differ
    # in the last bits): tests/dist/nccl_test.cpp's bounds, 1e-10 (double), 1e-4 (float).
    assert rel_err(got, ref) < (1e-10 if dtype == np.complex128 else 1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) < 2, reason="not under mpirun -n K, K > 1")
def test_gpu_mpi_coil_split_equals_one():
    # mpirun -n K (K <= visible devices): rank r on device r (its local rank), NCCL over MPI.
    pytest.importorskip("cupy")
    if not fieldft.dist.have_nccl():
        pytest.skip("built without NCCL")
    comm = world()
    devices = gpu_devices(comm.Get_size())
    y, k, shape, maps = problems()
    ref = fieldft.recon(y[1], k, shape, maps[1], split="none", device="cuda:0", **COIL_OPTS)
    got = fieldft.recon(y[1], k, shape, maps[1], devices=devices, **COIL_OPTS)
    assert rel_err(got, ref) < 1e-10  # as above (double)
    assert all(np.array_equal(got, other) for other in comm.allgather(got))
