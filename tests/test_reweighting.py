"""Reweighted Laplace learning (``LabelPropagation(reweighting=...)``: WNLL, properly weighted,
Poisson-reweighted) against graphlearning on the same weight matrix, dense references,
brute-force cross-validation refits and the grid search's learner axis."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.utils.estimator_checks import parametrize_with_checks

from fastgssl.cv import GridSearchCV, cv_result
from fastgssl.graphs import knn_graph
from fastgssl.models import LabelPropagation, PoissonLearning, VolumeMBO
from fastgssl.models._reweighting import node_weights, reweighted_graph

TIGHT = dict(solver="direct", rtol=1e-12)
KINDS = ["wnll", "properly", "poisson"]


def _blobs(n=400, centers=4, per_class=2, seed=0, std=2.0):
    X, y = make_blobs(n, centers=centers, random_state=seed, cluster_std=std)
    rng = np.random.default_rng(seed)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                          for c in range(centers)])
    y_ssl = np.full(n, -1)
    y_ssl[lab] = y[lab]
    return X, y, y_ssl


def _graph(X, k=8):
    return sp.csr_matrix(knn_graph(X, k, weight="gaussian"))


def _dense_harmonic(W, y_ssl, k):
    """f_U = L_UU^-1 W_UL Y_L, dense."""
    W = W.toarray()
    L = np.diag(W.sum(axis=1)) - W
    lab = np.flatnonzero(y_ssl >= 0)
    unl = np.flatnonzero(y_ssl < 0)
    Y = np.eye(k)[y_ssl[lab]]
    F = np.zeros((len(y_ssl), k))
    F[lab] = Y
    F[unl] = np.linalg.solve(L[np.ix_(unl, unl)], W[np.ix_(unl, lab)] @ Y)
    return F


# ---------------------------------------------------------------------------------------------
# the reweighted graph and the solution, against graphlearning on the same W
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_reweighted_graph_equals_graphlearning_reweight(kind):
    gl = pytest.importorskip("graphlearning")
    X, y, y_ssl = _blobs(seed=1)
    W = _graph(X)
    lab = np.flatnonzero(y_ssl >= 0)
    theirs = sp.csr_matrix(gl.graph(W).reweight(lab, method=kind, X=X))
    a, _ = node_weights(kind, W, y_ssl >= 0, coords=X, **TIGHT)
    ours = reweighted_graph(kind, W, a)
    # graphlearning's Poisson weights come from its CG stopped at a residual of 1e-5
    tol = 1e-4 if kind == "poisson" else 1e-12
    np.testing.assert_allclose(ours.toarray(), theirs.toarray(), rtol=tol,
                               atol=tol * abs(theirs).max())


@pytest.mark.parametrize("kind", KINDS)
def test_label_propagation_equals_graphlearning_laplace(kind):
    gl = pytest.importorskip("graphlearning")
    X, y, y_ssl = _blobs(seed=2, per_class=1)
    W = _graph(X, 10)
    lab = np.flatnonzero(y_ssl >= 0)
    u = gl.ssl.laplace(W, reweighting=kind, X=X, tol=1e-12).fit(lab, y_ssl[lab])
    ours = LabelPropagation(graph=W, reweighting=kind, **TIGHT).fit(X, y_ssl)
    tol = 1e-4 if kind == "poisson" else 1e-8
    np.testing.assert_allclose(ours.label_distributions_, u / u.sum(axis=1, keepdims=True),
                               atol=tol)
    np.testing.assert_array_equal(ours.transduction_, np.argmax(u, axis=1))
    # the default (multigrid / CG at rtol 1e-6, with its diagonal scaling) agrees too
    default = LabelPropagation(graph=W, reweighting=kind).fit(X, y_ssl)
    np.testing.assert_allclose(default.label_distributions_, ours.label_distributions_,
                               atol=1e-4)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lam", [np.inf, 3.0])
def test_reweighted_solution_equals_dense_reference(kind, lam):
    X, y, y_ssl = _blobs(n=200, centers=3, seed=3)
    W = _graph(X)
    with warnings.catch_warnings():
        # properly's weights of 1e7 leave the direct solve's residual above 1e-12
        warnings.simplefilter("ignore", UserWarning)
        est = LabelPropagation(lam, graph=W, reweighting=kind, **TIGHT).fit(X, y_ssl)
    lab = y_ssl >= 0
    a = est.reweighting_weights_
    A = np.diag(a)
    Wd = W.toarray()
    Wr = A @ Wd @ A if kind == "poisson" else A @ Wd + Wd @ A
    if kind == "wnll":
        np.testing.assert_allclose(a, np.where(lab, 200 / lab.sum(), 1.0))
    if kind == "properly":
        dist = np.sqrt(((X[:, None] - X[lab][None]) ** 2).sum(-1)).min(axis=1)
        r_zeta = 0.1 / (1e7 - 1) ** 0.5
        np.testing.assert_allclose(a, 1 + (0.1 / np.maximum(dist, r_zeta)) ** 2)
    if kind == "poisson":
        L = np.diag(Wd.sum(1)) - Wd
        f = lab - lab.mean()
        w = np.linalg.lstsq(L, f, rcond=None)[0]
        np.testing.assert_allclose(a, w - w.min() + 1e-5, rtol=1e-8, atol=1e-10)
    if np.isinf(lam):
        F = _dense_harmonic(sp.csr_matrix(Wr), y_ssl, 3)
    else:
        Y = np.eye(3)[np.where(lab, y_ssl, 0)] * lab[:, None]
        Lr = np.diag(Wr.sum(1)) - Wr
        F = np.linalg.solve(Lr + lam * np.diag(lab), lam * Y)
    np.testing.assert_allclose(est._F, F, atol=1e-9)


def test_subsets_use_the_reweighted_graph():
    # a subset of every point is the full system (Bengio et al. 2005) on the reweighted W
    X, y, y_ssl = _blobs(n=120, centers=3, seed=4)
    W = _graph(X)
    full = LabelPropagation(graph=W, reweighting="wnll", **TIGHT).fit(X, y_ssl)
    sub = LabelPropagation(graph=W, reweighting="wnll", n_landmarks=120,
                           **TIGHT).fit(X, y_ssl)
    np.testing.assert_allclose(sub._F, full._F, atol=1e-9)


def test_poisson_weights_per_component_are_each_component_alone():
    X, y, y_ssl = _blobs(n=160, centers=2, seed=5, std=0.6)
    XB = X + 100.0
    Xall = np.r_[X, XB]
    W = sp.block_diag([_graph(X), _graph(XB)]).tocsr()
    y_all = np.r_[y_ssl, y_ssl]
    a, _ = node_weights("poisson", W, y_all >= 0, **TIGHT)
    alone, _ = node_weights("poisson", _graph(X), y_ssl >= 0, **TIGHT)
    np.testing.assert_allclose(a[:160], alone, rtol=1e-8)
    np.testing.assert_allclose(a[160:], alone, rtol=1e-8)
    est = LabelPropagation(graph=W, reweighting="poisson", **TIGHT).fit(Xall, y_all)
    np.testing.assert_array_equal(est.transduction_[:160], est.transduction_[160:])


# ---------------------------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------------------------


def test_properly_needs_features_and_says_so():
    X, y, y_ssl = _blobs(n=100, centers=2)
    W = _graph(X)
    with pytest.raises(ValueError, match="reweighting='properly'.*precomputed"):
        LabelPropagation(graph="precomputed", reweighting="properly").fit(W, y_ssl)
    # the precomputed affinity works for the other two, and graph=W with X for all three
    LabelPropagation(graph="precomputed", reweighting="wnll").fit(W, y_ssl)
    LabelPropagation(graph=W, reweighting="properly").fit(X, y_ssl)


@pytest.mark.parametrize("kw,match", [
    ({"reweighting": "none"}, "reweighting"),
    ({"reweighting": "wnll", "reweighting_params": {"radius": 1.0}}, "reweighting_params"),
    ({"reweighting": "properly", "reweighting_params": {"r": 1.0}}, "unknown keys"),
    ({"reweighting": "properly", "reweighting_params": {"zeta": 1.0}}, "zeta"),
    ({"reweighting": "properly", "reweighting_params": {"alpha": -2}}, "alpha"),
    ({"reweighting": "properly", "reweighting_params": [1.0]}, "reweighting_params"),
    # issue 51: a bare OverflowError from (zeta - 1)^(1 / alpha)
    ({"reweighting": "properly", "reweighting_params": {"alpha": 1e-300}},
     r"alpha=1e-300 .* outside double precision; raise alpha to at least 0\.0231"),
    ({"reweighting": "properly", "reweighting_params": {"alpha": 1e-4, "zeta": 1.5}},
     "outside double precision"),
])
def test_bad_reweighting_parameters(kw, match):
    X, y, y_ssl = _blobs(n=60, centers=2)
    with pytest.raises(ValueError, match=match):
        LabelPropagation(n_neighbors=5, **kw).fit(X, y_ssl)


def test_properly_params_change_the_weights():
    X, y, y_ssl = _blobs(n=100, centers=2, seed=7)
    est = LabelPropagation(reweighting="properly",
                           reweighting_params={"radius": 2.0, "alpha": 3}).fit(X, y_ssl)
    lab = y_ssl >= 0
    dist = np.sqrt(((X[:, None] - X[lab][None]) ** 2).sum(-1)).min(axis=1)
    r_zeta = 2.0 / (1e7 - 1) ** (1 / 3)
    np.testing.assert_allclose(est.reweighting_weights_,
                               1 + (2.0 / np.maximum(dist, r_zeta)) ** 3, rtol=1e-9)


# ---------------------------------------------------------------------------------------------
# cross-validation: refits per fold, equal to brute force
# ---------------------------------------------------------------------------------------------


def _brute_force(est, X, y, folds):
    lab = np.flatnonzero(y != -1)
    out = {}
    for i in np.unique(folds[lab]):
        hide = (y != -1) & (folds == i)
        f = np.asarray(clone(est).fit(X, np.where(hide, -1, y)).cv_state().f)
        for j in np.flatnonzero(hide):
            out[j] = f[j]
    return np.array([out[j] for j in lab])


@pytest.mark.parametrize("est", [LabelPropagation(reweighting=k, n_neighbors=6, **TIGHT)
                                 for k in KINDS]
                         + [LabelPropagation(3.0, reweighting="wnll", n_neighbors=6, **TIGHT),
                            VolumeMBO(n_neighbors=6, max_iter=10, random_state=0)], ids=repr)
def test_exact_cv_refits_per_fold_and_equals_brute_force(est):
    X, y, y_ssl = _blobs(n=150, centers=3, per_class=6, seed=8)
    lab = np.flatnonzero(y_ssl >= 0)
    folds = np.zeros(150, dtype=int)
    folds[lab] = np.arange(lab.size) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r = cv_result(est, X, y_ssl, folds, method="exact", protocol="transductive")
        ref = _brute_force(est, X, y_ssl, folds)
    assert r.info["solver"] == "propagation re-solve"
    assert est.fit(X, y_ssl).cv_state().propagation is None
    np.testing.assert_allclose(r.predictions, ref, rtol=1e-8, atol=1e-10)


def test_grid_search_over_learners_includes_the_new_ones():
    X, y, y_ssl = _blobs(n=200, centers=3, per_class=8, seed=9)
    learners = [PoissonLearning(), LabelPropagation(reweighting="wnll"),
                LabelPropagation(reweighting="properly"),
                LabelPropagation(reweighting="poisson"), VolumeMBO(max_iter=10, random_state=0)]
    grid = {"estimator": learners, "n_neighbors": [5, 8]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search = GridSearchCV(PoissonLearning(), grid, cv=4, random_state=0).fit(X, y_ssl)
        assert search.method_ == "exact" and search.protocol_ == "transductive"
        for i, params in enumerate(search.cv_results_["params"]):
            est = clone(params["estimator"]).set_params(n_neighbors=params["n_neighbors"])
            ref = cv_result(est, X, y_ssl, search.folds_, method="exact",
                            protocol="transductive").score
            assert search.cv_results_["mean_cv_error"][i] == pytest.approx(ref, abs=1e-12)
    best = search.best_params_
    assert hasattr(search.best_estimator_, "transduction_")
    assert type(search.best_estimator_) is type(best["estimator"])


@parametrize_with_checks([LabelPropagation(n_neighbors=3, reweighting=k) for k in KINDS])
def test_sklearn_check_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
