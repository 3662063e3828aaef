"""fieldft.compat.finufft behaves like the finufft 2.5 Python package: names, signatures,
defaults, axis order, out=, properties, options, warnings and exception types. Where the real
finufft is installed, results and behaviours are also compared with it directly."""

import inspect
import warnings

import numpy as np
import pytest

import fieldft.compat.finufft as finufft
from support import direct_type1, direct_type2, direct_type3, random_complex, random_points, rel_err

try:
    import finufft as real_finufft
except ImportError:  # the cross-checks below skip themselves
    real_finufft = None

# finufft 2.5.1's public signatures, as its documentation and sources give them.
SIGNATURES = {
    "nufft1d1": "(x, c, n_modes=None, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft1d2": "(x, f, out=None, eps=1e-06, isign=-1, **kwargs)",
    "nufft1d3": "(x, c, s, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft2d1": "(x, y, c, n_modes=None, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft2d2": "(x, y, f, out=None, eps=1e-06, isign=-1, **kwargs)",
    "nufft2d3": "(x, y, c, s, t, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft3d1": "(x, y, z, c, n_modes=None, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft3d2": "(x, y, z, f, out=None, eps=1e-06, isign=-1, **kwargs)",
    "nufft3d3": "(x, y, z, c, s, t, u, out=None, eps=1e-06, isign=1, **kwargs)",
    "Plan": "(nufft_type, n_modes_or_dim, n_trans=1, eps=1e-06, isign=None, dtype='complex128', **kwargs)",
    "Plan.setpts": "(self, x=None, y=None, z=None, s=None, t=None, u=None)",
    "Plan.execute": "(self, data, out=None)",
    "Plan.execute_adjoint": "(self, data, out=None)",
}
TOL = 5e-9  # eps 1e-9 in double precision (support.py explains the factor 5)


def _get(module, name):
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures(name):
    assert str(inspect.signature(_get(finufft, name))) == SIGNATURES[name]
    assert name.split(".")[0] in finufft.__all__


@pytest.mark.skipif(real_finufft is None, reason="finufft not installed")
@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures_equal_the_real_package(name):
    assert inspect.signature(_get(finufft, name)) == inspect.signature(_get(real_finufft, name))


def test_simple_interface_results(rng):
    m = 70
    x, y, z = random_points(rng, 3, m)
    c = random_complex(rng, m, np.complex128)
    c2 = random_complex(rng, (2, m), np.complex128)
    f = random_complex(rng, (6, 5), np.complex128)
    s, t, u = random_points(rng, 3, 30, spread=12.0)
    assert rel_err(finufft.nufft2d1(x, y, c, (6, 5), eps=1e-9), direct_type1([x, y], c, (6, 5), 1)) < TOL
    assert rel_err(finufft.nufft2d1(x, y, c2, 6, eps=1e-9), direct_type1([x, y], c2, (6, 6), 1)) < TOL
    assert rel_err(finufft.nufft2d2(x, y, f, eps=1e-9), direct_type2([x, y], f, -1)) < TOL
    assert rel_err(finufft.nufft3d3(x, y, z, c, s, t, u, eps=1e-9), direct_type3([x, y, z], c, [s, t, u], 1)) < TOL
    assert rel_err(finufft.nufft1d1(x, c, 9, eps=1e-9, isign=-1), direct_type1([x], c, (9,), -1)) < TOL


def test_default_dtype_is_complex128_and_float32_gives_complex64(rng):
    x = random_points(rng, 1, 20)[0]
    c = random_complex(rng, 20, np.complex128)
    assert finufft.nufft1d1(x, c, 8).dtype == np.complex128
    assert finufft.Plan(1, (8,)).dtype == np.complex128
    out = finufft.nufft1d1(x.astype(np.float32), c.astype(np.complex64), 8)
    assert out.dtype == np.complex64


def test_out_is_written_and_returned(rng):
    x, y = random_points(rng, 2, 40)
    c = random_complex(rng, 40, np.complex128)
    out = np.zeros((1, 6, 5), np.complex128)  # n_modes taken from out, (1, ...) accepted
    ret = finufft.nufft2d1(x, y, c, out=out, eps=1e-9)
    assert ret is out
    assert rel_err(out[0], direct_type1([x, y], c, (6, 5), 1)) < TOL
    plan = finufft.Plan(2, (6, 5), eps=1e-9)
    plan.setpts(x, y)
    cout = np.zeros(40, np.complex128)
    assert plan.execute(out[0], cout) is cout


def test_plan_properties_follow_finufft():
    plan = finufft.Plan(1, (8, 9, 10), n_trans=2)
    assert (plan.type, plan.dim, plan.n_trans, plan.dtype) == (1, 3, 2, np.complex128)
    assert tuple(plan.n_modes) == (10, 9, 8)  # finufft reports them fastest-first
    assert tuple(finufft.Plan(3, 2).n_modes) == (1, 1)
    assert finufft.Plan(2, (4,)).dtype == np.complex128


def test_adjoint_and_type3(rng):
    x, y = random_points(rng, 2, 50)
    f = random_complex(rng, (2, 6, 5), np.complex128)
    plan = finufft.Plan(1, (6, 5), n_trans=2, eps=1e-9)
    plan.setpts(x, y)
    got = plan.execute_adjoint(f)
    assert got.shape == (2, 50)
    assert rel_err(got, direct_type2([x, y], f, -1)) < TOL
    s = random_points(rng, 1, 25, spread=9.0)[0]
    p3 = finufft.Plan(3, 1, eps=1e-9)
    p3.setpts(x, s=s)
    c = random_complex(rng, 50, np.complex128)
    assert rel_err(p3.execute(c), direct_type3([x], c, [s], 1)) < TOL


def test_warnings(rng):
    x = random_points(rng, 1, 30)[0]
    c = random_complex(rng, 30, np.complex128)
    with pytest.warns(Warning, match='finufft_opts does not have attribute "foo"'):
        finufft.nufft1d1(x, c, 8, foo=1)
    # eps below reach: a warning, then the most accurate transform the plan can do
    with pytest.warns(Warning, match="eps tolerance too small"):
        got = finufft.nufft1d1(x, c, 8, eps=1e-20)
    assert rel_err(got, direct_type1([x], c, (8,), 1)) < 1e-12
    with pytest.warns(UserWarning, match="requirement: C. Copying array"):
        finufft.nufft1d1(np.repeat(x, 2)[::2], c, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # known options and contiguous arrays: silent
        finufft.nufft1d1(x, c, 8, modeord=1, nthreads=1, fftw=0, spread_sort=1, upsampfac=1.25, debug=0)


def test_exceptions(rng):
    x = random_points(rng, 1, 30)[0]
    c = random_complex(rng, 30, np.complex128)
    with pytest.raises(RuntimeError, match="n_modes must be a tuple or an integer"):
        finufft.nufft1d1(x, c, [8])
    with pytest.raises(TypeError, match="does not have the correct dtype"):
        finufft.nufft1d1(x, c.astype(np.complex64), 8)
    with pytest.raises(RuntimeError, match="x dtype should be float64"):
        finufft.nufft1d1(x.astype(np.int64), c, 8)
    with pytest.raises(RuntimeError):
        finufft.nufft1d1(x, c[:-1], 8)
    with pytest.raises(RuntimeError):
        finufft.Plan(4, (8,))
    with pytest.raises(RuntimeError):
        finufft.Plan(1, (8,), dtype="float64")
    with pytest.raises(RuntimeError):
        finufft.Plan(1, (8,), n_trans=0)
    with pytest.raises(TypeError, match="FFTW locks"):
        finufft.Plan(1, (8,), fftw_lock_fun=None)
    plan = finufft.Plan(1, (8, 8))
    with pytest.raises(AttributeError):
        plan.execute(c)  # before setpts, as in finufft
    with pytest.raises(RuntimeError, match="y must be a vector"):
        plan.setpts(x)
    with pytest.raises(RuntimeError, match="same length"):
        plan.setpts(x, x[:-1])
    plan.setpts(x, x)
    with pytest.raises(TypeError, match="requirement: C"):
        plan.execute(c, out=np.zeros((8, 16), np.complex128)[:, ::2])
    readonly = np.zeros((8, 8), np.complex128)
    readonly.setflags(write=False)
    with pytest.raises(TypeError, match="requirement: W"):
        plan.execute(c, out=readonly)
    with pytest.raises(RuntimeError):
        plan.execute(c, out=np.zeros((8, 9), np.complex128))


@pytest.mark.skipif(real_finufft is None, reason="finufft not installed")
def test_same_results_and_errors_as_the_real_package(rng):
    m = 60
    x, y, z = random_points(rng, 3, m)
    c = random_complex(rng, (3, m), np.complex128)
    calls = [
        lambda L: L.nufft2d1(x, y, c, (6, 5), eps=1e-9),
        lambda L: L.nufft3d1(x, y, z, c[0], (4, 3, 5), eps=1e-9, modeord=1),
        lambda L: L.nufft2d2(x, y, L.nufft2d1(x, y, c, (6, 5), eps=1e-9), eps=1e-9),
        lambda L: L.nufft1d3(x, c, y * 3, eps=1e-9),
        lambda L: L.nufft2d1(x, y, c.astype(np.complex64), (6, 5)),
        lambda L: L.Plan(1, (8,), dtype="int32"),
        lambda L: L.nufft2d1(x, y, c, (6, 5, 4)),
    ]
    for call in calls:
        outcomes = []
        for lib in (real_finufft, finufft):
            try:
                outcomes.append(call(lib))
            except Exception as e:  # noqa: BLE001 - the type is what is compared
                outcomes.append(type(e))
        want, got = outcomes
        if isinstance(want, type):
            assert got is want
        else:
            assert got.shape == want.shape and got.dtype == want.dtype
            # two approximations, each within 5*eps of the truth (eps 1e-6 and 1e-9 here)
            assert rel_err(got, want) < (1e-5 if want.dtype == np.complex64 else 1e-8)


# ---------------------------------------------------------------------------------------------
# execute's shape checks: finufft's messages, word for word (its valid_cshape and valid_fshape,
# every raise site; "f.shape is not consistent with n_modes" has three, one per axis), so that
# callers matching on them keep working. Each case: (plan arguments, setpts, the call).

_M, _NK = 30, 12


def _points(rng):
    x, y, z = random_points(rng, 3, _M)
    s = random_points(rng, 1, _NK, spread=5.0)[0]
    return x, y, z, s


def _zeros(*shape):
    return np.zeros(shape, np.complex128)


SHAPE_CASES = [
    ("c.ndim must be 1 or 2 if n_trans == 1",
     (1, (6, 5)), "xy", lambda p: p.execute(_zeros(1, 1, _M))),
    ("c.size must be same as x.size if n_trans == 1",
     (1, (6, 5)), "xy", lambda p: p.execute(_zeros(_M - 1))),
    ("c.ndim must be 2 if n_trans > 1",
     (1, (6, 5), 2), "xy", lambda p: p.execute(_zeros(2 * _M))),
    ("c.shape must be (n_trans, x.size) if n_trans > 1",
     (1, (6, 5), 2), "xy", lambda p: p.execute(_zeros(2, _M - 1))),
    ("f.ndim must be 1 or 2 for type 3 if n_trans == 1",
     (3, 1), "xs", lambda p: p.execute(_zeros(_M), out=_zeros(1, 1, _NK))),
    ("f.size of must be nk if n_trans == 1",
     (3, 1), "xs", lambda p: p.execute(_zeros(_M), out=_zeros(_NK + 1))),
    ("f.ndim must be 2 for type 3 if n_trans > 1",
     (3, 1, 2), "xs", lambda p: p.execute(_zeros(2, _M), out=_zeros(2 * _NK))),
    ("f.shape must be (n_trans, nk) if n_trans > 1",
     (3, 1, 2), "xs", lambda p: p.execute(_zeros(2, _M), out=_zeros(2, _NK + 1))),
    ("f.ndim must be same as the problem dimension or the problem dimension + 1 for type 1 or 2 if n_trans == 1",
     (2, (6, 5)), "xy", lambda p: p.execute(_zeros(30))),
    ("f.shape[0] must be 1 for type 1 or 2 if n_trans == 1 and len(f.shape) == dim+1",
     (2, (6, 5)), "xy", lambda p: p.execute(_zeros(2, 6, 5))),
    ("f.ndim must be same as the problem dimension + 1 for type 1 or 2 if n_trans > 1",
     (2, (6, 5), 2), "xy", lambda p: p.execute(_zeros(6, 5))),
    ("f.shape[0] must be n_trans for type 1 or 2 if n_trans > 1",
     (2, (6, 5), 2), "xy", lambda p: p.execute(_zeros(3, 6, 5))),
    ("f.shape is not consistent with n_modes",  # the last axis
     (2, (4, 3, 5)), "xyz", lambda p: p.execute(_zeros(4, 3, 6))),
    ("f.shape is not consistent with n_modes",  # the middle axis
     (2, (4, 3, 5)), "xyz", lambda p: p.execute(_zeros(4, 4, 5))),
    ("f.shape is not consistent with n_modes",  # the first axis
     (1, (4, 3, 5)), "xyz", lambda p: p.execute(_zeros(_M), out=_zeros(5, 3, 5))),
    # the same checks on execute_adjoint's sides
    ("c.size must be same as x.size if n_trans == 1",
     (3, 1), "xs", lambda p: p.execute_adjoint(_zeros(_M))),  # type 3 adjoint input: nk values
    ("f.shape[0] must be 1 for type 1 or 2 if n_trans == 1 and len(f.shape) == dim+1",
     (1, (6, 5)), "xy", lambda p: p.execute_adjoint(_zeros(2, 6, 5))),
    ("c.ndim must be 2 if n_trans > 1",
     (1, (6, 5), 2), "xy", lambda p: p.execute_adjoint(_zeros(2, 6, 5), out=_zeros(2 * _M))),
]


def _run_case(lib, rng, plan_args, which, call):
    x, y, z, s = _points(rng)
    plan = lib.Plan(*plan_args, eps=1e-9)
    given = {"x": x, "y": y, "z": z, "s": s}
    plan.setpts(**{k: given[k] for k in which})
    call(plan)


@pytest.mark.parametrize("message, plan_args, which, call", SHAPE_CASES)
def test_execute_shape_messages_are_finuffts(rng, message, plan_args, which, call):
    with pytest.raises(RuntimeError) as raised:
        _run_case(finufft, rng, plan_args, which, call)
    assert str(raised.value) == "FINUFFT " + message


@pytest.mark.skipif(real_finufft is None, reason="finufft not installed")
@pytest.mark.parametrize("message, plan_args, which, call", SHAPE_CASES)
def test_execute_shape_messages_equal_the_real_package(rng, message, plan_args, which, call):
    with pytest.raises(RuntimeError) as raised:
        _run_case(real_finufft, rng, plan_args, which, call)
    assert str(raised.value) == "FINUFFT " + message


# ---------------------------------------------------------------------------------------------
# spreadinterponly=1: spreading (type 1) and interpolation (type 2) only, on the n_modes grid.

def test_spreadinterponly_is_fieldfts_spread_interp_only(rng):
    import fieldft
    x, y = random_points(rng, 2, 200)
    c = random_complex(rng, 200, np.complex128)
    grid = (32, 24)
    spread = finufft.Plan(1, grid, eps=1e-6, spreadinterponly=1, upsampfac=2.0)
    spread.setpts(x, y)
    native = fieldft.Plan(1, grid, eps=1e-6, dtype="complex128", backend="cpu", spread_interp_only=True,
                          upsampfac=2.0)
    native.setpts(x, y)
    g = spread.execute(c)
    assert g.shape == grid
    assert rel_err(g, native.execute(c)) < 1e-14  # the same computation
    assert rel_err(finufft.nufft2d1(x, y, c, grid, eps=1e-6, spreadinterponly=1, upsampfac=2.0), g) < 1e-14
    # interpolation from the same grid is the adjoint (a real kernel): <spread c, f> = <c, interp f>
    interp = finufft.Plan(2, grid, eps=1e-6, spreadinterponly=1, upsampfac=2.0)
    interp.setpts(x, y)
    f = random_complex(rng, grid, np.complex128)
    assert abs(np.vdot(g, f) - np.vdot(c, interp.execute(f))) < 1e-12 * abs(np.vdot(g, f))
    # type 3 ignores the option, as finufft does
    s = random_points(rng, 1, 20, spread=8.0)[0]
    assert rel_err(finufft.nufft1d3(x, c, s, eps=1e-9, spreadinterponly=1), direct_type3([x], c, [s], 1)) < TOL


@pytest.mark.skipif(real_finufft is None, reason="finufft not installed")
def test_spreadinterponly_against_the_real_package(rng):
    """The grids of both libraries hold each point's kernel footprint at the same cells (grid
    point p at -pi + 2 pi p / N); the kernels themselves are each library's own (width and shape
    chosen from eps and upsampfac by different designs), so the values agree only roughly."""
    grid = (40, 36)
    for _ in range(5):
        x, y = random_points(rng, 2, 1)
        ours = finufft.nufft2d1(x, y, np.ones(1, np.complex128), grid, eps=1e-6, spreadinterponly=1, upsampfac=2.0)
        theirs = real_finufft.nufft2d1(x, y, np.ones(1, np.complex128), grid, eps=1e-6, spreadinterponly=1,
                                       upsampfac=2.0)
        assert np.unravel_index(np.argmax(np.abs(ours)), grid) == np.unravel_index(np.argmax(np.abs(theirs)), grid)
        # normalised footprints: different ES kernels, same centre and width class
        a, b = np.abs(ours) / np.abs(ours).sum(), np.abs(theirs) / np.abs(theirs).sum()
        assert rel_err(a, b) < 0.25
