"""Shared input validation: every error names the argument and the fix."""

import numpy as np
import pytest
import scipy.sparse as sp

from fastgssl._validation import (
    check_n_neighbors,
    check_positive,
    check_semi_supervised_y,
    check_X,
)


def test_check_X_accepts_dense_and_csr():
    X = check_X([[1, 2], [3, 4]])
    assert X.dtype == np.float64 and X.flags.c_contiguous
    S = check_X(sp.coo_matrix(np.eye(3)))
    assert sp.isspmatrix_csr(S)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[1.0, np.nan]]), "X contains 1 NaN or infinite"),
        (np.array([[1.0, np.inf]]), "NaN or infinite"),
        (sp.csr_matrix(np.array([[np.nan, 1.0]])), "NaN or infinite"),
        (np.zeros((0, 3)), "0 sample"),
        (np.zeros((3, 0)), r"0 feature\(s\)"),
        (np.zeros(3), "must be 2-D.*Reshape your data"),
        ([["a", "b"]], "numeric"),
        (np.ones((2, 2), dtype=complex), "Complex data not supported"),
    ],
)
def test_check_X_errors(X, match):
    with pytest.raises(ValueError, match=match):
        check_X(X)


def test_check_X_type_errors_stay_type_errors():
    X = np.ones((2, 2), dtype=object)
    X[0, 0] = {"a": 1}
    with pytest.raises(TypeError, match="X must hold numbers only"):
        check_X(X)


def test_check_X_rejects_sparse_when_asked():
    with pytest.raises(ValueError, match="toarray"):
        check_X(sp.eye(3), accept_sparse=False)


def test_positive_and_neighbors():
    assert check_positive(2, "sigma") == 2.0
    with pytest.raises(ValueError, match="sigma must be > 0"):
        check_positive(0, "sigma")
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        check_positive(-1, "ridge", strict=False)
    with pytest.raises(ValueError, match="finite"):
        check_positive(np.nan, "sigma")
    assert check_n_neighbors(3, 10) == 3
    with pytest.raises(ValueError, match="n_neighbors=10 must be smaller"):
        check_n_neighbors(10, 10)
    with pytest.raises(ValueError, match=">= 1"):
        check_n_neighbors(0, 10)
    with pytest.raises(ValueError, match="integer"):
        check_n_neighbors(2.5, 10)


def test_semi_supervised_classification_targets():
    y, labeled, classes = check_semi_supervised_y([0, 1, -1, 1, -1], 5)
    assert labeled.tolist() == [True, True, False, True, False]
    assert classes.tolist() == [0, 1]
    ys, labeled, classes = check_semi_supervised_y(np.array(["a", "b", "-1"]), 3)
    assert classes.tolist() == ["a", "b"]


@pytest.mark.parametrize(
    "y, kwargs, match",
    [
        ([0, 1, -1], {"n_samples": 4}, "y has 3 entries but X has 4 rows"),
        ([-1, -1], {}, "no labeled point"),
        ([1, 1, -1], {}, "1 class"),
        ([0, 1, 1, -1], {"min_per_class": 2}, r"class\(es\) \[0\]"),
        ([0.0, np.nan], {}, "NaN"),
        ([[0, 1], [1, 0]], {}, "1-D"),
    ],
)
def test_semi_supervised_classification_errors(y, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_semi_supervised_y(y, **kwargs)


def test_semi_supervised_regression_targets():
    y, labeled, _ = check_semi_supervised_y([0.5, np.nan, 2.0], 3, task="regression")
    assert labeled.tolist() == [True, False, True]
    with pytest.raises(ValueError, match="all NaN"):
        check_semi_supervised_y([np.nan, np.nan], task="regression")
    with pytest.raises(ValueError, match="infinite"):
        check_semi_supervised_y([np.inf, 1.0], task="regression")


def test_shared_checks_check_every_value_once_and_share_targets():
    """The grid search's shared checks: the same errors as without them (each new value is
    validated), one read-only target encoding per array object."""
    import contextlib

    from sklearn.utils._param_validation import InvalidParameterError

    from fastgssl._shared_checks import shared_checks
    from fastgssl.models import LapRLS

    y = np.r_[np.ones(5), np.full(5, np.nan)]
    for shared in (False, True):
        with shared_checks() if shared else contextlib.nullcontext():
            first = LapRLS(gamma_a=1.0).cv_objective(y)
            second = LapRLS(gamma_a=2.0).cv_objective(y)
            assert (first.y is second.y) == shared
            assert first.y.flags.writeable != shared
            np.testing.assert_array_equal(first.y, second.y)
            for bad in ({"gamma_a": -1.0}, {"kernel": "foo"}, {"n_neighbors": 0},
                        {"tol": "x"}):
                name = next(iter(bad))
                with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
                    LapRLS(**bad).cv_objective(y)
            # a value seen valid for one parameter is still checked for another
            with pytest.raises(InvalidParameterError, match="'max_iter' parameter"):
                LapRLS(max_iter=0.5).cv_objective(y)


@pytest.mark.parametrize("marker", [None, float("nan"), -1, "-1"])
def test_string_labels_take_none_nan_or_minus_one_as_the_unlabeled_marker(marker):
    from fastgssl.models import PoissonLearning

    X = np.random.RandomState(0).normal(size=(30, 2))
    y = np.array(["cat", "dog"] * 15, dtype=object)
    y[4:] = marker  # was "y mixes values of types ['int', 'str']" (only "-1" worked)
    model = PoissonLearning(n_neighbors=3).fit(X, y)
    assert model.classes_.tolist() == ["cat", "dog"]
    assert set(model.transduction_.tolist()) <= {"cat", "dog"}


def test_marker_like_class_names_warn_and_other_mixes_name_the_markers():
    from fastgssl.models import PoissonLearning

    X = np.random.RandomState(0).normal(size=(30, 2))
    y = np.array(["cat", "dog"] * 15, dtype=object)
    y[4:] = "unlabeled"  # silently a third class before
    with pytest.warns(UserWarning, match=r"\['unlabeled'\] that look like an unlabeled"):
        PoissonLearning(n_neighbors=3).fit(X, y)
    y[4:] = 3
    with pytest.raises(ValueError, match="None, NaN or -1 among string labels"):
        PoissonLearning(n_neighbors=3).fit(X, y)



def test_import_optional_returns_the_submodule_or_names_the_install(monkeypatch):
    import builtins
    import json.decoder

    from fastgssl._optional import import_optional

    assert import_optional("json.decoder", "x", extra="test") is json.decoder
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.partition(".")[0] == "matplotlib":
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r"^fastgssl\.plotting needs the optional dependency "
                       r"matplotlib: pip install matplotlib \(from a fastgssl checkout: pip "
                       r"install -e '\.\[plot\]'\), or not\.$") as info:
        import_optional("matplotlib.pyplot", "fastgssl.plotting", extra="plot",
                        alternative=", or not")
    assert str(info.value.__cause__) == "no matplotlib"
    monkeypatch.undo()
    with pytest.raises(ImportError, match="pip install scikit-learn "):
        import_optional("sklearn_is_not_this", "y", extra="z", package="scikit-learn")


def test_check_X_finite_sums_that_overflow_pass_and_cancelling_infinities_fail():
    # the sum is tested first: an overflowing sum of finite entries falls back to them
    big = np.array([[1e308, 1e308], [1e308, 1.0]])
    np.testing.assert_array_equal(check_X(big), big)
    with pytest.raises(ValueError, match="2 NaN or infinite"):
        check_X(np.array([[np.inf, -np.inf], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="1 NaN or infinite"):
        check_X(sp.csr_matrix(np.array([[1e308, 0.0], [np.inf, 1e308]])))
