"""Exact transductive CV of graph propagation from one block solve (DESIGN 3.10) against
brute-force hidden-label refits: harmonic, SS(lambda), LGC, Poisson, class mass
normalization, regression; t-fold and leave-one-label-out; graphs with several components."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.base import clone

from fastgssl.cv import cv_result
from fastgssl.models import (
    LabelPropagation,
    LabelPropagationRegressor,
    LocalGlobalConsistency,
    PoissonLearning,
    PoissonMBO,
)

TIGHT = dict(solver="direct", rtol=1e-10)

LEARNERS = [
    PoissonLearning(**TIGHT),
    PoissonLearning(class_priors=[0.2, 0.3, 0.5], **TIGHT),
    LabelPropagation(**TIGHT),
    LabelPropagation(lam=5.0, **TIGHT),
    LabelPropagation(class_mass_normalization=True, **TIGHT),
    LocalGlobalConsistency(alpha=0.9, **TIGHT),
    LocalGlobalConsistency(class_mass_normalization=True, **TIGHT),
]


def _data(seed, n=150, n_lab=18, k=3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(k, 2))
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    X = centers[y] + rng.normal(size=(n, 2))
    lab = np.r_[np.arange(k), rng.choice(np.arange(k, n), n_lab - k, replace=False)]
    y_ssl = np.full(n, -1)
    y_ssl[lab] = y[lab]
    return X, y_ssl, lab


def _brute_force(est, X, y, folds):
    """Refit with each fold's labels hidden; the held-out decision values (CVState.f)."""
    labeled = y != -1 if y.dtype.kind in "iu" else ~np.isnan(y)
    lab = np.flatnonzero(labeled)
    out = {}
    for i in np.unique(folds[lab]):
        hide = labeled & (folds == i)
        y_i = y.copy()
        y_i[hide] = -1 if y.dtype.kind in "iu" else np.nan
        f = np.asarray(clone(est).fit(X, y_i).cv_state().f)
        for j in np.flatnonzero(hide):
            out[j] = f[j]
    return np.array([out[j] for j in lab])


def _check(est, X, y, folds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = cv_result(est, X, y, folds, method="exact", protocol="transductive")
        ref = _brute_force(est, X, y, folds)
    system = est.fit(X, y).cv_state().propagation
    if system is None:  # given class priors: the decision reads every row, CV refits
        assert result.info["solver"] == "propagation re-solve"
    else:
        assert result.info["reduction"].startswith(system.kind)
    np.testing.assert_allclose(result.predictions, ref, rtol=1e-8,
                               atol=1e-8 * max(1.0, np.abs(ref).max()))
    return result


@pytest.mark.parametrize("est", LEARNERS, ids=lambda e: repr(e))
def test_block_solve_equals_refits_t_fold_and_leave_one_label_out(est):
    X, y_ssl, lab = _data(0)
    folds = np.zeros(len(y_ssl), dtype=int)
    folds[lab] = np.arange(lab.size) % 3
    r = _check(est, X, y_ssl, folds)
    assert r.info.get("refitted_folds", []) == []
    loo = np.zeros(len(y_ssl), dtype=int)
    loo[lab] = np.arange(lab.size)  # every labeled point its own fold
    r = _check(est, X, y_ssl, loo)
    assert r.n_folds == lab.size


@given(seed=st.integers(0, 10_000), n_folds=st.integers(2, 6),
       which=st.integers(0, len(LEARNERS) - 1), n_neighbors=st.integers(3, 9))
def test_block_solve_equals_refits_hypothesis(seed, n_folds, which, n_neighbors):
    X, y_ssl, lab = _data(seed, n=80, n_lab=12)
    rng = np.random.default_rng(seed)
    folds = rng.integers(0, n_folds, len(y_ssl))
    # labeled points stratified: sorted by class (shuffled within it), dealt to the folds in
    # turn from a random start, so a class with two labels or more keeps one outside every
    # fold; only a class with a single label is lost by a fold (then the draw is rejected)
    classes = y_ssl[lab]
    order = lab[np.lexsort((rng.random(lab.size), classes))]
    folds[order] = (np.arange(lab.size) + rng.integers(n_folds)) % n_folds
    for i in range(n_folds):  # a fold that hides a class is refused (tested below)
        assume(len(np.unique(classes[folds[lab] != i])) == 3)
    est = clone(LEARNERS[which]).set_params(n_neighbors=n_neighbors)
    _check(est, X, y_ssl, folds)


@pytest.mark.parametrize("lam", [np.inf, 2.0])
def test_regression_block_solve_equals_refits(lam):
    X, y_ssl, lab = _data(1)
    y = np.full(len(y_ssl), np.nan)
    y[lab] = X[lab, 0] + 0.1 * y_ssl[lab]
    loo = np.zeros(len(y), dtype=int)
    loo[lab] = np.arange(lab.size)
    _check(LabelPropagationRegressor(lam=lam, **TIGHT), X, y, loo)


@pytest.mark.parametrize("policy", ["abstain", "uniform", "nearest", "auto"])
@pytest.mark.parametrize("est", [PoissonLearning(**TIGHT), LabelPropagation(**TIGHT),
                                 LocalGlobalConsistency(**TIGHT),
                                 LabelPropagation(lam=3.0, **TIGHT)], ids=repr)
def test_components_that_lose_their_labels_follow_the_policy_exactly(est, policy):
    # two components: fold 2 hides every label of component B, whose held-out points then
    # take the learner's unlabeled_policy ("nearest" needs coordinates: that fold is refitted)
    rng = np.random.default_rng(3)
    XA = rng.normal(size=(60, 2))
    XB = rng.normal(size=(60, 2)) + 50.0
    X = np.r_[XA, XB]
    y = np.full(120, -1)
    y[[0, 1, 2, 3, 4, 5]] = [0, 1, 0, 1, 0, 1]
    y[[60, 61]] = [0, 1]
    folds = np.zeros(120, dtype=int)
    folds[[0, 1, 2, 3, 4, 5, 60, 61]] = [0, 0, 1, 1, 2, 2, 2, 2]
    est = clone(est).set_params(n_neighbors=5, unlabeled_policy=policy)
    r = _check(est, X, y, folds)
    # "auto" is "nearest" when the points have coordinates
    assert r.info["refitted_folds"] == ([2] if policy in ("nearest", "auto") else [])


@pytest.mark.parametrize("est", [PoissonLearning(**TIGHT), LabelPropagation(**TIGHT),
                                 LabelPropagation(class_mass_normalization=True, **TIGHT),
                                 LocalGlobalConsistency(**TIGHT),
                                 LocalGlobalConsistency(class_mass_normalization=True, **TIGHT),
                                 PoissonMBO(max_iter=3)], ids=repr)
def test_abstention_is_an_error_as_in_the_refits(est):
    # fold 0 hides the only label (25) of the far component: with unlabeled_policy="abstain"
    # the refit labels 25 with -1, an error; CV used to score the all-zero row as classes_[0]
    rng = np.random.RandomState(0)
    X = np.r_[rng.normal(size=(20, 2)), rng.normal(size=(10, 2)) + 100]
    y = np.full(30, -1)
    y[[0, 1, 2, 3, 25]] = [0, 1, 0, 1, 0]
    folds = np.ones(30, int)
    folds[[0, 1, 25]] = 0
    est = clone(est).set_params(n_neighbors=5, unlabeled_policy="abstain")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r = cv_result(est, X, y, folds, method="exact")
        errors = []
        for i in range(2):
            refit = clone(est).fit(X, np.where(folds == i, -1, y))
            held = np.flatnonzero((folds == i) & (y >= 0))
            errors.extend(refit.transduction_[held] != y[held])
    assert refit.transduction_[25] == 0 and np.isnan(r.predictions[-1]).all()
    assert r.score == pytest.approx(np.mean(errors))
    assert r.score >= 1 / 5  # point 25 is an error
    if refit.cv_state().propagation is not None:
        assert r.info["policy_folds"] == [0] and r.info["refitted_folds"] == []


def test_poisson_component_left_with_one_class_takes_it():
    rng = np.random.default_rng(4)
    X = np.r_[rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 50.0]
    y = np.full(120, -1)
    y[[0, 1, 2, 3, 60, 61, 62]] = [0, 1, 0, 1, 0, 1, 1]
    folds = np.zeros(120, dtype=int)
    folds[[0, 1, 2, 3, 60, 61, 62]] = [0, 0, 1, 1, 1, 0, 2]
    folds[[4, 5]] = 2  # fold 2 needs a labeled point: 62 (class 1, with 60 / 61 kept)
    r = _check(PoissonLearning(n_neighbors=5, **TIGHT), X, y, folds)
    assert r.info["refitted_folds"] == []


def test_fold_hiding_a_class_is_refused_with_the_reason():
    X, y_ssl, lab = _data(2)
    folds = np.zeros(len(y_ssl), dtype=int)
    folds[lab] = np.where(y_ssl[lab] == 2, 1, np.arange(lab.size) % 2)
    with pytest.raises(ValueError, match="hides every label of class"):
        cv_result(PoissonLearning(), X, y_ssl, folds, method="exact")


def test_auto_is_the_block_solve_and_says_so():
    X, y_ssl, lab = _data(4)
    r = cv_result(PoissonLearning(), X, y_ssl, 3, random_state=0)
    assert r.info["auto"] == "exact" and r.protocol == "transductive"
    assert "block solve" in r.info["solver"]


def test_poisson_mbo_cv_equals_brute_force_refits():
    """PoissonMBO is not linear in the labels; its exact CV is documented as a refit per
    fold. Against brute force: hide each fold's labels, refit from X, read the held-out
    points' assignments. The graph is connected, so no fold leaves points abstaining."""
    from scipy.sparse.csgraph import connected_components

    X, y_ssl, lab = _data(5)
    est = PoissonMBO(max_iter=3, n_neighbors=10)
    assert connected_components(clone(est).fit(X, y_ssl).graph_, directed=False)[0] == 1
    folds = np.zeros(len(y_ssl), dtype=int)
    order = lab[np.argsort(y_ssl[lab], kind="stable")]  # stratified: every class kept
    folds[order] = np.arange(lab.size) % 3
    r = cv_result(est, X, y_ssl, folds, method="exact", protocol="transductive")
    assert r.info["solver"] == "propagation re-solve"
    np.testing.assert_array_equal(r.labeled_index, lab[np.argsort(lab)])
    f = np.zeros((len(y_ssl), 3))
    pred = np.full(len(y_ssl), -2)
    for i in range(3):
        hide = (folds == i) & (y_ssl != -1)
        y_i = np.where(hide, -1, y_ssl)
        refit = clone(est).fit(X, y_i)
        pred[hide] = refit.transduction_[hide]
        f[hide] = refit.cv_state().f[hide]  # the refit's decision values
    L = r.labeled_index
    np.testing.assert_array_equal(r.predictions, f[L])
    np.testing.assert_array_equal(refit.classes_[np.argmax(r.predictions, axis=1)], pred[L])
    err = np.mean(pred[L] != y_ssl[L])
    assert r.score == err
    assert 0.0 < err < 0.5  # the refits miss some held-out labels: the comparison has teeth


def test_precomputed_affinity_block_solve():
    X, y_ssl, lab = _data(6)
    from fastgssl.graphs import knn_graph

    W = sp.csr_matrix(knn_graph(X, 6))
    loo = np.zeros(len(y_ssl), dtype=int)
    loo[lab] = np.arange(lab.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = cv_result(PoissonLearning(graph="precomputed", **TIGHT), W, y_ssl, loo,
                      method="exact")
        b = cv_result(PoissonLearning(graph=W, **TIGHT), X, y_ssl, loo, method="exact")
    np.testing.assert_allclose(a.predictions, b.predictions, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# the grid search over graph hyperparameters and learners
# ---------------------------------------------------------------------------------------------


def test_search_over_learners_and_k_equals_per_candidate_cv_and_shares_the_knn_search(
        monkeypatch):
    import fastgssl.graphs._knn as knn_module
    from fastgssl.cv import GridSearchCV

    X, y_ssl, lab = _data(7, n=200, n_lab=24)
    searched = []
    original = knn_module.knn_search

    def spy(X, k, *args, **kwargs):
        searched.append(k)
        return original(X, k, *args, **kwargs)

    monkeypatch.setattr(knn_module, "knn_search", spy)
    learners = [PoissonLearning(), LabelPropagation(),
                LabelPropagation(class_mass_normalization=True), LocalGlobalConsistency(),
                PoissonMBO(max_iter=3)]
    grid = {"estimator": learners, "n_neighbors": [4, 7, 10]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search = GridSearchCV(PoissonLearning(), grid, cv=4, random_state=0,
                                    refit=False).fit(X, y_ssl)
    assert search.method_ == "exact" and search.protocol_ == "transductive"
    # three graphs (one per k, shared by the five learners) served by one neighbour search
    # at the largest k: the spy sees the three requests and the one search (k = 10)
    assert sorted(searched) == [4, 7, 10, 10]
    monkeypatch.setattr(knn_module, "knn_search", original)
    for i, params in enumerate(search.cv_results_["params"]):
        est = clone(params["estimator"]).set_params(n_neighbors=params["n_neighbors"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ref = cv_result(est, X, y_ssl, search.folds_, method="exact",
                            protocol="transductive").score
        assert search.cv_results_["mean_cv_error"][i] == pytest.approx(ref, abs=1e-12)


def test_third_party_graph_learner_gets_the_shared_graph():
    """A learner outside fastgssl that declares graph_key / build_graph / with_graph in its
    CVObjective reaches the shared-graph path (one build per key)."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    from fastgssl.cv import GridSearchCV

    built = []

    class MyPropagation(ClassifierMixin, BaseEstimator):
        def __init__(self, k=5, shift=0.0, graph=None):
            self.k = k
            self.shift = shift
            self.graph = graph

        def _inner(self):
            return PoissonLearning(n_neighbors=self.k,
                                   graph="knn" if self.graph is None else self.graph)

        def cv_objective(self, y):
            obj = self._inner().cv_objective(y)
            inner_build = obj.build_graph

            def build(X):
                built.append(self.k)
                return inner_build(X)

            obj.graph_key = ("mine", self.k)
            obj.build_graph = build
            obj.with_graph = lambda W: clone(self).set_params(graph=W)
            return obj

        def fit(self, X, y):
            self.inner_ = self._inner().fit(X, y)
            self.classes_ = self.inner_.classes_
            return self

        def predict(self, X):
            return self.inner_.predict(X)

        def cv_state(self):
            return self.inner_.cv_state()

    X, y_ssl, _ = _data(8, n=120, n_lab=24)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        s = GridSearchCV(MyPropagation(), {"k": [4, 6], "shift": [0.0, 1.0]}, cv=3,
                               random_state=0).fit(X, y_ssl)
    assert sorted(built) == [4, 6]  # one graph per key, not per candidate
    assert s.best_params_["k"] in (4, 6)
