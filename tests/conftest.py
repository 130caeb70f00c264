"""Shared pytest configuration: hypothesis profiles, the shared-datasets fixture, the
search-against-per-candidate-CV check, and scikit-learn's array-API checks moved to a
subprocess (tests/test_sklearn_array_api.py)."""

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


# scikit-learn's check_array_api_input (yielded by parametrize_with_checks) needs
# SCIPY_ARRAY_API set before scipy is first imported, and skips without it. Setting it here
# would switch scipy to its array-API mode for the whole suite; instead these checks are
# deselected (counted in pytest's summary line) and tests/test_sklearn_array_api.py runs them
# in a subprocess with the variable set, where they must pass.
ARRAY_API_CHECK = "check_array_api_input"


def pytest_collection_modifyitems(config, items):
    if os.environ.get("SCIPY_ARRAY_API"):
        return
    drop = [item for item in items if ARRAY_API_CHECK in item.nodeid]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if ARRAY_API_CHECK not in item.nodeid]


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
