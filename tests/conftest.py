"""Shared pytest configuration: hypothesis profiles and the shared-datasets fixture."""

import os

import pytest
from hypothesis import HealthCheck, settings

from fastgssl.datasets import shared_datasets_dir

# First calls compile Numba kernels, so no per-example deadline; "ci" is the CI profile.
settings.register_profile(
    "ci", deadline=None, max_examples=30, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def datasets_dir():
    """Path of ../shared/datasets; skips the test with a message when it is absent."""
    path = shared_datasets_dir()
    if path is None:
        pytest.skip("shared datasets folder not found (../shared/datasets or $FASTGSSL_DATASETS)")
    return path
