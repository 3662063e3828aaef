"""fieldft: fast non-uniform FFTs (types 1, 2, 3) and field-corrected DFTs on CPUs and NVIDIA GPUs.

    import fieldft
    plan = fieldft.Plan(1, (256, 256), eps=1e-6)      # type 1, complex64
    plan.setpts(x, y)                                   # float32 arrays, radians
    f = plan.execute(c)                                 # (256, 256) modes

numpy arrays run on the host; cupy arrays and torch CUDA tensors stay on their GPU (no copies).
Linear operators and their algebra: fieldft.op; MRI encoding operators: fieldft.mri; solvers:
fieldft.solve; a one-call reconstruction: fieldft.recon; one problem's coils over several GPUs or
MPI ranks: fieldft.dist.
Drop-in replacements for the finufft and cufinufft packages: fieldft.compat.finufft and
fieldft.compat.cufinufft. docs/python.md is the guide.
"""

from . import _core
from ._core import (BackendUnavailableError, ContextMismatchError, CudaError, EpsTooSmallError, Error,
                    InternalError, InvalidArgumentError, InvalidStateError, NonFiniteError,
                    NotImplementedFeatureError, OutOfMemoryError, ShapeMismatchError, TooLargeError)
from ._engine import min_eps
from ._mri import Dft, DftR2
from ._plan import (Plan, nufft1d1, nufft1d2, nufft1d3, nufft2d1, nufft2d2, nufft2d3, nufft3d1, nufft3d2,
                    nufft3d3)
from . import io, mri, op, solve  # noqa: E402  (fieldft.io, fieldft.op, fieldft.mri, fieldft.solve)
from . import dist  # noqa: E402  (fieldft.dist: coils split over ranks)
from ._recon import recon  # noqa: E402

__version__ = _core.build_info()["version"]


def build_info() -> dict:
    """What this build contains: version, cuda (bool), cuda_architectures, build_type, compiler,
    fftw_version, cpu_threads, type3 (bool)."""
    return _core.build_info()


def cuda_devices() -> list:
    """CUDA devices visible to fieldft (empty without CUDA support or devices): dicts with id,
    name, compute_capability, total_memory, free_memory, multiprocessors."""
    return _core.cuda_devices()


__all__ = ["Plan", "nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3", "nufft3d1", "nufft3d2",
           "nufft3d3", "Dft", "DftR2", "build_info", "cuda_devices", "min_eps", "Error", "InvalidArgumentError",
           "NonFiniteError", "ShapeMismatchError", "EpsTooSmallError", "TooLargeError", "OutOfMemoryError",
           "BackendUnavailableError", "NotImplementedFeatureError", "CudaError", "InvalidStateError",
           "InternalError", "ContextMismatchError", "io", "op", "mri", "solve", "dist", "recon"]
