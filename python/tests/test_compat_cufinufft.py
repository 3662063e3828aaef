"""fieldft.compat.cufinufft behaves like the cufinufft 2.5 Python package: names, signatures,
defaults, axis order, out=, properties, options and exception types. These tests use host
arrays (a fieldft extension, so that they run without a GPU); test_gpu.py repeats the essentials
with cupy arrays and torch tensors on a GPU."""

import inspect
import warnings

import numpy as np
import pytest

import fieldft.compat.cufinufft as cufinufft
from support import direct_type1, direct_type2, direct_type3, random_complex, random_points, rel_err

# cufinufft 2.5.1's public signatures (its Python sources).
SIGNATURES = {
    "nufft1d1": "(x, data, n_modes=None, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft1d2": "(x, data, out=None, eps=1e-06, isign=-1, **kwargs)",
    "nufft1d3": "(x, data, s, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft2d1": "(x, y, data, n_modes=None, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft2d2": "(x, y, data, out=None, eps=1e-06, isign=-1, **kwargs)",
    "nufft2d3": "(x, y, data, s, t, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft3d1": "(x, y, z, data, n_modes=None, out=None, eps=1e-06, isign=1, **kwargs)",
    "nufft3d2": "(x, y, z, data, out=None, eps=1e-06, isign=-1, **kwargs)",
    "nufft3d3": "(x, y, z, data, s, t, u, out=None, eps=1e-06, isign=1, **kwargs)",
    "Plan": "(nufft_type, n_modes, n_trans=1, eps=1e-06, isign=None, dtype='complex64', **kwargs)",
    "Plan.setpts": "(self, x, y=None, z=None, s=None, t=None, u=None)",
    "Plan.execute": "(self, data, out=None)",
}
TOL32 = 5e-4  # eps 1e-4 in single precision (support.py explains the factor 5)


def _get(module, name):
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures(name):
    assert str(inspect.signature(_get(cufinufft, name))) == SIGNATURES[name]
    assert name.split(".")[0] in cufinufft.__all__


def test_results_default_complex64(rng):
    m = 80
    x, y, z = random_points(rng, 3, m, np.float32)
    c = random_complex(rng, m, np.complex64)
    f = random_complex(rng, (2, 6, 5), np.complex64)
    s, t, u = random_points(rng, 3, 20, np.float32, spread=10.0)
    got = cufinufft.nufft2d1(x, y, c, (6, 5), eps=1e-4)
    assert got.dtype == np.complex64 and got.shape == (6, 5)
    assert rel_err(got, direct_type1([x, y], c, (6, 5), 1)) < TOL32
    got = cufinufft.nufft2d2(x, y, f, eps=1e-4)
    assert got.shape == (2, m)
    assert rel_err(got, direct_type2([x, y], f, -1)) < TOL32
    assert rel_err(cufinufft.nufft3d3(x, y, z, c, s, t, u, eps=1e-4), direct_type3([x, y, z], c, [s, t, u], 1)) < TOL32
    assert rel_err(cufinufft.nufft1d1(x, c, 7, eps=1e-4), direct_type1([x], c, (7,), 1)) < TOL32


def test_plan_interface(rng):
    m = 60
    x, y = random_points(rng, 2, m, np.float64)
    plan = cufinufft.Plan(1, (6, 5), n_trans=2, eps=1e-9, dtype="complex128", modeord=0, gpu_method=1,
                          gpu_sort=1, gpu_kerevalmeth=1, gpu_device_id=0)
    assert (plan.type, plan.dim, plan.n_modes, plan.n_trans, plan.dtype) == (1, 2, (6, 5), 2, np.complex128)
    plan.setpts(x, y)
    c = random_complex(rng, (2, m), np.complex128)
    out = np.zeros((2, 6, 5), np.complex128)
    assert plan.execute(c, out=out) is out
    assert rel_err(out, direct_type1([x, y], c, (6, 5), 1)) < 5e-9
    # cufinufft reads a data array of the right size whatever its shape: flattened modes too
    p2 = cufinufft.Plan(2, (6, 5), eps=1e-9, dtype="complex128")
    p2.setpts(x, y)
    f = random_complex(rng, (6, 5), np.complex128)
    got = p2.execute(f.reshape(30))
    assert got.shape == (m,)
    assert rel_err(got, direct_type2([x, y], f, -1)) < 5e-9


def test_invalid_options_and_arguments():
    with pytest.raises(TypeError, match="Invalid option 'spread_sort'"):
        cufinufft.Plan(1, (8,), spread_sort=1)  # a finufft option, not a cufinufft one
    with pytest.raises(TypeError, match="Expected complex64 or complex128"):
        cufinufft.Plan(1, (8,), dtype="float32")
    with pytest.raises(ValueError, match="type 3"):
        cufinufft.Plan(3, (2,))
    with pytest.raises(ValueError, match="Only dimensions 1, 2, and 3"):
        cufinufft.Plan(1, (2, 2, 2, 2))
    with pytest.raises(ValueError, match="Invalid n_modes"):
        cufinufft.Plan(1, 2.5)
    with pytest.raises(RuntimeError, match="Error creating plan"):
        cufinufft.Plan(1, (8,), eps=1e-12)  # below single precision's reach


def test_setpts_and_execute_errors(rng):
    x, y = random_points(rng, 2, 30, np.float32)
    plan = cufinufft.Plan(1, (8, 6))
    with pytest.raises(AttributeError):
        plan.execute(random_complex(rng, 30, np.complex64))  # before setpts, as in cufinufft
    with pytest.raises(TypeError, match="correct dtype"):
        plan.setpts(x.astype(np.float64), y)
    with pytest.raises(TypeError, match="must be of shape"):
        plan.setpts(x, y[:-1])
    with pytest.raises(TypeError, match="must be a vector"):
        plan.setpts(x[None], y[None])
    with pytest.raises(TypeError, match="but `y` was specified"):
        cufinufft.Plan(1, (8,)).setpts(x, y)
    with pytest.raises(RuntimeError, match="Error setting non-uniform points"):
        plan.setpts(np.full(30, np.inf, np.float32), y)
    plan.setpts(x, y)
    c = random_complex(rng, 30, np.complex64)
    with pytest.raises(TypeError, match="`data` must be of shape"):
        plan.execute(c[:-1])
    with pytest.raises(TypeError, match="`out` must be of shape"):
        plan.execute(c, out=np.zeros((8, 7), np.complex64))
    with pytest.raises(TypeError, match="requirement: C"):
        plan.execute(c, out=np.zeros((8, 12), np.complex64)[:, ::2])
    with pytest.raises(TypeError, match="correct dtype"):
        plan.execute(c.astype(np.complex128))
    with pytest.warns(UserWarning, match="Copying array"):
        got = plan.execute(np.repeat(c, 2)[::2])
    assert rel_err(got, plan.execute(c)) < 1e-6  # the same transform of a copied input
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan.execute(c)


def test_spreadinterponly_plans(rng):
    """gpu_spreadinterponly=1 (MRI-NUFFT's cufinufft density estimation uses it): spreading and
    interpolation only, on the n_modes grid, as fieldft's Plan option spread_interp_only."""
    import fieldft
    x, y = random_points(rng, 2, 100, np.float32)
    c = random_complex(rng, 100, np.complex64)
    plan = cufinufft.Plan(1, (32, 24), eps=1e-5, gpu_spreadinterponly=1, upsampfac=2.0)
    plan.setpts(x, y)
    native = fieldft.Plan(1, (32, 24), eps=1e-5, spread_interp_only=True, upsampfac=2.0)
    native.setpts(x, y)
    assert rel_err(plan.execute(c), native.execute(c)) < 1e-6  # the same computation (float32)
    interp = cufinufft.Plan(2, (32, 24), eps=1e-5, gpu_spreadinterponly=1, upsampfac=2.0)
    interp.setpts(x, y)
    f = random_complex(rng, (32, 24), np.complex64)
    lhs, rhs = np.vdot(plan.execute(c), f), np.vdot(c, interp.execute(f))
    assert abs(lhs - rhs) < 1e-5 * abs(lhs)  # adjoint pair (a real kernel), float32 sums


# ---------------------------------------------------------------------------------------------
# cufinufft._compat: the helpers programs written for cufinufft import from it.

def test_compat_module_helpers():
    from fieldft.compat.cufinufft import _compat

    a = np.zeros((4, 6), np.complex128)
    out = _compat.array_empty_like(a, (3, 5), dtype=np.complex64)
    assert isinstance(out, np.ndarray) and out.shape == (3, 5) and out.dtype == np.complex64
    assert _compat.array_can_contiguous(a)
    assert _compat.get_array_module(a) == "generic"
    assert _compat.get_array_size(a) == 24 and _compat.get_array_dtype(a) == np.complex128
    view = a[:, ::2]
    assert not _compat.is_array_contiguous(view) and _compat.is_array_contiguous(_compat.array_contiguous(view))
    with pytest.raises(TypeError, match="cuda array interface"):
        _compat.get_array_ptr(a)  # a host array has no device pointer
    pycuda_array = type("GPUArray", (), {"__module__": "pycuda.gpuarray"})()
    assert _compat.get_array_module(pycuda_array) == "pycuda" and not _compat.array_can_contiguous(pycuda_array)


def test_compat_module_torch_helpers():
    torch = pytest.importorskip("torch")
    from fieldft.compat.cufinufft import _compat

    t = torch.zeros((4, 6), dtype=torch.complex64)
    out = _compat.array_empty_like(t, shape=(2, 3), dtype=np.complex128)
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 3) and out.dtype == torch.complex128
    assert out.device == t.device and _compat.array_can_contiguous(t)
    assert _compat.get_array_module(t) == "torch" and _compat.get_array_size(t) == 4  # cufinufft: len()
    assert _compat.get_array_dtype(t) == np.complex64


def test_programs_written_for_cufinufft_import_its_compat_module(monkeypatch):
    """With fieldft.compat.cufinufft installed as `cufinufft`, `from cufinufft._compat import ...`
    (as cufinufft's users and MRI-NUFFT do) works."""
    import importlib
    import sys
    monkeypatch.setitem(sys.modules, "cufinufft", cufinufft)
    monkeypatch.delitem(sys.modules, "cufinufft._compat", raising=False)
    module = importlib.import_module("cufinufft._compat")
    for name in ("array_empty_like", "array_can_contiguous", "get_array_ptr"):
        assert callable(getattr(module, name))
