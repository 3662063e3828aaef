"""fieldft.dist: one problem's operator split by rows (coils) over ranks — MPI processes or the GPUs
of this process (include/fieldft/dist.hpp; docs/scale-out.md).

    comm = fieldft.dist.mpi()                           # under mpirun, with mpi4py: MPI_COMM_WORLD
    begin, end = fieldft.dist.split(C, comm.size, comm.rank)
    a = fieldft.dist.rank_sum(fieldft.mri.sense(enc, maps[begin:end]), comm)
    x = fieldft.solve.cg(a, y[begin:end], lam=1e-3)     # the same image on every rank

rank_sum(A_r, comm) is A = [A_0; …; A_{K-1}] seen from rank r: `apply` gives this rank's rows A_r x,
the adjoint Σ_r A_rᴴ y_r and the normal Σ_r A_rᴴ A_r x (one image-sized sum over the ranks each).
Every rank must call the adjoint and the normal together (they are collectives), and fieldft's
solvers then keep the same iterate on every rank. fieldft.solve.cg suits it; fista and admm keep
the same iterates but report only this rank's share of the data term; pwls_pcg must not be used
on it (its line search takes k-space dots, which differ per rank).

Communicators: single() (one rank: the sums are no-ops), mpi(comm) (an mpi4py communicator; host
memory), nccl_over(mpi(), device) (one GPU per MPI rank) and nccl_devices([0, 1, ...]) (one
communicator per GPU of this process). The ranks of nccl_devices live in one process, so their
collectives must run at once: one Python thread per rank cannot (fieldft's operator calls are
serialised by one lock), so solve them with cg_ranks, which runs one host thread per rank.
MPI needs a build with FIELDFT_MPI and mpi4py on the same MPI library; NCCL a CUDA build with
FIELDFT_NCCL; without them these raise fieldft.BackendUnavailableError (have_mpi(), have_nccl()).
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence

import numpy as np

from . import _arrays, _core
from .op import Operator, _terms
from .solve import Report, Result, _check_iterations, _core_callback, _vector, _weights, _zeros_like

__all__ = ["Communicator", "single", "mpi", "nccl_devices", "nccl_over", "have_mpi", "have_nccl", "split",
           "rank_sum", "cg_ranks"]

Communicator = _core.Communicator
Communicator.__doc__ = ("A group of ranks that sum vectors (fieldft::dist::Communicator): rank, size, "
                        "engine ('single', 'mpi' or 'nccl'), describe(), agree_max(value).")


def have_mpi() -> bool:
    """Whether this fieldft was built with MPI (FIELDFT_MPI)."""
    return bool(_core.dist_have_mpi())


def have_nccl() -> bool:
    """Whether this fieldft was built with NCCL (FIELDFT_NCCL, CUDA builds)."""
    return bool(_core.dist_have_nccl())


def single() -> Communicator:
    """One rank: sums are no-ops (rank_sum(A, single()) is A)."""
    return _core.dist_single()


def mpi(comm=None) -> Communicator:
    """The MPI communicator `comm` of mpi4py (default MPI.COMM_WORLD) as a fieldft communicator,
    summing host memory. mpi4py must use the MPI library fieldft was built with (checked by their
    version strings); `comm` must stay valid as long as the result (which keeps a reference)."""
    if not have_mpi():
        raise _core.BackendUnavailableError("fieldft.dist.mpi: this fieldft was built without MPI (build it with "
                                            "FIELDFT_MPI=ON and an MPI installed, e.g. Debian's libopenmpi-dev)")
    try:
        from mpi4py import MPI
    except ImportError:
        raise _core.BackendUnavailableError("fieldft.dist.mpi needs mpi4py (pip install mpi4py, built against the "
                                            "MPI fieldft uses)") from None
    comm = MPI.COMM_WORLD if comm is None else comm
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"fieldft.dist.mpi takes an mpi4py communicator, got {type(comm).__name__}")
    ours, theirs = _core.dist_mpi_library_version().strip(), MPI.Get_library_version().strip()
    if ours != theirs:
        raise _core.BackendUnavailableError(
            "fieldft.dist.mpi: mpi4py runs on another MPI library than fieldft was built with, so their "
            f"communicators cannot be shared (fieldft: {ours.splitlines()[0] if ours else '?'}; mpi4py: "
            f"{theirs.splitlines()[0] if theirs else '?'}); rebuild mpi4py against the same MPI")
    return _core.dist_mpi_comm(MPI._handleof(comm), comm)


def nccl_devices(devices: Sequence[int]) -> list:
    """One NCCL communicator per CUDA device of this process, rank i on devices[i] (distinct,
    visible). Drive them together with cg_ranks."""
    return list(_core.dist_nccl_devices([int(d) for d in devices]))


def nccl_over(host: Communicator, device: int) -> Communicator:
    """NCCL between processes, one GPU each (`device` on this rank): its rank and size are host's
    (e.g. mpi()). Collective over host."""
    if not isinstance(host, Communicator):
        raise TypeError(f"`host` must be a fieldft.dist.Communicator, got {type(host).__name__}")
    return _core.dist_nccl_over(host, int(device))


def split(count: int, parts: int, index: int) -> tuple:
    """The contiguous balanced share (begin, end) of `count` items for part `index` of `parts`
    (the first count % parts parts get one item more; a share may be empty)."""
    return tuple(_core.dist_split(int(count), int(parts), int(index)))


def rank_sum(part: Operator, comm: Communicator) -> Operator:
    """A = [A_0; …; A_{K-1}] stacked by rows over the ranks of `comm`, `part` being this rank's
    A_r: apply is local, apply_adjoint and the normal sum over the ranks (collectives). part must
    run where comm sums: the host for MPI, the communicator's device for NCCL (else
    fieldft.ContextMismatchError)."""
    if not isinstance(part, Operator):
        raise TypeError(f"`part` must be a fieldft.op.Operator, got {type(part).__name__}")
    if not isinstance(comm, Communicator):
        raise TypeError(f"`comm` must be a fieldft.dist.Communicator, got {type(comm).__name__}")
    fn = _core.dist_rank_sum_f if part.dtype == np.complex64 else _core.dist_rank_sum_d
    with _terms():
        return Operator(fn(part._core, comm))


def cg_ranks(ops: Sequence[Operator], comms: Sequence[Communicator], ys: Sequence, *, weights=None,
             lam: float = 0.0, max_iter: int = 30, tol: float = 0.0,
             callback: Optional[Callable[[Report], Optional[bool]]] = None, info: bool = False):
    """fieldft.solve.cg on K ranks of this process at once, one host thread per rank: ops[r] is
    rank r's rank_sum over comms[r], ys[r] its rows of the data (and weights[r] their weights, or
    weights None), at ops[r]'s place. Returns the K images (each at its rank's place, all equal),
    and with info=True rank 0's Result too. The callback sees rank 0's reports; returning False
    stops every rank. A rank that fails aborts its communicator, and the first error is raised."""
    ops, comms, ys = list(ops), list(comms), list(ys)
    if not ops or len(comms) != len(ops) or len(ys) != len(ops):
        raise _core.InvalidArgumentError(f"cg_ranks: one operator, communicator and data per rank (got {len(ops)}, "
                                         f"{len(comms)}, {len(ys)})")
    if weights is not None and len(weights) != len(ops):
        raise _core.InvalidArgumentError(f"cg_ranks: {len(weights)} weights for {len(ops)} ranks")
    _check_iterations(max_iter)
    if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
        raise _core.InvalidArgumentError(f"lam must be a finite number >= 0, got {lam!r}")
    if any(not isinstance(a, Operator) for a in ops) or any(a.dtype != ops[0].dtype for a in ops):
        raise TypeError("cg_ranks: `ops` must be fieldft.op.Operators of one dtype")
    yd = [_vector(a, y, a.oshape, "y") for a, y in zip(ops, ys)]
    xs = [_zeros_like(d, a.ishape, a.dtype) for a, d in zip(ops, yd)]
    ws = [_weights(a, w) for a, w in zip(ops, weights)] if weights is not None else None
    for d in yd:  # the framework's pending work (y, the zeroed x, the weights) done before the threads start
        stream = _arrays.current_stream(d)
        if stream is not None:
            _core.stream_synchronize(d.device, stream)
    cb = _core_callback(callback)
    fn = _core.cg_ranks_f if ops[0].dtype == np.complex64 else _core.cg_ranks_d
    with _terms():
        r = fn([a._core for a in ops], list(comms), [d.ptr for d in yd], [x.ptr for x in xs],
               [w.ptr for w in ws] if ws is not None else [0] * len(ops), int(max_iter), float(tol), float(lam), cb)
    for a in ops:
        a.synchronize()
    images = [x.obj for x in xs]
    return (images, Result(**r)) if info else images
