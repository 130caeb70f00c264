"""Self-tuned kNN weights (issue 36): graphlearning's formula in every kNN builder and in the
propagation learners' induction formula.

Oracles: graphlearning's ``gl.weightmatrix.knn`` on the same neighbour lists, and slow loops
over the definitions.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from fastgssl.graphs import KNNGraph, epsilon_graph, knn_graph, knn_search
from fastgssl.models import (
    LabelPropagation,
    LabelPropagationRegressor,
    LocalGlobalConsistency,
    PoissonLearning,
    PoissonMBO,
)
from fastgssl.models._induction import kernel_weights

SELF_TUNED = ("self_tuned", "self_tuned_sym")


def _data(n=300, d=6, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(3, d))
    spread = rng.uniform(0.3, 2.0, n)[:, None]
    return centres[rng.integers(0, 3, n)] + rng.normal(size=(n, d)) * spread


def _graphlearning():
    try:
        import graphlearning as gl
    except ImportError:  # pragma: no cover - depends on the environment
        pytest.skip("graphlearning is not importable (pip install graphlearning annoy): the "
                    "comparison with gl.weightmatrix.knn cannot run")
    return gl


def _gl_weights(gl, idx, sq, k, kernel):
    """gl.weightmatrix.knn on the given lists, self in column 0 (as its own search returns)."""
    n = idx.shape[0]
    ind = np.hstack([np.arange(n)[:, None], idx])
    dist = np.sqrt(np.hstack([np.zeros((n, 1)), sq]))
    return sp.csr_matrix(gl.weightmatrix.knn(None, k, kernel=kernel, knn_data=(ind, dist)))


def _off_diagonal(W):
    W = sp.csr_matrix(W, copy=True)
    W.setdiag(0)
    W.eliminate_zeros()
    W.sort_indices()
    return W


def _assert_same_graph(A, B):
    A, B = _off_diagonal(A), _off_diagonal(B)
    assert A.nnz == B.nnz
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_allclose(A.data, B.data, rtol=1e-13, atol=0)


@pytest.mark.parametrize("weight, kernel", [("self_tuned", "gaussian"),
                                            ("self_tuned_sym", "symgaussian")])
@pytest.mark.parametrize("k", [1, 5, 10])
def test_knn_graph_equals_graphlearning(weight, kernel, k):
    gl = _graphlearning()
    X = _data()
    idx, sq = knn_search(X, k)
    expected = _gl_weights(gl, idx, sq, k, kernel)
    _assert_same_graph(knn_graph(X, k, weight=weight), expected)
    # the registry builder too, with the scale it reports
    builder = KNNGraph(n_neighbors=k, weight=weight)
    _assert_same_graph(builder(X), expected)
    np.testing.assert_array_equal(builder.kth_sq_distances_, sq[:, -1])


@pytest.mark.parametrize("weight, kernel", [("self_tuned", "gaussian"),
                                            ("self_tuned_sym", "symgaussian")])
def test_nndescent_graph_equals_graphlearning_on_its_lists(weight, kernel):
    gl = _graphlearning()
    pytest.importorskip("pynndescent")
    from fastgssl.graphs import NNDescentGraph

    X = _data(400, 8, seed=1)
    k = 7
    builder = NNDescentGraph(n_neighbors=k, weight=weight, random_state=0, recall_sample=0)
    W = builder(X)
    idx = builder.neighbors_
    assert (idx >= 0).all()
    sq = ((X[:, None, :] - X[idx]) ** 2).sum(axis=2)
    order = np.argsort(sq, axis=1, kind="stable")  # graphlearning reads d_k in column k
    idx = np.take_along_axis(idx, order, axis=1)
    sq = np.take_along_axis(sq, order, axis=1)
    _assert_same_graph(W, _gl_weights(gl, idx, sq, k, kernel))


def _slow_self_tuned(X, k, weight):
    """The definitions, one pair at a time."""
    n = X.shape[0]
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    lists = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        lists.append(sorted(others, key=lambda j: (D2[i, j], j))[:k])
    dk = np.sqrt([D2[i, lists[i][-1]] for i in range(n)])

    def w(i, j):
        scale = dk[i] ** 2 if weight == "self_tuned" else dk[i] * dk[j]
        if scale == 0:
            return 1.0 if D2[i, j] == 0 else 0.0
        return np.exp(-4.0 * D2[i, j] / scale)

    A = np.zeros((n, n))
    for i in range(n):
        for j in lists[i]:
            A[i, j] = w(i, j)
    return (A + A.T) / 2 if weight == "self_tuned" else np.maximum(A, A.T)


@pytest.mark.parametrize("weight", SELF_TUNED)
def test_knn_graph_matches_the_definition_with_duplicates(weight):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    X[10:14] = X[9]  # five copies: with k = 3 their k-th neighbour is at distance 0
    if weight == "self_tuned_sym":  # the copies' weights to farther points are 0
        with pytest.warns(UserWarning, match="k-th neighbour at distance 0"):
            W = knn_graph(X, 3, weight=weight).toarray()
    else:
        W = knn_graph(X, 3, weight=weight).toarray()
    expected = _slow_self_tuned(X, 3, weight)
    assert np.isfinite(W).all()
    np.testing.assert_allclose(W, expected, rtol=1e-13, atol=0)
    assert W[9, 10] == 1.0  # the limit at d_k = 0, not graphlearning's 0 / 0


def test_symmetrize_defaults_follow_the_weight():
    X = _data(120)
    for weight in ("binary", "gaussian", "distance", "self_tuned_sym"):
        np.testing.assert_array_equal(knn_graph(X, 5, weight=weight).toarray(),
                                      knn_graph(X, 5, weight=weight, symmetrize="max").toarray())
    mean = knn_graph(X, 5, weight="self_tuned", symmetrize="mean")
    np.testing.assert_array_equal(knn_graph(X, 5, weight="self_tuned").toarray(),
                                  mean.toarray())
    # scale-free: the weights do not change when the data are scaled
    np.testing.assert_allclose(knn_graph(1e3 * X, 5, weight="self_tuned").toarray(),
                               knn_graph(X, 5, weight="self_tuned").toarray(), rtol=1e-12)


def test_bad_weights_are_refused_with_the_parameter_name():
    X = _data(50)
    with pytest.raises(ValueError, match="weight"):
        knn_graph(X, 5, weight="self-tuned")
    with pytest.raises(ValueError, match="k-th nearest neighbour"):
        epsilon_graph(X, 2.0, weight="self_tuned")
    with pytest.raises(ValueError, match="symmetrize"):
        knn_graph(X, 5, weight="self_tuned", symmetrize="avg")
    with pytest.raises(ValueError, match="graph_weight"):
        PoissonLearning(graph_weight="self_tuned_max").fit(X, np.r_[0, 1, [-1] * 48])


@pytest.mark.parametrize("weight", SELF_TUNED)
def test_induction_kernel_reproduces_the_graph_rows(weight):
    # a training point queried against the others (itself left out) is weighed as W weighs it
    X = _data(200, 5, seed=4)
    k = 8
    idx, sq = knn_search(X, k)
    W = knn_graph(X, k, weight=weight)
    kth = sq[:, -1]
    K = kernel_weights(sq, weight, query_scale=kth, ref_scale=kth[idx])
    rows = W[np.arange(200)[:, None], idx].toarray()
    np.testing.assert_allclose(K, rows, rtol=1e-13, atol=0)


def _slow_induction(X_train, F, X_new, k, weight):
    n = X_train.shape[0]
    D2 = ((X_train[:, None, :] - X_train[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(D2, np.inf)
    dk2 = np.sort(D2, axis=1)[:, k - 1]
    out = np.empty(X_new.shape[0])
    for a, x in enumerate(X_new):
        d2 = ((X_train - x) ** 2).sum(axis=1)
        near = np.lexsort((np.arange(n), d2))[:k]
        q = d2[near[-1]]
        if weight == "self_tuned":
            w = 0.5 * np.exp(-4 * d2[near] / q)
            inward = d2[near] <= dk2[near]
            w += 0.5 * np.where(inward, np.exp(-4 * d2[near] / dk2[near]), 0.0)
        else:
            w = np.exp(-4 * d2[near] / np.sqrt(q * dk2[near]))
        out[a] = w @ F[near] / w.sum()
    return out


@pytest.mark.parametrize("weight", SELF_TUNED)
def test_predict_weighs_new_points_with_their_own_scale(weight):
    rng = np.random.default_rng(5)
    X = _data(150, 4, seed=5)
    y = np.sin(X[:, 0]) + X[:, 1]
    y_ssl = np.where(rng.random(150) < 0.2, y, np.nan)
    model = LabelPropagationRegressor(graph_weight=weight, n_neighbors=6).fit(X, y_ssl)
    X_new = _data(30, 4, seed=6) * 1.5  # some far from the training points
    expected = _slow_induction(X, model.transduction_, X_new, 6, weight)
    np.testing.assert_allclose(model.predict(X_new), expected, rtol=1e-10)


@pytest.mark.filterwarnings("ignore::fastgssl.ClassShareWarning")
@pytest.mark.parametrize("Model", [LabelPropagation, LocalGlobalConsistency, PoissonLearning,
                                   PoissonMBO])
@pytest.mark.parametrize("weight", SELF_TUNED)
def test_propagation_learners_take_the_self_tuned_graph(Model, weight):
    X = _data(240, 5, seed=7)
    rng = np.random.default_rng(7)
    y_true = np.argmax(X[:, :3], axis=1)
    y = np.full(240, -1)
    for c in range(3):
        y[rng.choice(np.flatnonzero(y_true == c), 3, replace=False)] = c
    model = Model(graph_weight=weight, n_neighbors=8).fit(X, y)
    _assert_same_graph(model.graph_, knn_graph(X, 8, weight=weight))
    proba = model.predict_proba(X[:20] + 0.01)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # a user matrix with the self-tuned induction kernel: the scales from an exact search
    given = Model(graph=knn_graph(X, 8, weight=weight), graph_weight=weight,
                  n_neighbors=8).fit(X, y)
    np.testing.assert_allclose(given.predict_proba(X[:20] + 0.01), proba, rtol=1e-10,
                               atol=1e-12)


@pytest.mark.filterwarnings("ignore::fastgssl.ClassShareWarning")
def test_a_given_graph_searches_the_training_scale_at_the_first_prediction(monkeypatch):
    # refits on one given W (active learning, grid searches) run no kNN search; the
    # self-tuned scale of the training points is searched once, when new points come
    import fastgssl.models._propagation_base as base

    searches = []
    real = base.knn_search

    def counted(X, k, **kw):
        if kw.get("X_ref") is None:
            searches.append(k)
        return real(X, k, **kw)

    monkeypatch.setattr(base, "knn_search", counted)
    X = _data(150, 4, seed=8)
    y = np.full(150, -1)
    y[:3] = [0, 1, 2]
    W = knn_graph(X, 6, weight="self_tuned")
    model = PoissonLearning(graph=W, graph_weight="self_tuned", n_neighbors=6)
    for _ in range(2):
        model.fit(X, y)
    assert searches == []
    first = model.predict_proba(X[:10] + 0.01)
    np.testing.assert_array_equal(model.predict_proba(X[:10] + 0.01), first)
    assert searches == [6]
    built = PoissonLearning(graph_weight="self_tuned", n_neighbors=6).fit(X, y)
    np.testing.assert_allclose(first, built.predict_proba(X[:10] + 0.01), rtol=1e-10,
                               atol=1e-12)
