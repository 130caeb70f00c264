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
