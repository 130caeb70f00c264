"""Shared pytest configuration: hypothesis profiles, the shared-datasets fixture, and the
search-against-per-candidate-CV check."""

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


@pytest.fixture
def search_matches_cv():
    """``check(search, est, X, y, approx_kw, **cv_kw)``: every candidate's criterion in the
    fitted search equals ``cv_result`` of that candidate alone (``method="exact"`` unless
    ``cv_kw`` says otherwise), within ``pytest.approx(**approx_kw)``."""
    from sklearn.base import clone

    from fastgssl.cv import cv_result

    def check(search, est, X, y, approx_kw, **cv_kw):
        cv_kw.setdefault("method", "exact")
        errors = search.cv_results_["mean_cv_error"]
        for i, params in enumerate(search.cv_results_["params"]):
            ref = cv_result(clone(est).set_params(**params), X, y, search.folds_, **cv_kw)
            assert errors[i] == pytest.approx(ref.score, **approx_kw)

    return check
