"""The graph value (issue 55): ``builder.build(X)`` returns a :class:`fastgssl.graphs.Graph`
whose ``W`` is ``builder(X)`` bit for bit and whose fields are checked against brute force;
the propagation learners take the kernel from the value, and recover a Gaussian bandwidth
from the edges only for a graph that does not report it (a matrix)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from fastgssl.graphs import (
    EpsilonGraph,
    Graph,
    IVFGraph,
    KNNGraph,
    PrecomputedGraph,
    knn_graph,
    resolve_graph,
    resolve_graph_value,
)
from fastgssl.models import LabelPropagation


def _data(n=120, d=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _brute_sq(X):
    diff = X[:, None, :] - X[None, :, :]
    sq = np.einsum("ijk,ijk->ij", diff, diff)
    np.fill_diagonal(sq, np.inf)
    return sq


def _same_csr(A, B):
    return (A.shape == B.shape and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))


@pytest.mark.parametrize("weight", ["binary", "gaussian", "self_tuned", "distance"])
def test_knn_value_is_the_call_and_the_brute_force_lists(weight):
    X = _data()
    k = 6
    builder = KNNGraph(n_neighbors=k, weight=weight)
    g = builder.build(X)
    assert isinstance(g, Graph)
    assert _same_csr(g.W, builder(X))
    assert _same_csr(g.W, knn_graph(X, k, weight=weight))
    sq = _brute_sq(X)
    order = np.argsort(sq, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(np.sort(g.neighbors, axis=1), np.sort(order, axis=1))
    np.testing.assert_allclose(g.kth_sq_distances,
                               np.take_along_axis(sq, order, axis=1)[:, -1], rtol=1e-12)
    assert (g.weight, g.n_neighbors, g.recall) == (weight, k, None)
    assert g.symmetrize == ("mean" if weight == "self_tuned" else "max")
    assert g.self_tuned_constant == 4.0
    if weight == "gaussian":
        # the default bandwidth, the mean squared length of the listed edges
        listed = np.take_along_axis(sq, order, axis=1)
        np.testing.assert_allclose(g.sigma_w, listed.mean(), rtol=1e-12)
        i, j = g.W.nonzero()
        np.testing.assert_allclose(g.W.data, np.exp(-sq[i, j] / (2.0 * g.sigma_w)),
                                   rtol=1e-12)
    else:
        assert g.sigma_w is None


def test_epsilon_value_reports_its_bandwidth():
    X = _data()
    builder = EpsilonGraph(eps=1.6, weight="gaussian")
    with pytest.warns(UserWarning, match="isolated"):
        g = builder.build(X)
    with pytest.warns(UserWarning, match="isolated"):
        assert _same_csr(g.W, builder(X))
    sq = _brute_sq(X)
    i, j = np.nonzero(np.triu(sq <= 1.6 ** 2, 1))
    np.testing.assert_allclose(g.sigma_w, sq[i, j].mean(), rtol=1e-12)
    r, c = g.W.nonzero()
    np.testing.assert_allclose(g.W.data, np.exp(-sq[r, c] / (2.0 * g.sigma_w)), rtol=1e-12)
    assert (g.weight, g.neighbors, g.kth_sq_distances, g.n_neighbors) == \
        ("gaussian", None, None, None)


def test_ivf_value_carries_lists_and_recall():
    X = _data(n=400, d=5, seed=3)
    kw = dict(n_neighbors=5, weight="gaussian", n_lists=8, n_probe=8, random_state=0)
    builder = IVFGraph(**kw)
    g = builder.build(X)
    assert _same_csr(g.W, IVFGraph(**kw)(X))
    sq = _brute_sq(X)
    np.testing.assert_allclose(g.kth_sq_distances, np.sort(sq, axis=1)[:, 4], rtol=1e-12)
    assert g.recall == 1.0 == builder.recall_  # every list probed: the exact lists
    np.testing.assert_array_equal(g.neighbors, builder.neighbors_)
    listed = np.take_along_axis(sq, g.neighbors, axis=1)
    np.testing.assert_allclose(g.sigma_w, listed.mean(), rtol=1e-12)
    assert IVFGraph(**kw, recall_sample=0).build(X).recall is None


def test_resolve_value_of_a_matrix_a_plugin_and_a_name():
    X = _data(n=60)
    W = knn_graph(X, 4, weight="gaussian", sigma_w=2.0)
    g = resolve_graph_value(W, X)
    assert _same_csr(g.W, W) and g.weight is None and g.sigma_w is None
    assert _same_csr(PrecomputedGraph(W).build(X).W, W)

    class Plugin:  # returns only a matrix, declares its weight under the builders' names
        weight, sigma_w, n_neighbors = "gaussian", 2.0, 4

        def __call__(self, X):
            return W.toarray()

    g = resolve_graph_value(Plugin(), X)
    assert _same_csr(g.W, W)
    assert (g.weight, g.sigma_w, g.n_neighbors, g.symmetrize, g.self_tuned_constant) == \
        ("gaussian", 2.0, 4, None, 4.0)
    assert resolve_graph_value(lambda Z: W, X).weight is None
    g = resolve_graph_value("knn", X, builder_params={"n_neighbors": 4, "weight": "gaussian"})
    assert _same_csr(g.W, knn_graph(X, 4, weight="gaussian"))
    assert _same_csr(resolve_graph("knn", X, builder_params={"n_neighbors": 4}),
                     knn_graph(X, 4))


def test_learner_takes_the_bandwidth_from_the_value_and_from_the_edges_of_a_matrix():
    X = _data(n=80)
    y = np.full(80, -1)
    y[:10] = np.arange(10) % 2
    builder = KNNGraph(n_neighbors=5, weight="gaussian")
    model = LabelPropagation(graph=builder).fit(X, y)
    assert model._sigma_induction == builder.build(X).sigma_w  # exact, not recovered
    # a matrix reports no bandwidth: recovered from its edges, sigma = -d^2 / (2 log w)
    W = knn_graph(X, 5, weight="gaussian", sigma_w=1.7)
    model = LabelPropagation(graph=W, graph_weight="gaussian").fit(X, y)
    np.testing.assert_allclose(model._sigma_induction, 1.7, rtol=1e-12)
    assert sp.issparse(model.graph_)


def test_a_registered_plugin_that_returns_a_matrix_still_feeds_the_learners(monkeypatch):
    from fastgssl import registry

    X = _data(n=80, seed=5)
    y = np.full(80, -1)
    y[:12] = np.arange(12) % 3
    W = knn_graph(X, 5, weight="gaussian", sigma_w=0.9)

    class MatrixOnly:  # a plugin factory: takes the learner's settings, returns a dense W
        def __init__(self, n_neighbors=5, weight="binary"):
            self.n_neighbors, self.weight = n_neighbors, weight

        def __call__(self, X):
            return W.toarray()

    load = registry.load
    monkeypatch.setattr(registry, "load", lambda group, name: MatrixOnly
                        if (group, name) == ("fastgssl.graphs", "matrix_only")
                        else load(group, name))
    Xn = _data(n=7, seed=6)
    kw = dict(n_neighbors=5, graph_weight="gaussian")
    plugin = LabelPropagation(graph="matrix_only", **kw).fit(X, y)
    given = LabelPropagation(graph=W, **kw).fit(X, y)
    assert _same_csr(plugin.graph_, W)
    np.testing.assert_allclose(plugin._sigma_induction, 0.9, rtol=1e-12)
    np.testing.assert_array_equal(plugin.predict_proba(Xn), given.predict_proba(Xn))
