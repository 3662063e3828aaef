"""pytest hooks and fixtures of the fieldft Python tests (helpers live in support.py)."""

import numpy as np
import pytest

from fieldft import _arrays

from support import have_gpu


def pytest_collection_modifyitems(config, items):
    if have_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA device, or fieldft built without CUDA")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


# GPU fixtures: cupy and torch CUDA (skipping without them), and a guard against copies.

@pytest.fixture
def cupy():
    return pytest.importorskip("cupy")


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


@pytest.fixture
def no_copies(monkeypatch):
    """Makes any copy of a caller's array fail the test."""
    def fail(*args):
        raise AssertionError("a contiguous array was copied")
    monkeypatch.setattr(_arrays, "contiguous_copy", fail)
