"""fieldft.Plan and the one-call functions on the host (numpy): results against direct sums,
axis order, batching, out=, memory (no copies), dtype and shape errors, error mapping."""

import threading

import numpy as np
import pytest

import fieldft
from support import (EPS, SLACK, direct_type1, direct_type2, direct_type3, random_complex, random_points,
                     rel_err)

DTYPES = [np.complex64, np.complex128]
MODES = {1: (13,), 2: (10, 7), 3: (6, 5, 4)}  # odd and even counts, all axes different: a swap shows


def tol(dtype):
    return SLACK * EPS[np.dtype(dtype).type]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_type1_and_type2_match_direct_sums(rng, dim, dtype):
    modes, m = MODES[dim], 150
    pts = random_points(rng, dim, m, dtype)
    c = random_complex(rng, m, dtype)
    f = random_complex(rng, modes, dtype)
    eps = EPS[np.dtype(dtype).type]
    p1 = fieldft.Plan(1, modes, eps=eps, dtype=dtype, backend="cpu")
    p1.setpts(*pts)
    got1 = p1.execute(c)
    assert got1.shape == modes and got1.dtype == dtype
    assert rel_err(got1, direct_type1(pts, c, modes, +1)) < tol(dtype)
    p2 = fieldft.Plan(2, modes, eps=eps, dtype=dtype, backend="cpu")
    p2.setpts(*pts)
    got2 = p2.execute(f)
    assert got2.shape == (m,)
    assert rel_err(got2, direct_type2(pts, f, -1)) < tol(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_type3_matches_direct_sum(rng, dim, dtype):
    m, nk = 120, 70
    pts = random_points(rng, dim, m, dtype, spread=2.0)
    targets = random_points(rng, dim, nk, dtype, spread=15.0)
    c = random_complex(rng, (2, m), dtype)
    plan = fieldft.Plan(3, dim, n_trans=2, eps=EPS[np.dtype(dtype).type], dtype=dtype, backend="cpu")
    plan.setpts(*pts, *([None] * (3 - dim)), *targets)
    assert plan.num_points == m and plan.num_targets == nk
    got = plan.execute(c)
    assert got.shape == (2, nk)
    assert rel_err(got, direct_type3(pts, c, targets, +1)) < tol(dtype)
    # adjoint: the type 3 sum from targets back to sources with the opposite sign
    g = random_complex(rng, (2, nk), dtype)
    back = plan.execute_adjoint(g)
    assert back.shape == (2, m)
    assert rel_err(back, direct_type3(targets, g, pts, -1)) < tol(dtype)


def test_axis_order_pairs_x_with_axis_0(rng):
    # One point, one non-zero strength: f[k1, k2] = exp(i (k1 x + k2 y)) separates, so the
    # phase along axis 0 must advance by x per mode and along axis 1 by y.
    x, y = np.array([0.3]), np.array([-1.1])
    f = fieldft.nufft2d1(x, y, np.array([1.0 + 0j]), (8, 6), eps=1e-12)
    ratio0 = f[5, 2] / f[4, 2]
    ratio1 = f[4, 3] / f[4, 2]
    assert abs(ratio0 - np.exp(0.3j)) < 1e-10
    assert abs(ratio1 - np.exp(-1.1j)) < 1e-10


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_simple_functions_match_plans(rng, dim):
    modes, m, dtype = MODES[dim], 90, np.complex128
    pts = random_points(rng, dim, m, dtype)
    c = random_complex(rng, (3, m), dtype)
    f = random_complex(rng, (3,) + modes, dtype)
    targets = random_points(rng, dim, 40, dtype, spread=10.0)
    fn1, fn2, fn3 = (getattr(fieldft, f"nufft{dim}d{t}") for t in (1, 2, 3))
    eps = EPS[np.complex128]
    assert rel_err(fn1(*pts, c, modes, eps=eps), direct_type1(pts, c, modes, +1)) < tol(dtype)
    assert rel_err(fn1(*pts, c, modes, eps=eps, isign=-1), direct_type1(pts, c, modes, -1)) < tol(dtype)
    assert rel_err(fn2(*pts, f, eps=eps), direct_type2(pts, f, -1)) < tol(dtype)
    assert rel_err(fn3(*pts, c, *targets, eps=eps), direct_type3(pts, c, targets, +1)) < tol(dtype)


def test_batch_leading_axes_and_out(rng):
    dtype, modes, m = np.complex128, (10, 7), 80
    pts = random_points(rng, 2, m, dtype)
    c = random_complex(rng, (2, 3, m), dtype)  # n_trans = 6 on two leading axes
    plan = fieldft.Plan(1, modes, n_trans=6, eps=1e-9, dtype=dtype)
    plan.setpts(*pts)
    got = plan.execute(c)
    assert got.shape == (2, 3) + modes
    assert rel_err(got, direct_type1(pts, c, modes, +1)) < tol(dtype)
    out = np.empty((6,) + modes, dtype)
    ret = plan.execute(c, out=out)
    assert ret is out  # written in place and returned
    assert rel_err(out.reshape(got.shape), got) < 1e-14  # same transform, same rounding


def test_execute_adjoint_is_the_adjoint(rng):
    # <A c, f> = <c, A^H f> for the plan's own adjoint; both sides are sums of O(1) terms.
    dtype, modes, m = np.complex128, (9, 8), 100
    pts = random_points(rng, 2, m, dtype)
    plan = fieldft.Plan(1, modes, eps=1e-9, dtype=dtype)
    plan.setpts(*pts)
    c, f = random_complex(rng, m, dtype), random_complex(rng, modes, dtype)
    lhs = np.vdot(f, plan.execute(c))
    rhs = np.vdot(plan.execute_adjoint(f), c)
    assert abs(lhs - rhs) / (np.linalg.norm(plan.execute(c)) * np.linalg.norm(f)) < 1e-8


def test_modeord_1_is_fft_order(rng):
    dtype, modes, m = np.complex128, (8, 5), 60
    pts = random_points(rng, 2, m, dtype)
    c = random_complex(rng, m, dtype)
    inc = fieldft.nufft2d1(*pts, c, modes, eps=1e-9)
    fft = fieldft.nufft2d1(*pts, c, modes, eps=1e-9, modeord=1)
    assert rel_err(fft, np.fft.ifftshift(inc)) < 1e-12  # the same numbers, reordered


def test_no_copies_for_contiguous_arrays(rng, monkeypatch):
    # The data pointer is handed to the library as is: no copy is made on the way in (a copy
    # would go through _arrays.contiguous_copy, made to fail here) and `out` is the caller's.
    from fieldft import _arrays
    dtype, modes, m = np.complex64, (6, 6), 50
    pts = random_points(rng, 2, m, dtype)
    plan = fieldft.Plan(1, modes)
    plan.setpts(*pts)
    c = random_complex(rng, m, dtype)
    out = np.zeros(modes, dtype)

    def no_copy(*args):
        raise AssertionError("a contiguous array was copied")

    monkeypatch.setattr(_arrays, "contiguous_copy", no_copy)
    ptr = out.__array_interface__["data"][0]
    ret = plan.execute(c, out=out)
    assert ret is out and ret.__array_interface__["data"][0] == ptr
    assert np.any(out != 0)


def test_non_contiguous_input_is_copied_and_correct(rng):
    dtype, modes, m = np.complex128, (7, 6), 64
    pts = random_points(rng, 2, 2 * m, dtype)
    strided_pts = [p[::2] for p in pts]
    c = random_complex(rng, (m, 2), dtype)[:, 0]  # stride 2
    got = fieldft.nufft2d1(*strided_pts, c, modes, eps=1e-9)
    want = direct_type1([np.ascontiguousarray(p) for p in strided_pts], c, modes, +1)
    assert rel_err(got, want) < tol(dtype)


def test_upsampfac_2_25_narrows_the_kernel_and_meets_eps(rng):
    modes, eps = (20, 18), 1e-5
    pts = random_points(rng, 2, 500, np.complex128)
    c = random_complex(rng, (500,), np.complex128)
    widths = []
    for sigma in (2.0, 2.25):
        plan = fieldft.Plan(1, modes, eps=eps, dtype="complex128", backend="cpu", upsampfac=sigma)
        plan.setpts(*pts)
        assert plan.upsampfac == sigma
        widths.append(plan.kernel_width)
        assert rel_err(plan.execute(c), direct_type1(pts, c, modes, +1)) < eps
    assert widths == [7, 6]


def test_planning_measure_stores_wisdom_and_a_second_plan_takes_it(rng, tmp_path):
    # planning="measure" times the candidates at setpts and stores the winner in wisdom_path; a
    # second plan of the same problem (another isign: not part of the signature) takes it from the
    # file. Both still meet eps against the direct sums; no timing is asserted.
    modes, m, eps = (24, 20), 600, 1e-6
    pts = random_points(rng, 2, m, np.complex128)
    c = random_complex(rng, (m,), np.complex128)
    wisdom = tmp_path / "wisdom.json"
    first = fieldft.Plan(1, modes, eps=eps, dtype="complex128", backend="cpu", planning="measure",
                         wisdom_path=str(wisdom), nthreads=1)
    assert first.configured_by == "estimate"  # nothing measured before setpts
    first.setpts(*pts)
    assert first.configured_by.startswith("measured now"), first.configured_by
    assert wisdom.exists() and "fieldft_wisdom" in wisdom.read_text()
    assert rel_err(first.execute(c), direct_type1(pts, c, modes, +1)) < eps
    second = fieldft.Plan(1, modes, eps=eps, isign=-1, dtype="complex128", backend="cpu", planning="measure",
                          wisdom_path=str(wisdom), nthreads=1)
    second.setpts(*pts)
    assert second.configured_by.startswith("wisdom"), second.configured_by
    assert second.method == first.method and second.upsampfac == first.upsampfac
    assert rel_err(second.execute(c), direct_type1(pts, c, modes, -1)) < eps
    with pytest.raises(ValueError):
        fieldft.Plan(1, modes, eps=eps, backend="cpu", planning="guess")


def test_properties(rng):
    plan = fieldft.Plan(2, (16, 12), n_trans=3, eps=1e-5, dtype="complex128", backend="cpu", upsampfac=1.25)
    assert (plan.type, plan.dim, plan.n_modes, plan.n_trans) == (2, 2, (16, 12), 3)
    assert plan.dtype == np.complex128 and plan.isign == -1 and plan.eps == 1e-5
    assert plan.backend == "cpu" and plan.upsampfac == 1.25 and plan.modeord == 0
    assert len(plan.fine_grid) == 2 and plan.fine_grid[0] >= 1.25 * 16 and plan.fine_grid[1] >= 1.25 * 12
    assert plan.num_points is None and plan.num_targets is None
    plan.setpts(*random_points(rng, 2, 10, np.complex128))
    assert plan.num_points == 10
    with pytest.raises(AttributeError):
        plan.n_trans = 2  # read-only


def test_dtype_errors(rng):
    plan = fieldft.Plan(1, (8,), dtype="complex64")
    with pytest.raises(TypeError, match="float32"):
        plan.setpts(np.zeros(5))  # float64 points for a complex64 plan
    plan.setpts(np.zeros(5, np.float32))
    with pytest.raises(TypeError, match="complex64"):
        plan.execute(np.zeros(5, np.complex128))
    with pytest.raises(TypeError, match="out"):
        plan.execute(np.zeros(5, np.complex64), out=np.zeros(8, np.complex128))
    with pytest.raises(TypeError):
        fieldft.Plan(1, (8,), dtype="float32")
    with pytest.raises(TypeError, match="must be an array"):
        plan.setpts([0.0, 1.0])
    with pytest.raises(TypeError, match="complex64 or complex128"):
        fieldft.nufft1d1(np.zeros(3), np.zeros(3), 4)


def test_shape_errors(rng):
    plan = fieldft.Plan(1, (8, 6), n_trans=2, dtype="complex64")
    with pytest.raises(ValueError, match="needs `y`"):
        plan.setpts(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="`y` has 4 points"):
        plan.setpts(np.zeros(5, np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="`z` given to a 2D plan"):
        plan.setpts(*[np.zeros(5, np.float32)] * 3)
    with pytest.raises(ValueError, match="1-D"):
        plan.setpts(np.zeros((5, 1), np.float32), np.zeros((5, 1), np.float32))
    plan.setpts(np.zeros(5, np.float32), np.zeros(5, np.float32))
    with pytest.raises(ValueError, match=r"\(2, 5\)"):
        plan.execute(np.zeros(5, np.complex64))  # n_trans = 2 needs two vectors
    with pytest.raises(ValueError, match="`out` must have shape"):
        plan.execute(np.zeros((2, 5), np.complex64), out=np.zeros((2, 6, 8), np.complex64))
    with pytest.raises(ValueError, match="C-contiguous"):
        plan.execute(np.zeros((2, 5), np.complex64), out=np.zeros((2, 8, 12), np.complex64)[:, :, ::2])
    with pytest.raises(ValueError, match="n_modes must have 1, 2 or 3"):
        fieldft.Plan(1, (2, 2, 2, 2))
    with pytest.raises(ValueError, match="1, 2 or 3"):
        fieldft.Plan(4, (8,))


def test_library_errors_map_to_python_exceptions():
    with pytest.raises(fieldft.EpsTooSmallError) as e:
        fieldft.Plan(1, (8,), eps=1e-10, dtype="complex64")
    assert isinstance(e.value, ValueError) and isinstance(e.value, fieldft.Error)
    assert e.value.code_name == "eps too small" and "smallest accepted" in str(e.value)
    with pytest.raises(fieldft.InvalidArgumentError):
        fieldft.Plan(1, (0,))  # a mode count < 1
    with pytest.raises(ValueError):
        fieldft.Plan(1, (8,), upsampfac=3.0)
    with pytest.raises(ValueError, match=r"\[1.25, 2.25\]"):
        fieldft.Plan(1, (8,), upsampfac=2.3)
    with pytest.raises(TypeError, match="unknown option"):
        fieldft.Plan(1, (8,), spread_sort=1)
    with pytest.raises(fieldft.InvalidArgumentError, match="spread_boxes"):
        fieldft.Plan(1, (8, 8, 8), spread_boxes=2)
    # Accepted by every backend; only the CUDA backend's 3D output-driven spreading uses it.
    plan = fieldft.Plan(1, (8, 8, 8), spread_boxes=1, backend="cpu")
    plan.setpts(*(np.zeros(3, np.float32) for _ in range(3)))
    assert plan.spread_boxes is False
    assert plan.spread_tensor_cores is False
    plan = fieldft.Plan(1, (8,))
    with pytest.raises(fieldft.InvalidStateError) as e:
        plan.execute(np.zeros(3, np.complex64))
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(fieldft.NonFiniteError, match="finite|NaN|Inf"):
        plan.setpts(np.array([0.0, np.nan], np.float32))
    if not fieldft.build_info()["cuda"]:
        with pytest.raises(fieldft.BackendUnavailableError):
            fieldft.Plan(1, (8,), backend="cuda")


def test_output_overlapping_input_is_refused():
    plan = fieldft.Plan(2, (4,), dtype="complex128")
    plan.setpts(np.zeros(4))
    buf = np.zeros(4, np.complex128)
    with pytest.raises(ValueError, match="overlaps"):
        plan.execute(buf, out=buf)


def test_plans_run_from_threads(rng):
    # The GIL is released during execute and each plan serialises its own calls: four threads
    # sharing one plan must all get the single-threaded answer.
    dtype, modes, m = np.complex128, (32, 32), 2000
    pts = random_points(rng, 2, m, dtype)
    plan = fieldft.Plan(1, modes, eps=1e-9, dtype=dtype)
    plan.setpts(*pts)
    inputs = [random_complex(rng, m, dtype) for _ in range(4)]
    want = [plan.execute(c) for c in inputs]
    got = [None] * 4

    def work(i):
        for _ in range(5):
            got[i] = plan.execute(inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        assert rel_err(g, w) < 1e-14  # the same computation: equal up to summation order


def test_zero_points(rng):
    plan = fieldft.Plan(1, (5, 4), dtype="complex128")
    plan.setpts(np.zeros(0), np.zeros(0))
    f = plan.execute(np.zeros(0, np.complex128))
    assert f.shape == (5, 4) and not np.any(f)


def test_build_info_and_devices():
    info = fieldft.build_info()
    assert info["version"] == fieldft.__version__
    assert isinstance(info["cuda"], bool)
    assert isinstance(fieldft.cuda_devices(), list)
    assert fieldft.min_eps("complex64") > fieldft.min_eps("complex128") > 0
