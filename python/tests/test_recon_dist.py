"""fieldft.recon over several devices or MPI ranks (issue 26): P independent problems dealt to
CUDA devices (marker gpu, two devices needed) or, under `mpirun -n K python -m pytest
python/tests/test_recon_dist.py` with mpi4py, to the ranks of MPI_COMM_WORLD. Each problem is
solved whole by one device or rank, by the same operations as alone: the images equal the
one-at-a-time images (GPU: within the rounding of the spreading's atomic sums, double, converged)."""
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
    return np.stack([fieldft.recon(y[p], k, shape, maps[p], **OPTS, **device) for p in range(P)])


def test_problems_need_a_stack():
    y, k, shape, maps = problems()
    with pytest.raises(fieldft.ShapeMismatchError, match=r"\(P, C, M\)"):
        fieldft.recon(y[0], k, shape, maps[0], devices=[0], **OPTS)
    with pytest.raises(fieldft.ShapeMismatchError, match="one per problem"):
        fieldft.recon(y, k, shape, maps[:2], devices=[0], **OPTS)
    with pytest.raises(fieldft.NotImplementedFeatureError, match="--split coils"):
        fieldft.recon(y, k, shape, maps, devices=[0], split="coils", **OPTS)


@pytest.mark.gpu
def test_every_device_equals_one():
    if not have_gpu() or len(fieldft.cuda_devices()) < 2:
        pytest.skip("fewer than two CUDA devices")
    y, k, shape, maps = problems()
    ref = one_by_one(y, k, shape, maps, device="cuda:0")
    got = fieldft.recon(y, k, shape, maps, devices=list(range(len(fieldft.cuda_devices()))), **OPTS)
    assert got.shape == (P,) + shape
    # Each problem solved whole on one of the GPUs: the GPU's atomic sums make the last bits
    # vary; converged in double that stays near 1e-15 (CPU-measured coil-split analogue 1.8e-15).
    assert rel_err(got, ref) < 1e-10


@pytest.mark.skipif(int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) < 2, reason="not under mpirun -n K, K > 1")
def test_mpi_ranks_equal_one_process():
    pytest.importorskip("mpi4py")
    y, k, shape, maps = problems()
    ref = one_by_one(y, k, shape, maps, device="cpu", nthreads=1)
    got = fieldft.recon(y, k, shape, maps, nthreads=1, device="cpu", **OPTS)
    # Problem i on rank i mod K with the same operations as alone; the Allreduce adds zeros.
    assert np.array_equal(got, ref), rel_err(got, ref)
