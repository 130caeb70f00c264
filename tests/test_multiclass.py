"""One-vs-one multi-class coding (``multi_class="ovo"``).

Truths: the pair problems fitted by hand (the pair's points, ``lam l / l_ab``), scikit-learn's
one-vs-one vote decoding, ``formulation="full"``, brute-force refits (both protocols), and
per-candidate CV for the search.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.svm import SVC
from sklearn.utils.multiclass import _ovr_decision_function

from fastgssl.cv import GridSearchCV, cv_result, make_folds
from fastgssl.models import KRR, SVM, LapRLS, LapSVM
from fastgssl.models._multiclass import ovo_decision, ovo_pairs


def _digits(n=300, k=4):
    X, y = load_digits(return_X_y=True)
    return X[:n] / 16.0, y[:n] % k


def _semi(n=300, k=4, n_lab=120):
    X, y = _digits(n, k)
    y_semi = y.copy()
    y_semi[n_lab:] = -1
    return X, y, y_semi


def test_vote_decoding_equals_scikit_learn():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(200, 10))
    F[:20] = 0.0  # ties in a pair go to its first class, as in libsvm
    F[20:40] = np.round(F[20:40])  # ties between vote counts
    expected = _ovr_decision_function(F < 0, -F, 5)
    assert np.allclose(ovo_decision(F, 5), expected, rtol=1e-14, atol=1e-14)
    assert ovo_pairs(4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


@pytest.mark.parametrize("weighted", [False, True])
def test_pairs_equal_pair_fits_by_hand(weighted):
    """Column (a, b) is the SVM on the points of a and b with lam l / l_ab (weights:
    lam sum_L w / sum_ab w), and decision_function votes over them."""
    X, y = _digits(240, 4)
    w = np.random.default_rng(1).integers(1, 4, size=y.size).astype(float) if weighted \
        else None
    lam = 1e-3
    est = SVM(lam=lam, sigma=8.0, h=0.05, multi_class="ovo").fit(X, y, sample_weight=w)
    assert est.multi_class_ == "ovo" and est.dual_coef_.shape == (y.size, 6)
    X_new = _digits(400, 4)[0][300:]
    cols = []
    ww = np.ones(y.size) if w is None else w
    for a, b in ovo_pairs(4):
        pair = (y == a) | (y == b)
        scale = ww.sum() / ww[pair].sum()
        m = SVM(lam=lam * scale, sigma=8.0, h=0.05).fit(
            X[pair], np.where(y[pair] == a, 1, 0), sample_weight=None if w is None else w[pair])
        cols.append(m.decision_function(X_new))
    F = np.column_stack(cols)
    assert np.allclose(est._column_values(X_new), F, rtol=1e-8, atol=1e-9)
    assert np.allclose(est.decision_function(X_new), ovo_decision(F, 4), atol=1e-9)


def test_weights_equal_repeated_points():
    X, y = _digits(200, 3)
    reps = np.random.default_rng(2).integers(1, 3, size=y.size)
    a = SVM(lam=1e-3, sigma=8.0, multi_class="ovo").fit(X, y, sample_weight=reps)
    b = SVM(lam=1e-3, sigma=8.0, multi_class="ovo").fit(np.repeat(X, reps, axis=0),
                                                       np.repeat(y, reps))
    X_new = _digits(300, 3)[0][200:]
    assert np.allclose(a.decision_function(X_new), b.decision_function(X_new), atol=1e-8)


def test_close_to_svc_at_its_settings():
    """SVM(lam, h small, ovo) and SVC(C = 1 / (2 n lam)) decide alike (Huber width h against
    the hinge, a penalized against an unpenalized intercept: not identical models)."""
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    lam, sigma, n = 1e-4, 10.0, 1000
    ours = SVM(lam=lam, sigma=sigma, h=0.01, multi_class="ovo").fit(X[:n], y[:n])
    svc = SVC(C=1 / (2 * n * lam), gamma=1 / (2 * sigma), break_ties=True).fit(X[:n], y[:n])
    assert np.mean(ours.predict(X[n:]) == svc.predict(X[n:])) > 0.99


@pytest.mark.parametrize("Est", [LapSVM, LapRLS])
def test_deformed_equals_full_formulation(Est):
    X, _, y_semi = _semi()
    a = Est(sigma=8.0, gamma_a=1e-3, gamma_i=1.0, multi_class="ovo").fit(X, y_semi)
    b = Est(sigma=8.0, gamma_a=1e-3, gamma_i=1.0, multi_class="ovo",
            formulation="full").fit(X, y_semi)
    assert np.allclose(a.decision_function(X), b.decision_function(X), atol=1e-8)
    assert np.array_equal(a.predict(X), b.predict(X))


def test_two_classes_ignore_the_option():
    X, y = _digits(200, 2)
    a = SVM(lam=1e-3, sigma=8.0, multi_class="ovo").fit(X, y)
    b = SVM(lam=1e-3, sigma=8.0).fit(X, y)
    assert a.multi_class_ == "ovr"
    assert np.array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("protocol", ["transductive", "inductive"])
@pytest.mark.parametrize("est", [SVM(lam=1e-3, sigma=8.0, multi_class="ovo"),
                                 KRR(lam=1e-3, sigma=8.0, multi_class="ovo",
                                     task="classification")])
def test_exact_supervised_cv_equals_refits(est, protocol):
    X, y = _digits(240, 4)
    folds = make_folds(y, 4, random_state=0)
    res = cv_result(est, X, y, folds, method="exact", protocol=protocol)
    pred = np.empty_like(res.predictions)
    for i in range(4):
        m = clone(est).fit(X[folds != i], y[folds != i])
        pred[folds == i] = m.decision_function(X[folds == i])
    assert np.allclose(res.predictions, pred, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("est", [LapSVM(sigma=8.0, gamma_a=1e-3, gamma_i=1.0, multi_class="ovo"),
                                 LapRLS(sigma=8.0, gamma_a=1e-3, gamma_i=1.0, multi_class="ovo",
                                        class_weight="balanced")])
def test_exact_transductive_cv_equals_hidden_label_refits(est):
    X, _, y_semi = _semi()
    folds = make_folds(y_semi, 4, random_state=0)
    res = cv_result(est, X, y_semi, folds, method="exact", protocol="transductive")
    lab = np.flatnonzero(y_semi != -1)
    pred = np.empty_like(res.predictions)
    for i in range(4):
        hide = (folds == i) & (y_semi != -1)
        y_i = y_semi.copy()
        y_i[hide] = -1
        pred[np.searchsorted(lab, np.flatnonzero(hide))] = \
            clone(est).fit(X, y_i).decision_function(X[hide])
    assert np.allclose(res.predictions, pred, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("warm_min", [0, 10**9])
def test_search_over_multi_class_equals_cv_result_per_candidate(monkeypatch, warm_min,
                                                                 search_matches_cv):
    """Warm-started along the group (each candidate's fit on all of L from the previous
    one's, one start per coding) or cold: the same CV as per-candidate exact CV."""
    import fastgssl.cv._grid_groups as search_mod

    monkeypatch.setattr(search_mod, "_WARM_MIN_LABELED", warm_min)
    X, _, y_semi = _semi()
    grid = {"sigma": [4.0, 8.0], "gamma_a": [1e-4, 1e-2], "gamma_i": [0.1, 1.0],
            "multi_class": ["ovr", "ovo"]}
    est = LapSVM()
    search = GridSearchCV(est, grid, cv=4, random_state=0).fit(X, y_semi)
    assert search.method_ == "exact" and search.protocol_ == "transductive"
    search_matches_cv(search, est, X, y_semi, {"abs": 1e-12}, protocol="transductive")
    assert search.best_estimator_.multi_class_ == search.best_params_["multi_class"]


def test_supervised_search_auto_is_exact_for_one_vs_one(search_matches_cv):
    X, y = _digits(200, 3)
    grid = {"sigma": [4.0, 8.0], "lam": [1e-4, 1e-2]}
    search = GridSearchCV(SVM(multi_class="ovo"), grid, cv=4, random_state=0,
                                refit=False).fit(X, y)
    assert search.method_ == "exact"
    search_matches_cv(search, SVM(multi_class="ovo"), X, y, {"abs": 1e-12})


@pytest.mark.parametrize("method", ["bif", "fbif", "newton", "exact-quadratic"])
def test_derivative_methods_refuse_one_vs_one(method):
    X, y = _digits(150, 3)
    folds = make_folds(y, 3, random_state=0)
    est = (KRR(multi_class="ovo", task="classification") if method == "exact-quadratic"
           else SVM(multi_class="ovo"))
    with pytest.raises(ValueError, match="one-vs-one"):
        cv_result(est, X, y, folds, method=method)
    with pytest.raises(ValueError, match="one-vs-one"):
        GridSearchCV(est, {"sigma": [1.0, 2.0]}, cv=folds, method=method).fit(X, y)


def test_bad_multi_class_is_refused():
    X, y = _digits(100, 3)
    with pytest.raises(ValueError, match="multi_class"):
        SVM(multi_class="crammer_singer").fit(X, y)


def test_probability_and_nystrom_backend():
    X, y = _digits(240, 4)
    est = SVM(lam=1e-3, sigma=8.0, multi_class="ovo", probability=True, random_state=0)
    P = est.fit(X, y).predict_proba(X[:10])
    assert P.shape == (10, 4) and np.allclose(P.sum(axis=1), 1.0)
    nys = SVM(lam=1e-3, sigma=8.0, multi_class="ovo", backend="nystrom", n_components=240,
              random_state=0).fit(X, y)
    assert nys.coef_.shape[1] == 6
    assert np.mean(nys.predict(X) == est.predict(X)) > 0.97
