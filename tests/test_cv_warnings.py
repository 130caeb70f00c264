"""Warnings raised inside cross-validation reach the user: the warm-start fit of exact
inductive CV, and the per-candidate fit reports a grid search keeps with each candidate."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from fastgssl.cv import GridSearchCV, cv_result
from fastgssl.exceptions import UnlabeledComponentWarning
from fastgssl.models import SVM, PoissonLearning


class _LoudSVM(SVM):
    """An SVM whose fits report trouble (as a non-converged solver would)."""

    def fit(self, X, y, **kw):
        warnings.warn(f"trouble with {len(y)} points", RuntimeWarning, stacklevel=2)
        return super().fit(X, y, **kw)


def test_the_warm_start_fit_reports_its_warnings():
    X, y = make_classification(60, 4, random_state=0)
    with pytest.warns(RuntimeWarning, match=r"trouble with 60 points \(in the fit on all "
                                             r"labels that warm-starts the refits\)"):
        cv_result(_LoudSVM(), X, y, 3, method="exact", protocol="inductive",
                  random_state=0)


def _two_components():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(40, 2)), rng.normal(size=(20, 2)) + 50]
    y = np.full(60, -1)
    y[:8] = np.arange(8) % 2  # the far component has no label
    return X, y


def test_search_without_refit_reports_the_selected_candidates_fit():
    X, y = _two_components()
    grid = {"n_neighbors": [4, 6]}
    with pytest.warns(UnlabeledComponentWarning) as record:
        search = GridSearchCV(PoissonLearning(unlabeled_policy="abstain"), grid, cv=2,
                              refit=False, random_state=0).fit(X, y)
    selected = [w for w in record if "selected candidate" in str(w.message)]
    assert len(selected) == 1 and str(search.best_params_) in str(selected[0].message)
    with pytest.warns(UnlabeledComponentWarning) as record:  # the refit reports its own
        GridSearchCV(PoissonLearning(unlabeled_policy="abstain"), grid, cv=2,
                     random_state=0).fit(X, y)
    assert not any("selected candidate" in str(w.message) for w in record)


def test_search_reports_points_its_winner_leaves_undecided():
    # digits at 2 labels per class: k = 5 wins the CV but its graph leaves a component
    # without a label (27 points at -1 after the refit), which no held-out label can show
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(1)
    y_ssl = np.full(len(y), -1)
    for c in range(10):
        y_ssl[rng.choice(np.flatnonzero(y == c), 2, replace=False)] = c
    with pytest.warns(UserWarning, match=r"leaves 27 point\(s\) undecided"):
        search = GridSearchCV(PoissonLearning(unlabeled_policy="abstain"),
                              {"n_neighbors": [5, 10]}, cv=5, refit=False).fit(X, y_ssl)
    assert search.cv_results_["n_undecided"].tolist() == [27, 0]
    # the default policy ("auto": the nearest labeled component's answer) decides them all
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabeledComponentWarning)
        default = GridSearchCV(PoissonLearning(), {"n_neighbors": [5, 10]}, cv=5).fit(X, y_ssl)
    assert default.cv_results_["n_undecided"].tolist() == [0, 0]
    assert (default.best_estimator_.transduction_ >= 0).all()


# ---- cv_score warns where the criterion fell to the training error (issue 43) ---------------
def _quickstart_moons():
    from sklearn.datasets import make_moons

    X, y = make_moons(500, noise=0.1, random_state=0)
    labeled = np.r_[np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:10]]
    y_ssl = np.full(500, -1)
    y_ssl[labeled] = y[labeled]
    return X, y_ssl, labeled


def test_cv_score_warns_when_a_first_order_criterion_equals_the_training_error():
    from fastgssl.cv import cv_score
    from fastgssl.exceptions import OptimisticCriterionWarning
    from fastgssl.models import LapSVM

    X, y_ssl, labeled = _quickstart_moons()
    model = LapSVM(sigma=0.5, gamma_a=1e-5, gamma_i=1.0, n_neighbors=10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cv_result(model, X, y_ssl, 5, method="fbif", random_state=0)
    # the training error it compares with: the model fitted on all labels, on its labels
    fitted = model.fit(X, y_ssl)
    train = float(np.mean(fitted.predict(X[labeled]) != y_ssl[labeled]))
    assert res.info["train_error"] == train
    optimistic = [w for w in caught if w.category is OptimisticCriterionWarning]
    assert res.score <= train  # the quickstart's old example: fbif said 0.0
    assert len(optimistic) == 1 and "method='auto'" in str(optimistic[0].message)
    assert f"({res.score:.4g})" in str(optimistic[0].message)
    with warnings.catch_warnings():  # exact CV never warns so, even where it is 0
        warnings.simplefilter("error", OptimisticCriterionWarning)
        exact = cv_score(model, X, y_ssl, 5, random_state=0)
        refits = cv_score(model, X, y_ssl, 5, method="exact", random_state=0)
    assert exact == pytest.approx(refits, abs=1e-12)


def test_no_optimism_warning_above_the_training_error_or_for_a_regularized_fit():
    from fastgssl.exceptions import OptimisticCriterionWarning

    X, y = make_classification(120, 5, flip_y=0.2, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cv_result(SVM(lam=1e-1, sigma=50.0), X, y, 5, method="fbif", random_state=0)
    assert res.score > res.info["train_error"]
    assert not [w for w in caught if w.category is OptimisticCriterionWarning]
    # a heavily regularized classifier: its 0-1 criterion equals its nonzero training error,
    # and exact CV agrees; no warning (the corner warned about is a training error of 0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=60) > 0, 1, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cv_result(SVM(lam=1.0), X, y, 3, method="bif", random_state=0)
        exact = cv_result(SVM(lam=1.0), X, y, 3, method="exact", random_state=0)
    assert res.score == res.info["train_error"] == exact.score > 0
    assert not [w for w in caught if w.category is OptimisticCriterionWarning]
