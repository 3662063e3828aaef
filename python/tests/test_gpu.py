"""GPU arrays: cupy arrays and torch CUDA tensors go through fieldft without copies, results come
back in the same framework and on the same device, work is ordered against the framework's
current stream, and the CUDA backend agrees with the CPU backend. Marker `gpu`: skipped
without a CUDA device or a CUDA-enabled build (conftest.py)."""

import numpy as np
import pytest

import fieldft
import fieldft.compat.cufinufft as cufinufft
from support import EPS, SLACK, direct_type1, direct_type2, direct_type3, random_complex, random_points, rel_err

pytestmark = pytest.mark.gpu


TOL32 = SLACK * EPS[np.complex64]


def test_cupy_zero_copy_same_framework_and_device(rng, cupy, no_copies):
    m, modes = 500, (24, 20)
    pts = random_points(rng, 2, m, np.float32)
    c = random_complex(rng, (2, m), np.complex64)
    d_pts = [cupy.asarray(p) for p in pts]
    d_c = cupy.asarray(c)
    plan = fieldft.Plan(1, modes, n_trans=2, eps=1e-4)
    assert plan.backend == "cuda"
    plan.setpts(*d_pts)
    out = cupy.zeros((2,) + modes, np.complex64)
    ret = plan.execute(d_c, out=out)
    assert ret is out and ret.data.ptr == out.data.ptr
    assert rel_err(cupy.asnumpy(out), direct_type1(pts, c, modes, +1)) < TOL32
    f = plan.execute(d_c)  # allocated by fieldft: a cupy array on the input's device
    assert isinstance(f, cupy.ndarray) and f.device.id == d_c.device.id
    back = plan.execute_adjoint(f)
    assert isinstance(back, cupy.ndarray) and back.shape == (2, m)
    assert rel_err(cupy.asnumpy(back), direct_type2(pts, cupy.asnumpy(f), -1)) < TOL32


def test_torch_zero_copy_same_framework_and_device(rng, torch, no_copies):
    m, modes = 400, (10, 12, 8)
    pts = random_points(rng, 3, m, np.float64)
    f = random_complex(rng, modes, np.complex128)
    t_pts = [torch.from_numpy(p).cuda() for p in pts]
    t_f = torch.from_numpy(f).cuda().requires_grad_(False)
    plan = fieldft.Plan(2, modes, eps=1e-9, dtype="complex128")
    plan.setpts(*t_pts)
    out = torch.empty(m, dtype=torch.complex128, device="cuda")
    ptr = out.data_ptr()
    ret = plan.execute(t_f, out=out)
    assert ret is out and ret.data_ptr() == ptr
    assert rel_err(out.cpu().numpy(), direct_type2(pts, f, -1)) < SLACK * 1e-9
    c = plan.execute(t_f)
    assert isinstance(c, torch.Tensor) and c.is_cuda and c.device == t_f.device


def test_torch_tensor_that_requires_grad_is_read_in_place(rng, torch):
    m = 100
    x = torch.rand(m, device="cuda", dtype=torch.float32) * 6 - 3
    c = torch.randn(m, device="cuda", dtype=torch.complex64, requires_grad=True)
    got = fieldft.nufft1d1(x, c, 16, eps=1e-4)
    want = direct_type1([x.cpu().numpy()], c.detach().cpu().numpy(), (16,), +1)
    assert rel_err(got.cpu().numpy(), want) < TOL32


def test_type3_on_gpu(rng, cupy):
    m, nk = 300, 200
    pts = random_points(rng, 2, m, np.float32, spread=2.0)
    targets = random_points(rng, 2, nk, np.float32, spread=20.0)
    c = random_complex(rng, m, np.complex64)
    got = fieldft.nufft2d3(*[cupy.asarray(p) for p in pts], cupy.asarray(c), *[cupy.asarray(t) for t in targets],
                           eps=1e-4)
    assert isinstance(got, cupy.ndarray)
    assert rel_err(cupy.asnumpy(got), direct_type3(pts, c, targets, +1)) < TOL32


def test_cuda_backend_agrees_with_cpu_backend(rng):
    m, modes = 2000, (32, 28)
    pts = random_points(rng, 2, m, np.float64)
    c = random_complex(rng, (3, m), np.complex128)
    results = {}
    for backend in ("cpu", "cuda"):
        plan = fieldft.Plan(1, modes, n_trans=3, eps=1e-9, dtype="complex128", backend=backend)
        plan.setpts(*pts)
        results[backend] = plan.execute(c)  # host arrays on the CUDA backend: host in, host out
    assert isinstance(results["cuda"], np.ndarray)
    assert rel_err(results["cuda"], results["cpu"]) < 2 * SLACK * 1e-9  # two results within 5 eps each


def test_work_is_ordered_on_a_non_default_stream(rng, cupy):
    # Data made and consumed on a non-blocking cupy stream, plan made outside it (default
    # stream): fieldft's events must order the transform between the two. Repeated with a
    # large input so that a missing dependency would show as wrong (stale or partial) values.
    m, modes = 200000, (128, 128)
    pts = random_points(rng, 2, m, np.float32)
    c = random_complex(rng, m, np.complex64)
    plan = fieldft.Plan(1, modes, eps=1e-4)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        plan.setpts(*[cupy.asarray(p) for p in pts])
        d_c = cupy.asarray(c) * 2  # produced on `stream`
        f = plan.execute(d_c)
        total = f.sum()  # consumed on `stream`
        host_f = cupy.asnumpy(f, stream=stream)
        host_total = complex(total.get(stream=stream))
        stream.synchronize()
    want = fieldft.Plan(1, modes, eps=1e-4, backend="cpu")
    want.setpts(*pts)
    ref = want.execute(2 * c)
    assert rel_err(host_f, ref) < 2 * TOL32
    assert abs(host_total - ref.sum()) <= 1e-3 * np.abs(ref).sum()
    with stream:
        inside = fieldft.Plan(1, modes, eps=1e-4)
    assert inside.stream == stream.ptr  # a plan made inside the context works on that stream


def test_gpu_array_on_cpu_plan_is_refused(rng, cupy):
    plan = fieldft.Plan(1, (8,), backend="cpu")
    with pytest.raises(ValueError, match="CPU backend"):
        plan.setpts(cupy.zeros(4, np.float32))


def test_compat_cufinufft_with_cupy_and_torch(rng, cupy, torch, no_copies):
    m, modes = 300, (16, 12)
    pts = random_points(rng, 2, m, np.float32)
    c = random_complex(rng, m, np.complex64)
    got = cufinufft.nufft2d1(*[cupy.asarray(p) for p in pts], cupy.asarray(c), modes, eps=1e-4)
    assert isinstance(got, cupy.ndarray)
    assert rel_err(cupy.asnumpy(got), direct_type1(pts, c, modes, +1)) < TOL32
    for method in (1, 2, 3):
        plan = cufinufft.Plan(2, modes, eps=1e-4, gpu_method=method)
        plan.setpts(*[torch.from_numpy(p).cuda() for p in pts])
        out = torch.empty(m, dtype=torch.complex64, device="cuda")
        plan.execute(torch.from_numpy(cupy.asnumpy(got)).cuda(), out=out)
        want = direct_type2(pts, cupy.asnumpy(got), -1)
        assert rel_err(out.cpu().numpy(), want) < TOL32, f"gpu_method {method}"
    stream = cupy.cuda.Stream()
    plan = cufinufft.Plan(1, modes, eps=1e-4, gpu_stream=stream.ptr)
    assert plan._engine.stream == stream.ptr


def test_dft_on_gpu_matches_cpu(rng, cupy):
    shape, m, c = (12, 16), 300, 2
    ks = [rng.uniform(-n / 2, n / 2, m) for n in shape[::-1]]
    field = 2 * np.pi * 30 * rng.standard_normal(shape)
    times = np.linspace(0, 5e-3, m)
    image = random_complex(rng, (c,) + shape, np.complex64)
    cpu = fieldft.Dft(shape, *ks, field=field, times=times, images=c, backend="cpu")
    gpu = fieldft.Dft(shape, *ks, field=field, times=times, images=c, backend="cuda")
    want = cpu.forward(image)
    got = gpu.forward(cupy.asarray(image))
    assert isinstance(got, cupy.ndarray) and got.shape == (c, m)
    # float DFTs: ~2e-6 each, and the multi-image GPU path ~1e-6 of the largest value (dft.hpp)
    assert rel_err(cupy.asnumpy(got), want) < 1e-4
    back = gpu.adjoint(got)
    assert isinstance(back, cupy.ndarray) and back.shape == (c,) + shape
    assert rel_err(cupy.asnumpy(back), cpu.adjoint(want)) < 1e-4
