"""Deformed kernel (Sindhwani, Niyogi & Belkin 2005) and exact transductive CV.

Truths: the closed form ``K~_SS = (I + r K Q)^{-1} K`` formed densely; the n-space problem
(``formulation="full"``); brute-force refits with the fold's labels hidden.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import make_moons

from fastgssl.cv import GridSearchCV, cv_result, cv_score, make_folds
from fastgssl.graphs import knn_graph
from fastgssl.kernels import DeformedKernel, rbf_kernel
from fastgssl.models import (
    KRR,
    SVM,
    LabelPropagation,
    LabelPropagationRegressor,
    LapRLS,
    LapSVM,
    LocalGlobalConsistency,
)
from fastgssl.regularizers import laplacian


def _semi(n=120, n_lab=24, seed=0, noise=0.2):
    X, y = make_moons(n, noise=noise, random_state=seed)
    rng = np.random.default_rng(seed)
    y_semi = np.full(n, -1)
    lab = np.r_[rng.choice(np.flatnonzero(y == 0), n_lab // 2, replace=False),
                rng.choice(np.flatnonzero(y == 1), n_lab // 2, replace=False)]
    y_semi[lab] = y[lab]
    return X, y, y_semi


def _dense_deformed(K, Q, r):
    n = K.shape[0]
    Qd = Q.toarray() if sp.issparse(Q) else np.asarray(Q)
    return np.linalg.solve(np.eye(n) + r * K @ Qd, K)


def _hidden_refits(est, X, y_semi, folds):
    """Brute force: one fit per fold with the fold's labels set to -1."""
    labeled = y_semi != -1
    lab_idx = np.flatnonzero(labeled)
    pred = None
    for i in np.unique(folds):
        y_i = y_semi.copy()
        hide = (folds == i) & labeled
        y_i[hide] = -1
        dec = clone(est).fit(X, y_i).decision_function(X[hide])
        if pred is None:
            pred = np.empty((lab_idx.size,) + dec.shape[1:])
        pred[np.searchsorted(lab_idx, np.flatnonzero(hide))] = dec
    return pred


# ---------------------------------------------------------------------------- the kernel


@pytest.mark.parametrize("route", ["dense", "spectral"])
@pytest.mark.parametrize("regularizer", ["L", "L_norm", "L2"])
def test_deformed_kernel_matches_closed_form(route, regularizer):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(70, 3))
    W = knn_graph(X, 6)
    if regularizer == "L2":
        Lm = laplacian(W)
        Q = sp.csr_matrix(Lm @ Lm)
    else:
        Q = laplacian(W, kind=regularizer)
    L = np.arange(0, 70, 5)
    K = rbf_kernel(X, sigma=1.5)
    for r in (0.0, 1e-3, 0.3, 20.0):
        ref = _dense_deformed(K, Q, r)
        dk = DeformedKernel(sigma=1.5, route=route).fit(X, Q, L)
        K_SL, K_LL = dk.gram(r)
        scale = np.abs(ref).max()
        assert np.abs(K_SL - ref[:, L]).max() < 1e-10 * scale
        assert np.allclose(K_LL, K_LL.T, atol=0)
        # out-of-sample rows evaluated at training points equal the in-sample block
        assert np.abs(dk.transform(X, r) - K_SL).max() < 1e-10 * scale
        assert np.abs(dk.labeled_gram(r) - K_LL).max() < 1e-12 * scale


def test_spectral_equals_dense_over_many_ratios():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(90, 2))
    Q = laplacian(knn_graph(X, 7))
    L = rng.choice(90, 20, replace=False)
    dense = DeformedKernel(sigma=0.8, route="dense").fit(X, Q, L)
    spec = DeformedKernel(sigma=0.8, route="spectral").fit(X, Q, L)
    for r in np.logspace(-4, 2, 7):
        a, b = dense.sample_block(r), spec.sample_block(r)
        assert np.abs(a - b).max() < 1e-10 * np.abs(a).max()


@pytest.mark.parametrize("kernel, params", [("linear", None), ("poly", {"degree": 2}),
                                            (lambda A, B: (A @ B.T + 1.0) ** 2, None)])
def test_other_base_kernels(kernel, params):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    Q = laplacian(knn_graph(X, 5))
    L = np.arange(10)
    dk = DeformedKernel(kernel, kernel_params=params).fit(X, Q, L)
    from fastgssl.kernels import pairwise_kernel

    K = pairwise_kernel(X, kernel=kernel, kernel_params=params)
    ref = _dense_deformed(K, Q, 0.05)
    assert np.abs(dk.sample_block(0.05) - ref[:, L]).max() < 1e-9 * np.abs(ref).max()
    assert np.abs(dk.transform(X[:7], 0.05) - ref[:7][:, L]).max() < 1e-9 * np.abs(ref).max()


def test_nystrom_route_equals_dense_route_with_all_landmarks():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 2))
    Q = laplacian(knn_graph(X, 6))
    L = np.arange(0, 60, 4)
    dense = DeformedKernel(sigma=2.0).fit(X, Q, L)
    nys = DeformedKernel(sigma=2.0, route="nystrom", n_components=60, random_state=0).fit(
        X, Q, L)
    a, b = dense.sample_block(0.2), nys.sample_block(0.2)
    assert np.abs(a - b).max() < 1e-6 * np.abs(a).max()
    assert np.abs(nys.labeled_gram(0.2) - b[L]).max() < 1e-12 * np.abs(b).max()


def test_r_zero_is_the_base_kernel():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    dk = DeformedKernel(sigma=1.0).fit(X, None, np.arange(5))
    K = rbf_kernel(X, sigma=1.0)
    assert np.array_equal(dk.sample_block(0.7), K[:, :5])


# ----------------------------------------------------------------- learners: reduction == full


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), loss=st.sampled_from(["huber_hinge", "logistic",
                                                          "squared_hinge", "square"]),
       log_r=st.floats(-2.0, 2.0), backend=st.sampled_from(["dense", "nystrom"]))
def test_reduction_equals_full_formulation(seed, loss, log_r, backend):
    X, _, y_semi = _semi(n=80, n_lab=16, seed=seed % 50)
    gamma_a = 1e-2
    gamma_i = 10**log_r * gamma_a * 80**2 / 100.0
    Est = LapRLS if loss == "square" else LapSVM
    kw = dict(sigma=0.7, gamma_a=gamma_a, gamma_i=gamma_i, loss=loss, backend=backend,
              n_components=40, random_state=0, n_neighbors=6)
    if Est is LapRLS:
        kw["task"] = "classification"
    full = Est(formulation="full", **kw).fit(X, y_semi)
    red = Est(formulation="deformed", **kw).fit(X, y_semi)
    scale = max(np.abs(full.decision_train_).max(), 1e-12)
    assert np.abs(full.decision_train_ - red.decision_train_).max() < 1e-8 * scale
    assert np.abs(full.decision_function(X[:10]) - red.decision_function(X[:10])).max() \
        < 1e-8 * scale
    coef = "dual_coef_" if backend == "dense" else "coef_"
    a, b = getattr(full, coef), getattr(red, coef)
    assert np.abs(a - b).max() < 1e-7 * np.abs(a).max()


def test_reduction_multiclass_and_regression():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(90, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    y_semi = np.where(rng.random(90) < 0.3, y, -1)
    for Est in (LapSVM, LapRLS):
        full = Est(sigma=1.0, gamma_i=0.5, formulation="full").fit(X, y_semi)
        red = Est(sigma=1.0, gamma_i=0.5).fit(X, y_semi)
        assert red.deformed_coef_.shape == (np.count_nonzero(y_semi != -1), 3)
        assert np.allclose(full.decision_train_, red.decision_train_, rtol=1e-8, atol=1e-10)
    yr = np.where(rng.random(90) < 0.3, X[:, 1], np.nan)
    full = LapRLS(gamma_i=0.5, formulation="full").fit(X, yr)
    red = LapRLS(gamma_i=0.5).fit(X, yr)
    assert np.allclose(full.predict(X), red.predict(X), rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------- exact transductive CV == refits


@pytest.mark.parametrize("est", [
    LapRLS(sigma=0.5, gamma_a=1e-3, gamma_i=1.0, task="classification"),
    LapSVM(sigma=0.5, gamma_a=1e-3, gamma_i=1.0),
    LapSVM(sigma=0.5, gamma_a=1e-3, gamma_i=1.0, loss="logistic"),
    LapSVM(sigma=0.5, gamma_a=1e-3, gamma_i=1.0, formulation="full"),
    LapSVM(sigma=0.5, gamma_a=1e-3, gamma_i=1.0, regularizer="L_norm", power=2),
    LapSVM(sigma=0.5, gamma_a=1e-3, gamma_i=1.0, backend="nystrom", n_components=50,
           random_state=0),
    SVM(sigma=0.5, lam=1e-3),
    KRR(sigma=0.5, lam=1e-3, task="classification"),
], ids=lambda e: repr(e)[:60])
def test_transductive_exact_cv_equals_hidden_label_refits(est):
    X, y, y_semi = _semi()
    supervised = isinstance(est, (SVM, KRR))
    y_cv = y if supervised else y_semi
    folds = make_folds(y_cv, 4, random_state=0)
    res = cv_result(est, X, y_cv, folds, method="exact", protocol="transductive")
    assert res.protocol == "transductive" and res.form == "mean"
    if supervised:  # hiding a label of a supervised learner removes the point
        ref = cv_result(est, X, y_cv, folds, method="exact", protocol="inductive").predictions
    else:
        ref = _hidden_refits(est, X, y_cv, folds)
    assert np.abs(res.predictions - ref).max() < 1e-10 * max(np.abs(ref).max(), 1.0)


def test_transductive_cv_of_laprls_square_loss_unequal_folds():
    X, _, y_semi = _semi(n=100, n_lab=23)
    folds = make_folds(y_semi, 5, random_state=1)  # fold sizes 4 and 5
    est = LapRLS(sigma=0.5, gamma_a=1e-2, gamma_i=0.3, task="classification")
    res = cv_result(est, X, y_semi, folds, method="exact", protocol="transductive")
    ref = _hidden_refits(est, X, y_semi, folds)
    assert np.abs(res.predictions - ref).max() < 1e-10


def test_default_protocol_is_transductive_and_auto_says_so():
    X, _, y_semi = _semi()
    folds = make_folds(y_semi, 4, random_state=0)
    res = cv_result(LapSVM(sigma=0.5), X, y_semi, folds)
    assert res.protocol == "transductive" and res.info["auto"] == "exact"
    assert cv_result(LapSVM(sigma=0.5), X, y_semi, folds, method="fbif").protocol == "inductive"


def test_unsupported_protocol_named_explicitly_is_an_error():
    X, _, y_semi = _semi()
    with pytest.raises(ValueError, match="inductive protocol, not 'transductive'"):
        cv_result(LapSVM(), X, y_semi, 4, method="fbif", protocol="transductive")
    with pytest.raises(ValueError, match="protocol must be one of"):
        cv_result(LapSVM(), X, y_semi, 4, protocol="leave-one-out")


@pytest.mark.parametrize("Est", [LabelPropagation, LocalGlobalConsistency])
def test_label_propagation_transductive_cv_equals_refits(Est):
    X, _, y_semi = _semi(n=150)
    folds = make_folds(y_semi, 4, random_state=0)
    est = Est(n_neighbors=8)
    res = cv_result(est, X, y_semi, folds)
    lab = np.flatnonzero(y_semi != -1)
    ref = np.empty((lab.size, 2))
    for i in range(4):
        y_i = y_semi.copy()
        hide = (folds == i) & (y_semi != -1)
        y_i[hide] = -1
        fit = clone(est).fit(X, y_i)
        ref[np.searchsorted(lab, np.flatnonzero(hide))] = fit.label_distributions_[hide]
    pred_labels = np.argmax(res.predictions, axis=1)
    assert np.array_equal(pred_labels, np.argmax(ref, axis=1))
    assert res.score == pytest.approx(np.mean(pred_labels != y_semi[lab]))


def test_label_propagation_regressor_transductive_cv():
    X, _, y_semi = _semi(n=150)
    rng = np.random.default_rng(0)
    yr = np.where(y_semi != -1, X[:, 0] + 0.1 * rng.normal(size=150), np.nan)
    folds = make_folds(yr, 4, classification=False, random_state=0)
    res = cv_result(LabelPropagationRegressor(n_neighbors=8), X, yr, folds)
    lab = np.flatnonzero(~np.isnan(yr))
    ref = np.empty(lab.size)
    for i in range(4):
        y_i = yr.copy()
        hide = (folds == i) & ~np.isnan(yr)
        y_i[hide] = np.nan
        fit = LabelPropagationRegressor(n_neighbors=8).fit(X, y_i)
        ref[np.searchsorted(lab, np.flatnonzero(hide))] = fit.transduction_[hide]
    assert np.allclose(res.predictions, ref, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------------- the search


def test_search_transductive_equals_cv_result_per_candidate(search_matches_cv):
    X, _, y_semi = _semi(n=150)
    grid = {"sigma": [0.3, 1.0], "gamma_a": [1e-4, 1e-2], "gamma_i": [0.1, 10.0]}
    for est in (LapSVM(n_neighbors=8), LapRLS(n_neighbors=8, task="classification")):
        search = GridSearchCV(est, grid, cv=4, random_state=0).fit(X, y_semi)
        assert search.method_ == "exact" and search.protocol_ == "transductive"
        search_matches_cv(search, est, X, y_semi, {"abs": 1e-12}, protocol="transductive")


def test_search_shared_factor_and_neighbours_equal_per_candidate_fits(search_matches_cv):
    """Nystrom backend: the search shares one factor per width across graphs and one kNN
    search across n_neighbors; every candidate's CV equals its own fit's (regression, so
    the criterion is continuous)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(160, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=160)
    y_semi = np.where(np.arange(160) < 50, y, np.nan)
    est = LapRLS(task="regression", backend="nystrom", n_components=40, random_state=0)
    grid = {"sigma": [0.5, 2.0], "n_neighbors": [5, 8], "gamma_i": [0.1, 10.0]}
    search = GridSearchCV(est, grid, cv=5, random_state=0).fit(X, y_semi)
    assert search.method_ == "exact" and search.protocol_ == "transductive"
    search_matches_cv(search, est, X, y_semi, {"rel": 1e-9}, protocol="transductive")


def test_search_over_regularizers_equals_cv_result_per_candidate(search_matches_cv):
    """A grid over the regularizer and its power: every candidate's transductive CV uses its
    own Q (the group's graph is shared, the regularizer is not)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=120)
    y_semi = np.where(np.arange(120) < 30, y, np.nan)
    est = LapRLS(task="regression", sigma=1.0, n_neighbors=6, gamma_a=1e-3)
    grid = {"regularizer": ["L", "L_norm"], "power": [1, 3], "gamma_i": [0.1, 10.0]}
    search = GridSearchCV(est, grid, cv=4, random_state=0).fit(X, y_semi)
    assert search.method_ == "exact" and search.protocol_ == "transductive"
    errors = search.cv_results_["mean_cv_error"]
    assert np.unique(np.round(errors, 10)).size == errors.size  # the settings differ
    search_matches_cv(search, est, X, y_semi, {"rel": 1e-10}, protocol="transductive")


def test_search_spectral_route_for_many_ratios(monkeypatch):
    import fastgssl.cv._grid_groups as search_mod

    monkeypatch.setattr(search_mod, "_SPECTRAL_MIN_RATIOS", 2)
    X, _, y_semi = _semi(n=120)
    grid = {"gamma_a": [1e-4, 1e-3, 1e-2], "gamma_i": [0.1, 1.0]}
    a = GridSearchCV(LapRLS(sigma=0.5, task="classification"), grid, cv=4,
                           random_state=0).fit(X, y_semi)
    monkeypatch.setattr(search_mod, "_SPECTRAL_MIN_RATIOS", 100)
    b = GridSearchCV(LapRLS(sigma=0.5, task="classification"), grid, cv=4,
                           random_state=0).fit(X, y_semi)
    assert np.array_equal(a.cv_results_["mean_cv_error"], b.cv_results_["mean_cv_error"])


def test_search_refuses_a_dense_grid_that_cannot_fit_and_reads_memory_once(monkeypatch):
    """The transductive search checks its n x n arrays before the first kernel (refused:
    the message names the Nystrom backend) and reads the memory limits once per search,
    not once per kernel width."""
    import fastgssl._memory as memory
    from fastgssl._memory import InsufficientMemoryError

    X, _, y_semi = _semi(n=120)
    grid = {"sigma": [0.3, 1.0, 3.0], "gamma_i": [0.1, 1.0]}
    calls = []

    def tiny():
        calls.append(1)
        return 10**5, "MemAvailable (test)"

    monkeypatch.setattr(memory, "available_memory", tiny)
    with pytest.raises(InsufficientMemoryError, match="nystrom"):
        GridSearchCV(LapRLS(task="classification"), grid, cv=4).fit(X, y_semi)
    monkeypatch.setattr(memory, "available_memory",
                        lambda: (calls.append(1), (10**12, "MemAvailable (test)"))[1])
    calls.clear()
    search = GridSearchCV(LapRLS(task="classification"), grid, cv=4,
                                refit=False).fit(X, y_semi)  # the refit checks its own
    assert search.protocol_ == "transductive" and len(calls) == 1
    calls.clear()
    search.fit(X, y_semi)  # a refit of the search checks again
    assert len(calls) == 1


def test_search_label_propagation_and_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, _, y_semi = _semi(n=120)
    lp = GridSearchCV(LabelPropagation(), {"n_neighbors": [5, 10]}, cv=4,
                            random_state=0).fit(X, y_semi)
    assert lp.protocol_ == "transductive" and np.isfinite(lp.best_cv_error_)
    pipe = make_pipeline(StandardScaler(), LapSVM(sigma=1.0))
    ps = GridSearchCV(pipe, {"lapsvm__gamma_i": [0.1, 1.0]}, cv=4,
                            random_state=0).fit(X, y_semi)
    assert set(ps.best_params_) == {"lapsvm__gamma_i"}


def test_search_auto_is_exact_for_supervised_svm():
    X, y, _ = _semi(n=120)
    s = GridSearchCV(SVM(), {"sigma": [0.3, 1.0], "lam": [1e-4, 1e-2]}, cv=4,
                           random_state=0).fit(X, y)
    assert s.method_ == "exact" and s.verify_ is None
    for params, err in zip(s.cv_results_["params"], s.cv_results_["mean_cv_error"]):
        assert err == pytest.approx(cv_score(SVM(**params), X, y, s.folds_, method="exact"))


# ------------------------------------------------------------------------------- bad input


def test_deformed_kernel_bad_input():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(20, 2))
    Q = laplacian(knn_graph(X, 4))
    with pytest.raises(ValueError, match="route"):
        DeformedKernel(route="eig").fit(X, Q, np.arange(3))
    with pytest.raises(ValueError, match="labeled"):
        DeformedKernel().fit(X, Q, np.zeros(20, dtype=bool))
    with pytest.raises(ValueError, match="shape"):
        DeformedKernel().fit(X, Q[:10, :10], np.arange(3))
    dk = DeformedKernel().fit(X, Q, np.arange(3))
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="r = gamma_i"):
            dk.gram(bad)
    with pytest.raises(ValueError, match="not fitted"):
        DeformedKernel().gram(0.1)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError):
        DeformedKernel().fit(Xn, Q, np.arange(3))
    Qnan = Q.copy().astype(float)
    Qnan.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DeformedKernel().fit(X, Qnan, np.arange(3))


def test_non_psd_regularizer_is_refused():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 2))
    Q = -laplacian(knn_graph(X, 5))  # negative semi-definite
    with pytest.raises(ValueError, match="positive semi-definite"):
        DeformedKernel(route="spectral").fit(X, Q, np.arange(6))
    dk = DeformedKernel(route="dense").fit(X, Q, np.arange(6))
    with pytest.raises(ValueError, match="positive semi-definite|NaN"):
        dk.gram(5.0)


def test_ill_conditioned_system_warns_with_numbers():
    from fastgssl.kernels import IllConditionedKernelWarning

    X, _, y_semi = _semi(n=60, n_lab=12)
    with pytest.warns(IllConditionedKernelWarning, match="condition number up to"):
        LapRLS(sigma=0.5, gamma_a=1e-16, gamma_i=1e-14, task="classification").fit(X, y_semi)


def test_cv_bad_folds_for_transductive():
    X, _, y_semi = _semi(n=60, n_lab=6)
    from fastgssl.exceptions import FoldsLoweredWarning

    with pytest.warns(FoldsLoweredWarning, match="lowered from 8"):  # l < t: lowered, said
        cv_result(LapSVM(), X, y_semi, 8)
    folds = np.zeros(60, dtype=int)
    lab = np.flatnonzero(y_semi != -1)
    folds[lab[y_semi[lab] == 1]] = 1  # fold 1 hides every label of class 1
    folds[np.flatnonzero(y_semi == -1)[::2]] = 1
    with pytest.raises(ValueError, match="single class|leaves the labeled classes"):
        cv_result(LapSVM(), X, y_semi, folds, method="exact", protocol="transductive")


@pytest.mark.parametrize("indefinite", [False, True])
def test_square_fold_refits_small_l_equal_fold_size_algebra(monkeypatch, indefinite):
    """Small l: the square loss's folds refitted directly in one compiled call; equal to
    the one-factorization-per-fold-size algebra and to solves by hand (an indefinite Gram,
    where the compiled Cholesky stops, goes through the symmetric solve)."""
    import fastgssl.cv._transductive as tr

    rng = np.random.default_rng(3)
    l, t = 37, 4
    Z = rng.normal(size=(l, 6))
    K = np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1) / 4.0)
    if indefinite:
        K = K - 0.5 * np.eye(l)
    Y = rng.normal(size=(l, 2))
    fl = rng.integers(0, t, size=l)
    gamma_a = 1e-3
    direct = tr._square_predictions(K, Y, fl, t, gamma_a)
    ref = np.empty_like(Y)
    for i in range(t):
        R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
        A = K[np.ix_(R, R)] + gamma_a * R.size * np.eye(R.size)
        ref[V] = K[np.ix_(V, R)] @ np.linalg.solve(A, Y[R])
    assert np.allclose(direct, ref, rtol=1e-9, atol=1e-10)
    if not indefinite:
        monkeypatch.setattr(tr, "_DIRECT_MAX_L", 0)
        assert np.allclose(tr._square_predictions(K, Y, fl, t, gamma_a), direct, rtol=1e-9,
                           atol=1e-10)


def test_fitted_model_keeps_no_spare_n_by_n_arrays():
    """A fitted LapSVM keeps its deformed kernel at its own ratio: the base Gram matrix is
    its only n x n array (the factorization's workspace is dropped), and another ratio is
    still computed exactly."""
    X, _, y_semi = _semi(n=90)
    est = LapSVM(sigma=0.5, gamma_a=1e-2, gamma_i=1.0, n_neighbors=6).fit(X, y_semi)
    dk = est.deformed_kernel_
    n = X.shape[0]
    square = [k for k, v in vars(dk).items() if isinstance(v, np.ndarray) and v.shape == (n, n)]
    assert square == ["kernel_train_"]
    r = 0.3
    ref = _dense_deformed(dk.kernel_train_, dk.Q_, r)
    K_SL, _ = dk.gram(r)
    assert np.allclose(K_SL, ref[:, dk.labeled_index_], rtol=1e-10, atol=1e-12)


def test_refit_checks_a_changed_regularizer_again():
    """A DeformedKernel refitted with the same sparse Q skips its checks; the same object
    with other entries (changed in place) is checked again, and the results stay exact."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    Q = laplacian(knn_graph(X, 4)).tocsr()
    labeled = np.arange(5)
    dk = DeformedKernel(sigma=1.0, route="dense").fit(X, Q, labeled)
    first = dk.labeled_gram(0.3).copy()
    dk.fit(X, Q, labeled)
    np.testing.assert_allclose(dk.labeled_gram(0.3), first, rtol=0, atol=1e-12)
    Q.data[np.flatnonzero(Q.indices[: Q.indptr[1]] != 0)[0]] += 1.0  # Q[0, j != 0]: asymmetric
    with pytest.raises(ValueError, match="symmetric"):
        dk.fit(X, Q, labeled)


def test_spectral_route_accepts_a_graph_of_round_off_weights():
    """Gaussian weights that underflow on standardized a1a (LIBSVM, 123 binary features)
    give a regularizer whose restriction to the kernel's range is round-off itself: PSD to
    round-off when measured against ||K|| ||Q|| (it was refused for every sigma)."""
    from fastgssl.datasets import load_libsvm
    from fastgssl.kernels import rbf_kernel
    from fastgssl.regularizers import laplacian

    try:
        X, _ = load_libsvm("a1a", dense=True)
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"a1a not available ({exc}); set FASTGSSL_DATASETS")
    rng = np.random.default_rng(0)
    X = X[rng.permutation(X.shape[0])[:400]]
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    labeled = np.zeros(400, dtype=bool)
    labeled[rng.permutation(400)[:40]] = True
    Q = laplacian(knn_graph(X, 8, weight="gaussian", sigma_w=0.25))
    for sigma in (2.0**-10, 1.0, 2.0**10):
        dk = DeformedKernel(route="spectral").fit(None, Q, labeled,
                                                  base_gram=rbf_kernel(X, sigma=sigma))
        assert np.isfinite(dk.labeled_gram(1.0)).all()
