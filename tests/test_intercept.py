"""fit_intercept: the intercept is the weight of a constant feature, i.e. the kernel plus
``intercept_scaling**2``; every path (dense, nystrom, deformed reduction, CV, search) sees
that one kernel."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from fastgssl.cv import GridSearchCV
from fastgssl.kernels import rbf_kernel
from fastgssl.models import KRR, SVM, LapRLS, LapSVM


def _data(n=120, seed=0):
    X, _ = make_classification(n, 4, random_state=seed)
    y = np.where(X[:, 0] > 0.8, 1, 0)  # unbalanced: an offset matters
    return X, y


@pytest.mark.parametrize("model", [KRR(lam=1e-3, sigma=2.0, task="classification"),
                                   SVM(lam=1e-3, sigma=2.0),
                                   LapRLS(sigma=2.0, task="classification"),
                                   LapSVM(sigma=2.0)])
def test_intercept_is_a_constant_added_to_the_kernel(model):
    X, y = _data()
    if isinstance(model, (LapRLS, LapSVM)):
        y = np.where(np.arange(len(y)) < 50, y, -1)
    s = 1.7
    ours = clone(model).set_params(fit_intercept=True, intercept_scaling=s).fit(X, y)
    K = rbf_kernel(X, sigma=2.0) + s**2
    params = {"kernel": "precomputed", "fit_intercept": False}
    if isinstance(model, (LapRLS, LapSVM)):
        W = ours.graph_
        params["graph"] = W
    ref = clone(model).set_params(**params).fit(K, y)
    Xn = X[:7] + 0.1
    Kn = rbf_kernel(Xn, X, sigma=2.0) + s**2
    assert np.allclose(ours.decision_function(Xn), ref.decision_function(Kn), atol=1e-9)
    pre = clone(model).set_params(**{**params, "fit_intercept": True},
                                  intercept_scaling=s).fit(K - s**2, y)
    assert np.allclose(pre.decision_function(Kn - s**2), ref.decision_function(Kn), atol=1e-9)


def test_intercept_nystrom_with_every_landmark_equals_dense():
    X, y = _data(80)
    dense = SVM(lam=1e-3, sigma=2.0, fit_intercept=True).fit(X, y)
    nys = SVM(lam=1e-3, sigma=2.0, fit_intercept=True, backend="nystrom",
              n_components=80, random_state=0).fit(X, y)
    assert np.allclose(dense.decision_function(X[:9]), nys.decision_function(X[:9]),
                       atol=1e-6)


def test_search_with_intercept_in_the_grid_equals_per_candidate_cv(search_matches_cv):
    X, y = _data()
    y_semi = np.where(np.arange(len(y)) < 50, y, -1)
    grid = {"fit_intercept": [False, True], "gamma_i": [0.1, 1.0]}
    est = LapRLS(sigma=2.0, task="regression")
    yr = np.where(y_semi == -1, np.nan, y_semi.astype(float))
    search = GridSearchCV(est, grid, cv=5, random_state=0).fit(X, yr)
    search_matches_cv(search, est, X, yr, {"rel": 1e-9})
    sup = GridSearchCV(KRR(sigma=2.0), {"fit_intercept": [False, True],
                                              "lam": [1e-3, 1e-1]}, cv=5,
                             random_state=0).fit(X, y.astype(float))
    search_matches_cv(sup, KRR(sigma=2.0), X, y.astype(float), {"rel": 1e-9})


def test_bad_intercept_scaling():
    X, y = _data(30)
    with pytest.raises(ValueError, match="intercept_scaling"):
        SVM(fit_intercept=True, intercept_scaling=0.0).fit(X, y)
