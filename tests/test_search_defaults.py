"""A search with default arguments never returns an unverified first-order winner."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from fastgssl.cv import GridSearchCV, cv_score
from fastgssl.models import KRR


def test_diabetes_default_search_returns_the_exact_cv_winner():
    # t-FBIF in the margin form (Nystrom right-hand sides) alone picks an interpolating KRR
    # here (criterion ~8, exact CV ~10^4, test MSE ~8,600); the default (method="auto")
    # scores every candidate by exact CV
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    grid = {"sigma": [0.01, 0.1, 1.0], "lam": [1e-8, 1e-6, 1e-4, 1e-2]}
    search = GridSearchCV(KRR(), grid, cv=5, random_state=0).fit(X_tr, y_tr)
    assert search.method_ == "exact" and search.protocol_ == "transductive"
    exact = [cv_score(KRR(**p), X_tr, y_tr, search.folds_, method="exact")
             for p in search.cv_results_["params"]]
    assert np.allclose(search.cv_results_["mean_cv_error"], exact, rtol=1e-9)
    assert search.best_cv_error_ == pytest.approx(min(exact))
    assert np.mean((search.predict(X_te) - y_te) ** 2) < 4000.0
    fbif = GridSearchCV(KRR(), grid, cv=5, method="fbif-margin",
                              random_state=0).fit(X_tr, y_tr)
    assert fbif.best_cv_error_ < 100.0  # the optimistic first-order criterion, for contrast


@pytest.mark.parametrize("loss", ["huber_hinge", "logistic", "squared_hinge"])
def test_auto_is_exact_cv_for_supervised_learners_of_any_loss(loss):
    """Supervised, non-square loss: exact t-fold CV (bench/bench_auto_method.py measured it
    faster than the one-fit approximation plus verification), no verification needed."""
    from sklearn.datasets import make_moons

    from fastgssl.models import SVM

    X, y = make_moons(120, noise=0.3, random_state=0)
    grid = {"sigma": [0.3, 1.0], "lam": [1e-3, 1e-1]}
    s = GridSearchCV(SVM(loss=loss), grid, cv=4, random_state=0).fit(X, y)
    assert s.method_ == "exact" and s.verify_ is None and s.n_verified_ == 0
    exact = GridSearchCV(SVM(loss=loss), grid, cv=s.folds_, method="exact").fit(X, y)
    assert np.array_equal(s.cv_results_["mean_cv_error"], exact.cv_results_["mean_cv_error"])
    assert s.best_params_ == exact.best_params_


@pytest.mark.parametrize("loss, method", [("huber_hinge", "fbif"), ("logistic", "newton")])
def test_auto_verifies_an_approximation_for_inductive_graph_learners(loss, method):
    """Graph learner, inductive protocol, non-square loss: exact CV would refit the whole
    graph learner t times per candidate; auto takes the one-fit approximation (one Newton
    step for the smooth loss, t-FBIF for the piecewise-quadratic one) and verifies it."""
    from sklearn.datasets import make_moons

    from fastgssl.models import LapSVM

    X, y = make_moons(90, noise=0.3, random_state=0)
    y_semi = np.where(np.arange(90) % 3 == 0, y, -1)
    s = GridSearchCV(LapSVM(loss=loss, sigma=0.5), {"gamma_a": [1e-3, 1e-1]}, cv=3,
                           protocol="inductive", random_state=0).fit(X, y_semi)
    assert s.method_ == method and s.verify_ == "best" and s.protocol_ == "inductive"
    assert s.cv_results_["verified"][s.best_index_]
    t = GridSearchCV(LapSVM(loss=loss, sigma=0.5), {"gamma_a": [1e-3, 1e-1]}, cv=3,
                           random_state=0).fit(X, y_semi)
    assert t.method_ == "exact" and t.protocol_ == "transductive" and t.verify_ is None
