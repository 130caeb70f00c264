"""A search with default arguments never returns an unverified first-order winner."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from fastgssl.cv import ApproxGridSearchCV, cv_score
from fastgssl.models import KRR


def test_diabetes_default_search_returns_the_exact_cv_winner():
    # t-FBIF in the margin form (Nystrom right-hand sides) alone picks an interpolating KRR
    # here (criterion ~8, exact CV ~10^4, test MSE ~8,600); the default (method="auto")
    # scores every candidate by exact CV
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    grid = {"sigma": [0.01, 0.1, 1.0], "lam": [1e-8, 1e-6, 1e-4, 1e-2]}
    search = ApproxGridSearchCV(KRR(), grid, cv=5, random_state=0).fit(X_tr, y_tr)
    assert search.method_ == "exact" and search.protocol_ == "transductive"
    exact = [cv_score(KRR(**p), X_tr, y_tr, search.folds_, method="exact")
             for p in search.cv_results_["params"]]
    assert np.allclose(search.cv_results_["mean_cv_error"], exact, rtol=1e-9)
    assert search.best_cv_error_ == pytest.approx(min(exact))
    assert np.mean((search.predict(X_te) - y_te) ** 2) < 4000.0
    fbif = ApproxGridSearchCV(KRR(), grid, cv=5, method="fbif-margin",
                              random_state=0).fit(X_tr, y_tr)
    assert fbif.best_cv_error_ < 100.0  # the optimistic first-order criterion, for contrast


def test_auto_picks_newton_for_smooth_losses_and_verifies():
    """Supervised, smooth loss (logistic): the one Newton step per fold, winner verified."""
    from sklearn.datasets import make_moons

    from fastgssl.cv import ApproxGridSearchCV
    from fastgssl.models import SVM

    X, y = make_moons(120, noise=0.3, random_state=0)
    s = ApproxGridSearchCV(SVM(loss="logistic"), {"lam": [1e-3, 1e-1]}, cv=4,
                           random_state=0).fit(X, y)
    assert s.method_ == "newton" and s.verify_ == "best"
    assert s.cv_results_["verified"][s.best_index_]
    h = ApproxGridSearchCV(SVM(), {"lam": [1e-3, 1e-1]}, cv=4, random_state=0).fit(X, y)
    assert h.method_ == "fbif"
