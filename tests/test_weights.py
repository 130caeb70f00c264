"""Loss weights: ``sample_weight`` in ``fit`` and ``class_weight`` (issue 13).

The weighted problem minimizes the weighted mean of the labeled losses. Truths used here:
integer weights equal repeated points, weight 0 equals removing the point, scikit-learn's
KernelRidge with sample weights, ``compute_class_weight("balanced")``, and brute-force
refits for exact CV (the refits recompute "balanced" weights from their labels).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.kernel_ridge import KernelRidge
from sklearn.utils.class_weight import compute_class_weight

from fastgssl.cv import GridSearchCV, cv_result, make_folds
from fastgssl.losses import get_loss
from fastgssl.models import KRR, SVM, LapRLS, LapSVM
from fastgssl.solvers._kernel_fits import fit_dense, fit_nystrom

LOSSES = [("huber_hinge", {"h": 0.1}), ("squared_hinge", {}), ("logistic", {}), ("square", {})]


def _problem(n=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 4.0)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = rng.integers(0, 4, size=n).astype(float)
    w[0] = 1.0
    return X, K, y, w


@pytest.mark.parametrize("name,params", LOSSES)
@pytest.mark.parametrize("solver", ["newton", "auto"])
@pytest.mark.parametrize("gamma_a", [1e-4, 1e-2])
def test_integer_weights_equal_repeated_points(name, params, solver, gamma_a):
    _, K, y, w = _problem()
    loss = get_loss(name, **params)
    lab = np.ones(y.size, dtype=bool)
    alpha = fit_dense(K, y, lab, None, loss, gamma_a, 0.0, solver=solver, sample_weight=w,
                      tol=1e-13, max_iter=500)
    idx = np.repeat(np.arange(y.size), w.astype(int))
    Kd = K[np.ix_(idx, idx)]
    ad = fit_dense(Kd, y[idx], np.ones(idx.size, dtype=bool), None, loss, gamma_a, 0.0,
                   solver="newton", tol=1e-13, max_iter=500)
    np.testing.assert_allclose((K @ alpha)[idx], Kd @ ad, atol=1e-9)


@pytest.mark.parametrize("name,params", [("logistic", {}), ("square", {})])
def test_nystrom_weights_equal_repeated_points(name, params):
    X, K, y, w = _problem()
    lab = np.ones(y.size, dtype=bool)
    V = np.linalg.cholesky(K + 1e-10 * np.eye(y.size))[:, :20]
    loss = get_loss(name, **params)
    wv = fit_nystrom(V, y, lab, None, loss, 1e-3, 0.0, sample_weight=w, tol=1e-13)
    idx = np.repeat(np.arange(y.size), w.astype(int))
    wd = fit_nystrom(V[idx], y[idx], np.ones(idx.size, dtype=bool), None, loss, 1e-3, 0.0,
                     tol=1e-13)
    np.testing.assert_allclose(wv, wd, atol=1e-9)


def test_krr_weights_match_kernelridge():
    X, _, y, w = _problem()
    yr = X[:, 1] + 0.1 * y
    lam, sigma = 1e-2, 2.0
    ours = KRR(lam=lam, sigma=sigma, fit_intercept=False).fit(X, yr, sample_weight=w)
    ref = KernelRidge(alpha=lam * w.sum(), kernel="rbf", gamma=1 / (2 * sigma)).fit(
        X, yr, sample_weight=w)
    X_new = np.random.default_rng(3).normal(size=(7, 3))
    np.testing.assert_allclose(ours.predict(X_new), ref.predict(X_new), atol=1e-9)


def test_balanced_equals_its_sample_weights_and_scale_invariance():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(70, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=70) > 0.6).astype(int)
    cw = compute_class_weight("balanced", classes=np.array([0, 1]), y=y)
    a = SVM(class_weight="balanced", lam=1e-3).fit(X, y)
    b = SVM(lam=1e-3).fit(X, y, sample_weight=cw[y])
    c = SVM(lam=1e-3).fit(X, y, sample_weight=5.0 * cw[y])
    d = SVM(lam=1e-3, class_weight={0: cw[0], 1: cw[1]}).fit(X, y)
    for m in (b, c, d):
        np.testing.assert_allclose(a.decision_function(X), m.decision_function(X), atol=1e-9)
    # a different weighting gives a different model
    e = SVM(lam=1e-3).fit(X, y)
    assert np.abs(a.decision_function(X) - e.decision_function(X)).max() > 1e-3


def test_zero_weight_equals_removal():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    w = np.ones(60)
    w[:15] = 0.0
    a = SVM(lam=1e-3, fit_intercept=False).fit(X, y, sample_weight=w)
    b = SVM(lam=1e-3, fit_intercept=False).fit(X[15:], y[15:])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-9)


def _semi_data(n=90, seed=4):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n // 2, 2)) + [2, 0], rng.normal(size=(n - n // 2, 2))])
    y = np.r_[np.ones(n // 2, int), np.zeros(n - n // 2, int)]
    y_semi = y.copy()
    hidden = rng.random(n) < 0.5
    hidden[:3] = False
    hidden[-3:] = False
    y_semi[hidden] = -1
    w = rng.uniform(0.2, 3.0, size=n)
    return X, y_semi, w


@pytest.mark.parametrize("est", [
    LapSVM(sigma=1.0, gamma_a=1e-2, gamma_i=1e-1, n_neighbors=6, class_weight="balanced"),
    LapRLS(sigma=1.0, gamma_a=1e-2, gamma_i=1e-1, n_neighbors=6, class_weight="balanced"),
    LapSVM(sigma=1.0, gamma_a=1e-2, gamma_i=1e-1, n_neighbors=6),
])
def test_exact_transductive_cv_with_weights_equals_refits(est):
    from sklearn.base import clone

    X, y, w = _semi_data()
    folds = make_folds(y, 4, random_state=0)
    res = cv_result(est, X, y, folds, method="exact", protocol="transductive",
                    sample_weight=w)
    lab = np.flatnonzero(y != -1)
    ref = np.empty(lab.size)
    for i in range(4):
        y_i = y.copy()
        y_i[(folds == i) & (y != -1)] = -1
        m = clone(est).fit(X, y_i, sample_weight=w)
        V = (folds[lab] == i)
        ref[V] = m.decision_function(X[lab[V]])
    np.testing.assert_allclose(res.predictions, ref, atol=1e-8)


@pytest.mark.parametrize("protocol", ["transductive", "inductive"])
def test_exact_supervised_cv_with_weights_equals_refits(protocol):
    from sklearn.base import clone

    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=80) > 0.5).astype(int)
    w = rng.uniform(0.1, 2.0, size=80)
    est = SVM(lam=1e-3, sigma=1.0, class_weight="balanced")
    folds = make_folds(y, 5, random_state=1)
    res = cv_result(est, X, y, folds, method="exact", protocol=protocol, sample_weight=w)
    ref = np.empty(80)
    for i in range(5):
        tr, va = folds != i, folds == i
        ref[va] = clone(est).fit(X[tr], y[tr], sample_weight=w[tr]).decision_function(X[va])
    np.testing.assert_allclose(res.predictions, ref, atol=1e-8)


@pytest.mark.parametrize("class_weight,weighted", [("balanced", True), (None, True),
                                                    ("balanced", False), (None, False)])
def test_search_with_weights_equals_per_candidate_exact_cv(class_weight, weighted):
    """Also the unweighted search: a group whose first candidate has gamma_i = 0 once
    evaluated its graph candidates without the graph."""
    X, y, w = _semi_data()
    w = w if weighted else None
    folds = make_folds(y, 3, random_state=0)
    grid = {"sigma": [0.5, 2.0], "gamma_a": [1e-3, 1e-1], "gamma_i": [0.0, 1.0]}
    est = LapSVM(n_neighbors=6, class_weight=class_weight)
    search = GridSearchCV(est, grid, cv=folds).fit(X, y, sample_weight=w)
    assert search.method_ == "exact" and search.protocol_ == "transductive"
    from sklearn.base import clone

    for i, params in enumerate(search.cv_results_["params"]):
        ref = cv_result(clone(est).set_params(**params), X, y, folds, sample_weight=w)
        assert search.cv_results_["mean_cv_error"][i] == pytest.approx(ref.score, abs=1e-12)
    ref_fit = LapSVM(n_neighbors=6, class_weight=class_weight).set_params(
        **search.best_params_).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(search.best_estimator_.decision_function(X),
                               ref_fit.decision_function(X), atol=1e-10)


def test_approximations_refuse_weights():
    X, y, w = _semi_data()
    y_sup = np.where(y == -1, 0, y)
    with pytest.raises(ValueError, match="method='exact'"):
        cv_result(SVM(), X, y_sup, 3, method="fbif", sample_weight=w)
    with pytest.raises(ValueError, match="method='exact'"):
        cv_result(SVM(class_weight="balanced"), X, y_sup, 3, method="bif")
    with pytest.raises(ValueError, match="method='exact'"):
        GridSearchCV(SVM(), {"lam": [1e-3]}, cv=3, method="fbif").fit(
            X, y_sup, sample_weight=w)
    from fastgssl.cv import bif_matrix

    with pytest.raises(ValueError, match="method='exact'"):
        bif_matrix(SVM().fit(X, y_sup, sample_weight=w), make_folds(y_sup, 3, random_state=0))
    s = GridSearchCV(SVM(class_weight="balanced"), {"lam": [1e-3, 1e-1]}, cv=3).fit(
        X, y_sup)
    assert s.method_ == "exact"


@pytest.mark.parametrize("w,match", [
    (-np.ones(90), "non-negative"),
    (np.full(90, np.nan), "finite"),
    (np.ones(89), "expected"),
    (np.zeros(90), "positive weight"),
])
def test_bad_sample_weight(w, match):
    X, y, _ = _semi_data()
    with pytest.raises(ValueError, match=match):
        LapSVM(n_neighbors=6).fit(X, y, sample_weight=w)


def test_class_weight_needs_classification():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    with pytest.raises(ValueError, match="class_weight"):
        KRR(class_weight="balanced").fit(X, X[:, 0])
    with pytest.raises(ValueError, match="class_weight"):
        SVM(class_weight="heavy").fit(X, (X[:, 0] > 0).astype(int))


@pytest.mark.parametrize("class_weight", ["balanced", None])
def test_newton_step_cv_with_weights_is_exact_for_the_square_loss(class_weight):
    """The Newton step is exact for quadratic objectives: with weights (and "balanced"
    recomputed per fold) it must equal the exact refits."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(70, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=70) > 0.5).astype(int)
    w = rng.uniform(0.1, 2.0, size=70)
    est = KRR(lam=1e-2, sigma=1.0, task="classification", class_weight=class_weight)
    folds = make_folds(y, 5, random_state=2)
    a = cv_result(est, X, y, folds, method="newton", sample_weight=w)
    b = cv_result(est, X, y, folds, method="exact", protocol="inductive", sample_weight=w)
    np.testing.assert_allclose(a.predictions, b.predictions, atol=1e-8)


def test_sample_weight_needs_an_estimator_that_takes_it():
    from fastgssl.models import LabelPropagation

    X, y, w = _semi_data()
    with pytest.raises(ValueError, match="takes no sample_weight"):
        cv_result(LabelPropagation(), X, y, 3, sample_weight=w)
    with pytest.raises(ValueError, match="takes no sample_weight"):
        GridSearchCV(LabelPropagation(), {"n_neighbors": [5]}, cv=3).fit(
            X, y, sample_weight=w)


@pytest.mark.parametrize("gamma_i", [0.0, 1e-2])
def test_lapsvm_class_weight_with_intercept_on_sklearn_blobs(gamma_i):
    """scikit-learn's check_class_weight_classifiers with the intercept on (the check is an
    expected failure of the intercept-free defaults: see test_manifold_models.py)."""
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import train_test_split

    for centers in (2, 3):
        X, y = make_blobs(centers=centers, random_state=0, cluster_std=20)
        Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.5, random_state=0)
        cw = {0: 1000, **{c: 1e-4 for c in range(1, centers)}}
        est = LapSVM(gamma_i=gamma_i, n_neighbors=3, fit_intercept=True, class_weight=cw)
        assert np.mean(est.fit(Xtr, ytr).predict(Xte) == 0) > 0.87


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), log_lam=st.floats(-6, 0), h=st.sampled_from([0.01, 0.3]),
       zero_frac=st.sampled_from([0.0, 0.3]))
def test_weighted_active_set_equals_weighted_newton(seed, log_lam, h, zero_frac):
    """Real weights (some zero), labels on a grid so that margins tie: the active-set solver
    on D K D and weighted Newton reach the same f."""
    rng = np.random.default_rng(seed)
    n = 40
    X = np.round(rng.normal(size=(n, 2)), 1)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2.0)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    w = rng.uniform(0.1, 5.0, size=n)
    w[rng.random(n) < zero_frac] = 0.0
    w[0] = 1.0
    loss = get_loss("huber_hinge", h=h)
    lab = np.ones(n, dtype=bool)
    lam = 10.0**log_lam
    a = fit_dense(K, y, lab, None, loss, lam, 0.0, solver="active-set", sample_weight=w,
                  tol=1e-13, max_iter=1000)
    b = fit_dense(K, y, lab, None, loss, lam, 0.0, solver="newton", sample_weight=w,
                  tol=1e-13, max_iter=1000)
    scale = max(1.0, np.abs(K @ b).max())
    np.testing.assert_allclose(K @ a, K @ b, atol=1e-8 * scale)
    assert np.all(a[w == 0] == 0.0)


def test_search_with_weights_in_worker_processes():
    """n_jobs=2: the groups run in other processes, which recompute the objectives (with the
    weights) instead of reading the in-process cache."""
    X, y, w = _semi_data()
    folds = make_folds(y, 3, random_state=0)
    grid = {"sigma": [0.5, 2.0], "gamma_a": [1e-3, 1e-1], "gamma_i": [1.0]}
    est = LapSVM(n_neighbors=6, class_weight="balanced")
    one = GridSearchCV(est, grid, cv=folds).fit(X, y, sample_weight=w)
    two = GridSearchCV(est, grid, cv=folds, n_jobs=2).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(two.cv_results_["mean_cv_error"],
                               one.cv_results_["mean_cv_error"], atol=1e-12)


def test_weight_edge_cases():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    w = rng.uniform(0.5, 2.0, size=40)
    ref = SVM(lam=1e-3).fit(X, y, sample_weight=w).decision_function(X)
    for scale in (1e-310, 1e300):  # a common factor changes nothing, even an extreme one
        np.testing.assert_allclose(
            SVM(lam=1e-3).fit(X, y, sample_weight=w * scale).decision_function(X), ref,
            atol=1e-9)
    for cw in ({0: np.nan, 1: 1.0}, {0: -1.0, 1: 1.0}, {0: np.inf, 1: 1.0}):
        with pytest.raises(ValueError, match="class_weight"):
            SVM(class_weight=cw).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        SVM(class_weight={0: 0.0, 1: 0.0}).fit(X, y)
    # a callable kernel's array is never modified by the intercept
    G = X @ X.T
    G0 = G.copy()
    SVM(kernel=lambda A, B: G).fit(X, y)
    np.testing.assert_array_equal(G, G0)
    # scalar weights in ExactCV.run directly
    from fastgssl.cv import ExactCV

    a = ExactCV().run(SVM(), X, y, make_folds(y, 4, random_state=0), sample_weight=2.0)
    b = ExactCV().run(SVM(), X, y, make_folds(y, 4, random_state=0))
    np.testing.assert_allclose(a.predictions, b.predictions, atol=1e-10)
