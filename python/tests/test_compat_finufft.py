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
