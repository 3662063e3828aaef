"""pytest hooks and fixtures of the fieldft Python tests (helpers live in support.py)."""

import numpy as np
import pytest

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
