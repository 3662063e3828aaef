"""Validation as a Python caller sees it: messages name the caller's arguments in the caller's
axis order (the C++ plan sees them reversed), integers too large for the library's C types are
refused with fieldft's exceptions, and the library's rules for nthreads, eps, isign, the fold
limit and the type 3 path reach Python unchanged."""

import numpy as np
import pytest

import fieldft
from fieldft import _core
from fieldft._engine import dft_message, plan_message
from fieldft.compat import cufinufft as compat_cufinufft
from fieldft.compat import finufft as compat_finufft
from support import direct_type1, direct_type3, random_complex, random_points, rel_err


def test_nthreads_negative_refused_large_capped(rng):
    cap = _core.max_cpu_threads()
    with pytest.raises(fieldft.InvalidArgumentError, match="nthreads is -1"):
        fieldft.Plan(1, (8,), backend="cpu", nthreads=-1)
    for n, want in ((100000, cap), (2**40, cap), (1, 1)):  # 100000 aborted inside OpenMP
        plan = fieldft.Plan(1, (12, 9), backend="cpu", nthreads=n, eps=1e-9, dtype="complex128")
        assert plan.nthreads == want
        pts = random_points(rng, 2, 50, np.complex128)
        c = random_complex(rng, 50, np.complex128)
        plan.setpts(*pts)
        assert rel_err(plan.execute(c), direct_type1(pts, c, (12, 9), +1)) < 5e-9
    assert fieldft.Plan(1, (8,), backend="cpu").nthreads == _core.cpu_threads_for(0)
    k = np.zeros(4, np.float32)
    with pytest.raises(fieldft.InvalidArgumentError, match="nthreads is -2") as e:
        fieldft.Dft((4, 4), k, k, backend="cpu", nthreads=-2)
    assert "options." not in str(e.value)  # the keyword argument's name, not the C++ field's
    op = fieldft.Dft((4, 4), k, k, backend="cpu", nthreads=100000)
    assert op.nthreads == cap
    assert op.forward(np.ones((4, 4), np.complex64)).shape == (4,)


@pytest.mark.parametrize("dim,bad,name", [(2, 1, "y[7]"), (2, 0, "x[7]"), (3, 2, "z[7]"), (3, 0, "x[7]")])
def test_coordinate_errors_name_the_callers_array(dim, bad, name):
    pts = [np.zeros(10, np.float32) for _ in range(dim)]
    pts[bad][7] = np.inf
    plan = fieldft.Plan(1, (8, 6, 4)[:dim], backend="cpu")
    with pytest.raises(fieldft.NonFiniteError) as e:
        plan.setpts(*pts)
    message = str(e.value)
    assert name in message
    assert all(f"{a}[" not in message for a in "xyz" if a != name[0])


def test_type3_target_errors_name_the_callers_array():
    x, y = np.zeros(5), np.zeros(5)
    s, t = np.zeros(6), np.zeros(6)
    t[2] = np.nan
    plan = fieldft.Plan(3, 2, dtype="complex128", backend="cpu")
    with pytest.raises(fieldft.NonFiniteError, match=r"t\[2\]"):
        plan.setpts(x, y, s=s, t=t)


def test_mode_count_errors_name_the_callers_axis():
    for modes, name in (((0, 16), "n_modes[0]"), ((16, 0), "n_modes[1]"), ((4, 0, 5), "n_modes[1]"),
                        ((4, 5, -1), "n_modes[2]"), (0, "n_modes[0]")):
        with pytest.raises(fieldft.InvalidArgumentError) as e:
            fieldft.Plan(1, modes)
        assert name in str(e.value) and "N1" not in str(e.value) and "N2" not in str(e.value), modes
    with pytest.raises(fieldft.InvalidArgumentError, match="n_trans must be >= 1"):
        fieldft.Plan(1, (8,), n_trans=0)


def test_dft_shape_errors_name_the_callers_axis():
    k = np.zeros(4, np.float32)
    with pytest.raises(fieldft.InvalidArgumentError, match=r"shape\[0\] is 0"):
        fieldft.Dft((0, 8), k, k)
    with pytest.raises(fieldft.InvalidArgumentError, match=r"shape\[1\] is 0"):
        fieldft.Dft((8, 0), k, k)
    with pytest.raises(fieldft.InvalidArgumentError, match=r"shape\[2\] is -3"):
        fieldft.Dft((2, 8, -3), k, k, k)
    with pytest.raises(fieldft.InvalidArgumentError, match="images is 0"):
        fieldft.Dft((4, 4), k, k, images=0)


def test_integers_too_large_for_the_library():
    with pytest.raises(fieldft.TooLargeError, match="64-bit") as e:
        fieldft.Plan(1, 2**63)
    assert isinstance(e.value, ValueError)
    with pytest.raises(fieldft.TooLargeError, match=r"n_modes\[1\]"):
        fieldft.Plan(1, (8, 2**64))
    with pytest.raises(fieldft.TooLargeError, match="n_trans"):
        fieldft.Plan(1, (8,), n_trans=2**63)
    with pytest.raises(fieldft.InvalidArgumentError, match=r"n_modes\[0\] must be >= 1"):
        fieldft.Plan(1, (-2**70, 8))
    with pytest.raises(fieldft.InvalidArgumentError, match="isign"):
        fieldft.Plan(1, (8,), isign=2**40)
    with pytest.raises(fieldft.InvalidArgumentError, match="modeord"):
        fieldft.Plan(1, (8,), modeord=2**40)
    with pytest.raises(fieldft.InvalidArgumentError, match=r"bin_size\[0\]"):
        fieldft.Plan(1, (8, 8), bin_size=(2**40, 8))
    k = np.zeros(4, np.float32)
    with pytest.raises(fieldft.TooLargeError, match=r"shape\[0\]"):
        fieldft.Dft((2**63, 4), k, k)
    with pytest.raises(fieldft.TooLargeError):  # within int64, but 2^62 x 4 voxels overflow
        fieldft.Dft((2**62, 4), k, k)
    # Large but representable mode counts reach the library, which refuses them for memory.
    with pytest.raises(fieldft.TooLargeError):
        fieldft.Plan(1, 2**62)


def test_eps_must_be_in_0_1():
    for eps in (2.0, 1.0000001, 0.0, -1e-3, float("nan"), float("inf")):
        with pytest.raises(fieldft.InvalidArgumentError, match=r"eps.*\(0, 1\]"):
            fieldft.Plan(1, (8,), eps=eps)
    assert fieldft.Plan(1, (8,), eps=1.0).eps == 1.0


def test_isign_must_be_plus_or_minus_one_but_compat_keeps_finufft_rule(rng):
    for isign in (0, 2, -3):
        with pytest.raises(fieldft.InvalidArgumentError, match=r"isign must be \+1 or -1"):
            fieldft.Plan(1, (8,), isign=isign)
    # finufft: any isign >= 0 is +1, < 0 is -1; eps above 1 is accepted (its loosest kernel).
    x = random_points(rng, 1, 40, np.complex128)[0]
    c = random_complex(rng, 40, np.complex128)
    for isign, sign in ((0, +1), (7, +1), (-4, -1)):
        got = compat_finufft.nufft1d1(x, c, 9, eps=1e-9, isign=isign)
        assert rel_err(got, direct_type1([x], c, (9,), sign)) < 5e-9
    loose = compat_finufft.nufft1d1(x, c, 9, eps=10.0)
    assert loose.shape == (9,) and rel_err(loose, direct_type1([x], c, (9,), +1)) < 1.0
    many = compat_finufft.nufft1d1(x, c, 9, eps=1e-9, nthreads=2**40)  # finufft's int field: capped
    assert rel_err(many, direct_type1([x], c, (9,), +1)) < 5e-9
    x32, c64 = x.astype(np.float32), c.astype(np.complex64)
    assert compat_cufinufft.nufft1d1(x32, c64, 9, eps=10.0, isign=-1).shape == (9,)


def test_coordinates_beyond_the_fold_limit_are_refused():
    plan = fieldft.Plan(2, (8, 6), backend="cpu")  # complex64: float32 coordinates
    x, y = np.zeros(10, np.float32), np.zeros(10, np.float32)
    y[4] = 1e7  # beyond 2π·2^17 ≈ 8.2e5
    with pytest.raises(fieldft.InvalidArgumentError, match=r"y\[4\].*fold limit") as e:
        plan.setpts(x, y)
    assert "x[" not in str(e.value)
    y[4] = 8e5
    plan.setpts(x, y)
    p64 = fieldft.Plan(1, (8,), dtype="complex128", backend="cpu")
    p64.setpts(np.array([0.0, 1e14]))
    with pytest.raises(fieldft.InvalidArgumentError, match=r"x\[1\]"):
        p64.setpts(np.array([0.0, 1e15]))


def test_type3_direct_sums_for_few_points_in_a_huge_box(rng):
    # 10 sources and 10 targets spread over +-4000: the grid would need ~2e7 points; the plan
    # takes the direct sums (microseconds) and says so.
    x = rng.uniform(-4000, 4000, 10)
    s = rng.uniform(-4000, 4000, 10)
    c = random_complex(rng, 10, np.complex128)
    plan = fieldft.Plan(3, 1, eps=1e-8, dtype="complex128", backend="cpu")
    assert plan.type3_direct is False  # before setpts
    plan.setpts(x, s=s)
    assert plan.type3_direct is True
    assert rel_err(plan.execute(c), direct_type3([x], c, [s], +1)) < 5e-8
    # Many points in a small box: the grid; forced either way with the type3_direct option.
    xs, ss = rng.uniform(-1, 1, 2000), rng.uniform(-5, 5, 2000)
    plan.setpts(xs, s=ss)
    assert plan.type3_direct is False
    forced = fieldft.Plan(3, 1, eps=1e-8, dtype="complex128", backend="cpu", type3_direct=1)
    forced.setpts(xs[:50], s=ss[:40])
    assert forced.type3_direct is True
    c50 = random_complex(rng, 50, np.complex128)
    assert rel_err(forced.execute(c50), direct_type3([xs[:50]], c50, [ss[:40]], +1)) < 5e-8
    with pytest.raises(fieldft.InvalidArgumentError, match="type3_direct"):
        fieldft.Plan(3, 1, type3_direct=2)


def test_message_translation():
    # Coordinates, dimensions and mode counts of the C++ plan (x fastest) in the caller's order.
    assert plan_message("non-finite value (inf) in x[3]", 2) == "non-finite value (inf) in y[3]"
    assert plan_message("in y[3]", 3) == "in y[3]"
    assert plan_message("s[1] and u[2]", 3) == "u[1] and s[2]"
    assert plan_message("coordinate array x is null", 2) == "coordinate array y is null"
    assert plan_message("grid of 10 cells in dimension 1 exceeds", 3) == "grid of 10 cells along axis 2 exceeds"
    assert plan_message("mode count N3 must be >= 1", 3) == "n_modes[0] must be >= 1"
    assert plan_message("ntransf must be >= 1", 1) == "n_trans must be >= 1"
    assert plan_message("dimension (number of mode counts) must be 1, 2 or 3", 2).startswith("dimension (")
    assert dft_message("Dft: grid size 0 is 0, expected >= 1", 3) == "Dft: shape[2] is 0, expected >= 1"
    assert dft_message("Dft: options.images is 0", 2) == "Dft: images is 0"
    assert dft_message("Dft: kx[3] is nan", 2) == "Dft: kx[3] is nan"
