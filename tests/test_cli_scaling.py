"""The command line's feature-scaling rule, ``fastgssl.cli._data._scaling_choice`` (issue 38):
codes and the range-ratio threshold (the shared-scale cases are in ``test_cli.py``)."""

import numpy as np
import pytest
import scipy.sparse as sp

from fastgssl.cli._data import _n_codes, _scaling_choice


def _codes_and_measurements(rng, n, n_codes, n_measured):
    """``n_codes`` columns of 2-5 levels (some rare) beside ``n_measured`` measured columns of
    ranges 10 to 10^3 (german.numer's shape: 21 codes, duration, amount, age)."""
    levels = rng.integers(2, 6, size=n_codes)
    codes = np.column_stack([(rng.random(n) < 0.03).astype(float) if i % 4 == 0 else
                             rng.integers(1, m + 1, size=n).astype(float)
                             for i, m in enumerate(levels)])
    measured = rng.gamma(2.0, size=(n, n_measured)) * np.logspace(1, 3, n_measured)
    return np.hstack([measured, codes])


@pytest.mark.parametrize("sparse", [False, True])
def test_features_mostly_codes_are_left_as_loaded(sparse):
    rng = np.random.default_rng(0)
    X = _codes_and_measurements(rng, 700, 21, 3)
    choice, why = _scaling_choice(sp.csr_matrix(X) if sparse else X)
    assert choice is False
    assert "21 of 24 varying columns are codes" in why and "--standardize" in why


def test_features_with_a_third_measured_are_standardized():
    # heart's shape: 8 codes of 13 columns; australian's: 6 of 14
    rng = np.random.default_rng(1)
    for n_codes, n_measured in ((8, 5), (6, 8)):
        X = _codes_and_measurements(rng, 300, n_codes, n_measured)
        choice, why = _scaling_choice(X)
        assert choice is True and "mixed units" in why, (n_codes, why)


def test_code_count_matches_a_brute_force_count():
    rng = np.random.default_rng(2)
    X = _codes_and_measurements(rng, 1500, 9, 4)
    X[:1000, 5] = 1.0  # levels past the first 1,000 rows still count
    X[1000:, 5] = rng.integers(0, 10, size=500)
    X[:, 6] = 3.0  # constant: not varying, not counted
    varying = X.max(axis=0) > X.min(axis=0)
    truth = sum(np.unique(X[:, j]).size <= 5 for j in np.flatnonzero(varying))
    assert _n_codes(X, varying) == truth == _n_codes(sp.csc_matrix(X), varying)


def test_range_ratio_between_two_and_three_is_standardized():
    # svmguide3's training splits span ratios 2.6-3.6: every split is standardized now
    rng = np.random.default_rng(3)
    X = rng.random((400, 10)) * np.linspace(1.0, 2.8, 10)
    choice, why = _scaling_choice(X + np.linspace(0.0, 5.0, 10))  # no shared min-max
    assert choice is True and "mixed units" in why
    choice, why = _scaling_choice(rng.random((400, 10)) * np.linspace(1.0, 1.5, 10)
                                  + np.linspace(0.0, 5.0, 10))
    assert choice is False and "share one range" in why
