"""Public CV functions on the real estimators: against refits, raw-array oracles and
each other (precomputed kernels, nystrom backend, multi-class, bad input)."""

import warnings

import numpy as np
import pytest
from test_bif import RefLoss, fd_bif, rel_err, solve_w

from fastgssl import registry
from fastgssl.cv import (
    FBIF,
    CVResult,
    MarginFBIF,
    bif_matrix,
    cv_predictions,
    cv_result,
    cv_score,
    make_folds,
)
from fastgssl.kernels import rbf_kernel
from fastgssl.models import KRR, SVM


def _require_example_plugin():
    """Skip only when the example plugin distribution is absent (CI installs it); an
    installed plugin that fails to load fails the test."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution("fastgssl-pseudohuber")
    except PackageNotFoundError:
        pytest.skip("the example plugin fastgssl-pseudohuber (plugins/) is not installed")


def data(n=40, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if regression:
        return X, X[:, 0] + 0.3 * rng.normal(size=n)
    return X, np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1, 0)


# ----------------------------------------------------------------------------- exact quadratic


@pytest.mark.parametrize("precomputed", [False, True])
def test_exact_quadratic_equals_brute_force_krr_refits(precomputed):
    X, y = data(50, regression=True)
    lam, sigma, t = 1e-2, 1.5, 5
    folds = make_folds(y, t, classification=False, random_state=0)
    K = rbf_kernel(X, sigma=sigma)
    est = KRR(lam=lam, sigma=sigma, kernel="precomputed" if precomputed else "rbf")
    res = cv_result(est, K if precomputed else X, y, folds, method="exact-quadratic")
    assert res.form == "sum"
    ref = np.empty(50)
    n = len(y)
    for i in range(t):
        tr, te = folds != i, folds == i
        # sum form: mu = n lam fixed, i.e. the mean-form lam scaled by n / (n - m_i)
        m = KRR(lam=lam * n / tr.sum(), sigma=sigma).fit(X[tr], y[tr])
        ref[te] = m.decision_function(X[te])
    assert np.max(np.abs(res.predictions - ref)) < 1e-10
    assert res.score == pytest.approx(np.mean((ref - y) ** 2), rel=1e-12)


def test_exact_method_matches_manual_refits():
    X, y = data(40)
    folds = make_folds(y, 4, random_state=1)
    est = SVM(lam=1e-2, sigma=1.0)
    pred = cv_predictions(est, X, y, folds, method="exact")
    ref = np.empty(40)
    for i in range(4):
        tr, te = folds != i, folds == i
        ref[te] = SVM(lam=1e-2, sigma=1.0).fit(X[tr], y[tr]).decision_function(X[te])
    assert np.allclose(pred, ref, atol=1e-10)
    err = np.mean(np.where(ref > 0, 1, 0) != y)
    assert cv_score(est, X, y, folds, method="exact") == pytest.approx(err)
    par = cv_predictions(est, X, y, folds, method="exact", n_jobs=2)
    assert np.allclose(par, pred, atol=1e-12)


# ----------------------------------------------------------------------------- BIF vs refits


@pytest.mark.parametrize(
    "make, loss",
    [
        (lambda: KRR(lam=0.05, sigma=1.0), RefLoss("square")),
        (lambda: SVM(lam=0.05, sigma=1.0, h=0.5), RefLoss("huber_hinge", 0.5)),
        (lambda: SVM(lam=0.05, sigma=1.0, loss="logistic"), RefLoss("logistic")),
    ],
)
def test_bif_matrix_of_fitted_estimator_matches_finite_differences(make, loss):
    X, y = data(30, seed=3, regression=loss.name == "square")
    est = make().fit(X, y)
    t = 3
    folds = make_folds(y, t, classification=loss.name != "square", random_state=0)
    B = bif_matrix(est, folds)
    assert B.shape == (30, t)
    labeled = np.ones(30, dtype=bool)
    y_enc = est.y_train_
    B_fd = fd_bif(est.kernel_train_, y_enc, labeled, loss, est.gamma_a_, 0.0, None, folds,
                  [None] * t, t)
    assert rel_err(B, B_fd) < 1e-6


def test_fbif_with_all_columns_equals_bif_for_estimators():
    X, y = data(40, seed=2)
    folds = make_folds(y, 4, random_state=0)
    for est in [KRR(lam=0.01, sigma=1.0, task="classification"),
                SVM(lam=0.01, sigma=1.0, loss="logistic")]:
        est.fit(X, y)
        B = bif_matrix(est, folds, method="bif")
        B_f = bif_matrix(est, folds, method="fbif", n_components=40)
        assert rel_err(B_f, B) < 1e-8
        B_low = bif_matrix(est, folds, method="fbif", n_components=10)
        assert rel_err(B_low, B) > 1e-10


def test_huber_fbif_uses_exact_margin_woodbury():
    X, y = data(60, seed=4)
    est = SVM(lam=0.01, sigma=1.0, h=0.05).fit(X, y)
    folds = make_folds(y, 5, random_state=0)
    res = MarginFBIF(n_components=30).run(SVM(lam=0.01, sigma=1.0, h=0.05), X, y, folds)
    assert res.info["form"] == ["exact-active-set"]
    assert FBIF(n_components=30).run(SVM(lam=0.01, sigma=1.0, h=0.05), X, y,
                                     folds).info["form"] == ["paper-nystrom"]
    assert np.allclose(bif_matrix(est, folds, "fbif-margin", n_components=30),
                       bif_matrix(est, folds, "bif"), rtol=1e-9, atol=1e-12)


def test_nystrom_backend_bif_is_exact_wspace_bif():
    X, y = data(40, seed=5)
    est = SVM(lam=0.05, sigma=1.0, loss="logistic", backend="nystrom", n_components=12,
              random_state=0).fit(X, y)
    folds = make_folds(y, 3, random_state=0)
    B = bif_matrix(est, folds)
    assert np.allclose(B, bif_matrix(est, folds, method="fbif"), atol=1e-14)
    V = est.nystrom_.features_
    loss = RefLoss("logistic")
    labeled = np.ones(40, dtype=bool)
    for i in range(3):
        wp = solve_w(V, est.y_train_, labeled, loss, est.gamma_a_, 0.0, None, folds, i, None,
                     1e-5)
        wm = solve_w(V, est.y_train_, labeled, loss, est.gamma_a_, 0.0, None, folds, i, None,
                     -1e-5)
        assert rel_err(B[:, i], V @ (wp - wm) / 2e-5) < 1e-6


# ----------------------------------------------------------------------------- precomputed


@pytest.mark.parametrize("method", ["exact", "bif", "exact-quadratic", "fbif"])
def test_precomputed_kernel_gives_the_same_cv(method):
    X, y = data(36, seed=6, regression=True)
    folds = make_folds(y, 4, classification=False, random_state=0)
    K = rbf_kernel(X, sigma=2.0)
    opts = {"n_components": 20, "random_state": 3} if method == "fbif" else {}
    a = cv_predictions(KRR(lam=0.01, sigma=2.0), X, y, folds, method=method, **opts)
    b = cv_predictions(KRR(lam=0.01, kernel="precomputed"), K, y, folds, method=method,
                       **opts)
    assert np.allclose(a, b, rtol=1e-9, atol=1e-10)


# ----------------------------------------------------------------------------- multi-class


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    y = np.repeat([5, 7, 9], 15)
    X = centers[np.searchsorted([5, 7, 9], y)] + rng.normal(size=(45, 2))
    folds = make_folds(y, 3, random_state=0)
    est = KRR(lam=0.01, sigma=2.0, task="classification").fit(X, y)
    B = bif_matrix(est, folds)
    assert B.shape == (45, 3, 3)
    for k in range(3):  # each output column is the binary BIF of its +-1 targets
        sub = KRR(lam=0.01, sigma=2.0, task="regression").fit(X, est.y_train_[:, k])
        assert np.allclose(B[:, :, k], bif_matrix(sub, folds), atol=1e-10)
    res = cv_result(KRR(lam=0.01, sigma=2.0, task="classification"), X, y, folds, "bif")
    assert res.predictions.shape == (45, 3)
    exact = cv_result(KRR(lam=0.01, sigma=2.0, task="classification"), X, y, folds, "exact")
    assert exact.predictions.shape == (45, 3)
    assert abs(res.score - exact.score) < 0.1
    eq = cv_result(KRR(lam=0.01, sigma=2.0, task="classification"), X, y, folds,
                   "exact-quadratic")
    assert eq.predictions.shape == (45, 3)


# ----------------------------------------------------------------------------- semi-supervised


def test_semi_supervised_bif_matches_refits_and_scores_labeled_only():
    from fastgssl.models import LapRLS

    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1, 0)
    y_semi = y.copy()
    y_semi[rng.permutation(40)[:24]] = -1
    folds = make_folds(y_semi, 3, random_state=0)
    est = LapRLS(sigma=1.0, gamma_a=0.05, gamma_i=1.0, n_neighbors=6, task="classification")
    est.fit(X, y_semi)
    B = bif_matrix(est, folds)
    W = est.graph_
    Qs = [est._build_regularizer(W[folds == i][:, folds == i]) for i in range(3)]
    labeled = y_semi != -1
    B_fd = fd_bif(est.kernel_train_, est.y_train_, labeled, RefLoss("square"), est.gamma_a_,
                  est.gamma_i_, est.laplacian_, folds, Qs, 3)
    assert rel_err(B, B_fd) < 1e-6
    assert rel_err(bif_matrix(est, folds, "fbif", n_components=40), B) < 1e-8
    pred = cv_predictions(est, X, y_semi, folds, method="bif")
    assert pred.shape == (labeled.sum(),)
    # the default protocol is transductive since the deformed-kernel issue; ask for inductive
    res = cv_result(est, X, y_semi, folds, method="exact", protocol="inductive")
    assert res.graph_mode == "rebuild"
    assert res.predictions.shape == (labeled.sum(),)
    ind = cv_result(est, X, y_semi, folds, method="exact", graph_mode="induced")
    assert ind.graph_mode == "induced"
    eq = cv_result(est, X, y_semi, folds, method="exact-quadratic")
    assert eq.graph_mode == "held-out points kept as unlabeled"


# ----------------------------------------------------------------------------- bad input


def test_bad_input_errors():
    X, y = data(30)
    folds = make_folds(y, 3, random_state=0)
    with pytest.raises(ValueError, match="unknown name"):
        cv_score(SVM(), X, y, folds, method="nope")
    with pytest.raises(ValueError, match="square loss"):
        cv_score(SVM(), X, y, folds, method="exact-quadratic")
    with pytest.raises(ValueError, match=">= 2"):
        cv_score(SVM(), X, y, 1, method="bif")
    with pytest.raises(ValueError, match="not fitted"):
        bif_matrix(SVM(), folds)
    with pytest.raises(ValueError, match="'bif', 'fbif' or 'fbif-margin'"):
        bif_matrix(SVM().fit(X, y), folds, method="exact")
    # more folds than the smallest class holds: lowered, and said (folds_for_labels)
    from fastgssl.exceptions import FoldsLoweredWarning

    with pytest.warns(FoldsLoweredWarning, match="lowered from 25 to 14"):
        cv_score(SVM(), X, y, 25, method="bif")
    with pytest.raises(ValueError, match="smallest class count"):
        make_folds(y, 25)  # asked for explicitly: refused
    with pytest.raises(ValueError, match="graph_mode"):
        cv_score(SVM(), X, y, folds, method="exact", graph_mode="bogus")


def test_registry_and_result_object():
    m = registry.get("fastgssl.cv", "fbif", n_components=7)
    assert isinstance(m, FBIF) and m.n_components == 7
    X, y = data(30)
    res = cv_result(SVM(lam=0.01), X, y, 3, method="bif", random_state=0)
    assert isinstance(res, CVResult)
    assert res.task == "classification" and res.n_folds == 3 and res.form == "mean"
    assert set(res.times) == {"fit", "cv"}
    assert res.score == pytest.approx(np.mean(np.where(res.predictions > 0, 1, -1)
                                              != res.targets))


def test_supervised_minus_one_is_a_class():
    X, y = data(30)
    y = np.where(y == 1, 1, -1)  # LIBSVM coding: -1 is a label for supervised estimators
    folds = make_folds(y, 3, labeled=np.ones(30, bool), random_state=0)
    res = cv_result(SVM(lam=0.01), X, y, folds, method="bif")
    assert len(res.labeled_index) == 30
    res = cv_result(SVM(lam=0.01), X, y, 3, method="exact", random_state=0)
    assert len(res.labeled_index) == 30


@pytest.mark.parametrize("method", ["exact", "bif", "fbif", "exact-quadratic"])
def test_precomputed_kernel_and_graph_semi_supervised(method):
    from fastgssl.models import LapRLS

    rng = np.random.default_rng(8)
    X = rng.normal(size=(36, 2))
    y = X[:, 0] + 0.2 * rng.normal(size=36)
    y[rng.permutation(36)[:20]] = np.nan
    folds = make_folds(y, 3, classification=False, random_state=0)
    est = LapRLS(sigma=1.5, gamma_a=0.01, gamma_i=1.0, n_neighbors=5, task="regression")
    W = est.fit(X, y).graph_
    K = rbf_kernel(X, sigma=1.5)
    pre = LapRLS(kernel="precomputed", graph=W, gamma_a=0.01, gamma_i=1.0, task="regression")
    opts = {"n_components": 36} if method == "fbif" else {}
    if method == "exact":
        opts["graph_mode"] = "induced"
    a = cv_result(est, X, y, folds, method=method, **opts)
    b = cv_result(pre, K, y, folds, method=method, **opts)
    assert np.allclose(a.predictions, b.predictions, rtol=1e-8, atol=1e-10)
    assert a.graph_mode == b.graph_mode


def test_bif_with_the_example_plugin_loss_matches_finite_differences():
    from fastgssl.losses import get_loss

    _require_example_plugin()
    loss = get_loss("pseudo_huber", delta=0.5)  # installed: a failure here is a failure
    X, y = data(30, seed=9, regression=True)
    est = KRR(lam=0.02, sigma=1.0, loss="pseudo_huber", loss_params={"delta": 0.5}).fit(X, y)
    folds = make_folds(y, 3, classification=False, random_state=0)
    B = bif_matrix(est, folds)
    B_fd = fd_bif(est.kernel_train_, est.y_train_, np.ones(30, bool), loss, est.gamma_a_, 0.0,
                  None, folds, [None] * 3, 3)
    assert rel_err(B, B_fd) < 1e-6


@pytest.mark.parametrize("regularizer", ["L", "L_norm"])
def test_lapsvm_bif_matches_finite_differences(regularizer):
    from test_bif import margins_clear

    from fastgssl.models import LapSVM

    rng = np.random.default_rng(10)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, 0)
    y[rng.permutation(40)[:16]] = -1
    folds = make_folds(y, 3, random_state=0)
    est = LapSVM(sigma=1.0, gamma_a=0.05, gamma_i=1.0, h=0.5, n_neighbors=6,
                 regularizer=regularizer).fit(X, y)
    loss = RefLoss("huber_hinge", 0.5)
    labeled = y != -1
    assert margins_clear(loss, est.y_train_, est.decision_train_, labeled)
    W = est.graph_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # isolated vertices of fold subgraphs
        Qs = [est._build_regularizer(W[folds == i][:, folds == i]) for i in range(3)]
    B_fd = fd_bif(est.kernel_train_, est.y_train_, labeled, loss, est.gamma_a_, est.gamma_i_,
                  est.laplacian_, folds, Qs, 3)
    assert rel_err(bif_matrix(est, folds), B_fd) < 1e-6
    assert rel_err(bif_matrix(est, folds, "fbif", n_components=40), B_fd) < 1e-6


# ----------------------------------------------------------------------------- newton step


def test_newton_step_is_exact_for_krr():
    X, y = data(40, seed=11, regression=True)
    folds = make_folds(y, 4, classification=False, random_state=0)
    est = KRR(lam=1e-3, sigma=1.0)
    a = cv_predictions(est, X, y, folds, method="newton")
    b = cv_predictions(est, X, y, folds, method="exact")
    assert np.allclose(a, b, rtol=1e-7, atol=1e-9)


def test_newton_step_is_exact_for_laprls_with_induced_subgraphs():
    from fastgssl.models import LapRLS

    rng = np.random.default_rng(12)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] + 0.2 * rng.normal(size=40)
    y[rng.permutation(40)[:24]] = np.nan
    folds = make_folds(y, 3, classification=False, random_state=0)
    est = LapRLS(sigma=1.0, gamma_a=1e-3, gamma_i=1.0, n_neighbors=6, task="regression")
    a = cv_result(est, X, y, folds, method="newton")
    b = cv_result(est, X, y, folds, method="exact", graph_mode="induced")
    assert a.graph_mode == b.graph_mode == "induced"
    assert np.allclose(a.predictions, b.predictions, rtol=1e-7, atol=1e-9)


def test_newton_step_beats_bif_for_the_logistic_loss():
    X, y = data(80, seed=13)
    folds = make_folds(y, 5, random_state=0)
    est = SVM(lam=1e-3, sigma=0.5, loss="logistic")
    exact = cv_predictions(est, X, y, folds, method="exact")
    newton = cv_predictions(est, X, y, folds, method="newton")
    bif = cv_predictions(est, X, y, folds, method="bif")
    assert np.linalg.norm(newton - exact) < 0.5 * np.linalg.norm(bif - exact)
    with pytest.raises(ValueError, match="dense backend"):
        cv_score(SVM(backend="nystrom", n_components=10), X, y, folds, method="newton")
    with pytest.warns(RuntimeWarning, match="linear piece"):
        cv_score(SVM(lam=1e-3, sigma=0.5, h=0.05), X, y, folds, method="newton")


def _lapsvm():
    from fastgssl.models import LapSVM

    return LapSVM(sigma=1.0, gamma_a=1e-3, gamma_i=0.1, n_neighbors=5)


@pytest.mark.parametrize(
    "make, semi, graph_mode",
    [
        (lambda: SVM(lam=1e-4, sigma=0.5, h=0.05), False, "rebuild"),
        (lambda: SVM(lam=1e-2, sigma=1.0, loss="logistic"), False, "rebuild"),
        (_lapsvm, True, "rebuild"),
        (_lapsvm, True, "induced"),
    ],
)
def test_exact_cv_warm_start_reaches_the_cold_refits(make, semi, graph_mode):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=60) > 0, 1, 0)
    if semi:
        y = y.copy()
        y[rng.permutation(60)[:30]] = -1
    folds = make_folds(y, 4, random_state=0)
    warm = cv_result(make(), X, y, folds, method="exact", graph_mode=graph_mode)
    cold = cv_result(make(), X, y, folds, method="exact", graph_mode=graph_mode,
                     warm_start=False)
    assert warm.info["warm_start"] and not cold.info["warm_start"]
    assert np.allclose(warm.predictions, cold.predictions, rtol=1e-7, atol=1e-8)
    assert warm.score == cold.score


def test_exact_cv_warm_start_multiclass_and_square_loss():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(60, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    folds = make_folds(y, 3, random_state=0)
    warm = cv_result(SVM(lam=1e-3, sigma=1.0), X, y, folds, method="exact")
    cold = cv_result(SVM(lam=1e-3, sigma=1.0), X, y, folds, method="exact", warm_start=False)
    assert warm.info["warm_start"]
    assert np.allclose(warm.predictions, cold.predictions, rtol=1e-7, atol=1e-8)
    # closed-form fits gain nothing from a start: no extra full fit
    assert not cv_result(KRR(lam=1e-2), X, y.astype(float), folds,
                         method="exact").info["warm_start"]
