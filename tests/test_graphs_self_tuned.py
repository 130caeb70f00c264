"""Self-tuned kNN weights (issue 36): graphlearning's formula in every kNN builder and in the
propagation learners' induction formula.

Oracles: graphlearning's ``gl.weightmatrix.knn`` on the same neighbour lists, and slow loops
over the definitions.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

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


def _slow_self_tuned(X, k, weight, constant=4.0, how=None):
    """The definitions, one pair at a time (c = ``constant``; ``how`` None: the weight's own
    join)."""
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
        return np.exp(-constant * D2[i, j] / scale)

    A = np.zeros((n, n))
    for i in range(n):
        for j in lists[i]:
            A[i, j] = w(i, j)
    how = how or ("mean" if weight == "self_tuned" else "max")
    return {"mean": (A + A.T) / 2, "max": np.maximum(A, A.T),
            "mutual": np.minimum(A, A.T)}[how]


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


@pytest.mark.parametrize("weight, constant", [("binary", 4.0), ("gaussian", 4.0),
                                              ("distance", 4.0),
                                              *[(w, c) for w in SELF_TUNED for c in (4.0, 2.5)]])
@pytest.mark.parametrize("symmetrize", [None, "max", "mean", "mutual"])
def test_induction_kernel_reproduces_the_graph_rows(weight, constant, symmetrize):
    # a training point queried against the others (itself left out) is weighed as W weighs
    # it, under every symmetrization of the two directed weights and any constant c
    X = _data(200, 5, seed=4)
    k = 8
    idx, sq = knn_search(X, k)
    sigma = 3.0 if weight == "gaussian" else None
    W = knn_graph(X, k, weight=weight, sigma_w=sigma, symmetrize=symmetrize,
                  self_tuned_constant=constant)
    kth = sq[:, -1]
    K = kernel_weights(sq, weight, sigma, query_scale=kth, ref_scale=kth[idx],
                       symmetrize=symmetrize, constant=constant)
    rows = W[np.arange(200)[:, None], idx].toarray()
    np.testing.assert_allclose(K, rows, rtol=1e-13, atol=0)


def test_induction_kernel_needs_the_scales_it_uses():
    sq = np.array([[1.0, 2.0]])
    with pytest.raises(ValueError, match="query_scale, ref_scale"):
        kernel_weights(sq, "self_tuned")
    with pytest.raises(ValueError, match="symmetrize='mean'"):
        kernel_weights(sq, "binary", symmetrize="mean")
    np.testing.assert_array_equal(kernel_weights(sq, "binary"), 1.0)  # "max": no scale


def _slow_induction(X_train, F, X_new, k, weight, symmetrize, constant=4.0):
    n = X_train.shape[0]
    D2 = ((X_train[:, None, :] - X_train[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(D2, np.inf)
    dk2 = np.sort(D2, axis=1)[:, k - 1]
    how = symmetrize or ("mean" if weight == "self_tuned" else "max")
    out = np.empty(X_new.shape[0])
    for a, x in enumerate(X_new):
        d2 = ((X_train - x) ** 2).sum(axis=1)
        near = np.lexsort((np.arange(n), d2))[:k]
        q = d2[near[-1]]
        if weight == "self_tuned":  # x -> x_j, and x_j -> x when x is among its k nearest
            outward = np.exp(-constant * d2[near] / q)
            inward = np.exp(-constant * d2[near] / dk2[near])
        else:
            outward = inward = np.exp(-constant * d2[near] / np.sqrt(q * dk2[near]))
        inward = np.where(d2[near] <= dk2[near], inward, 0.0)
        w = {"max": np.maximum, "mean": lambda u, v: (u + v) / 2,
             "mutual": np.minimum}[how](outward, inward)
        out[a] = w @ F[near] / w.sum() if w.sum() > 0 else np.nan
    return out


@pytest.mark.parametrize("weight", SELF_TUNED)
@pytest.mark.parametrize("symmetrize", [None, "max", "mean"])
@pytest.mark.parametrize("constant", [4.0, 3.0, 1.5])
def test_predict_weighs_new_points_with_their_own_scale(weight, symmetrize, constant):
    rng = np.random.default_rng(5)
    X = _data(150, 4, seed=5)
    y = np.sin(X[:, 0]) + X[:, 1]
    y_ssl = np.where(rng.random(150) < 0.2, y, np.nan)
    model = LabelPropagationRegressor(graph_weight=weight, graph_symmetrize=symmetrize,
                                      self_tuned_constant=constant,
                                      n_neighbors=6).fit(X, y_ssl)
    _assert_same_graph(model.graph_, knn_graph(X, 6, weight=weight, symmetrize=symmetrize,
                                               self_tuned_constant=constant))
    X_new = _data(30, 4, seed=6) * 1.5  # some far from the training points
    expected = _slow_induction(X, model.transduction_, X_new, 6, weight, symmetrize,
                               constant)
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
    # the learners' default: c = 3 joined by the max (issue 36)
    own = knn_graph(X, 8, weight=weight, symmetrize="max", self_tuned_constant=3.0)
    _assert_same_graph(model.graph_, own)
    proba = model.predict_proba(X[:20] + 0.01)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # a user matrix with the self-tuned induction kernel: the scales from an exact search
    given = Model(graph=own, graph_weight=weight, n_neighbors=8).fit(X, y)
    np.testing.assert_allclose(given.predict_proba(X[:20] + 0.01), proba, rtol=1e-10,
                               atol=1e-12)


def test_graph_symmetrize_is_part_of_the_graph_key_and_checked():
    X = _data(60, 3, seed=8)
    y = np.r_[0, 1, 2, [-1] * 57]
    keys = {h: PoissonLearning(graph_symmetrize=h).cv_objective(y).graph_part.key
            for h in (None, "max", "mean")}
    assert len(set(keys.values())) == 3  # a search builds one graph per symmetrization
    with pytest.raises(ValueError, match="graph_symmetrize"):
        PoissonLearning(graph_symmetrize="union").fit(X, y)


def test_a_fit_on_a_given_graph_searches_no_neighbours(monkeypatch):
    # the induction scale of a user matrix is searched at the first predict, not at fit
    import fastgssl.models._propagation_base as base

    X = _data(120, 4, seed=8)
    y = np.r_[0, 1, 2, [-1] * 117]
    W = knn_graph(X, 6, weight="self_tuned_sym")
    calls = []
    search = base.knn_search
    monkeypatch.setattr(base, "knn_search", lambda *a, **k: calls.append(1) or search(*a, **k))
    model = PoissonLearning(graph=W, n_neighbors=6).fit(X, y)
    assert calls == []
    built = PoissonLearning(n_neighbors=6).fit(X, y)  # the builder's own scale
    np.testing.assert_allclose(model.predict_proba(X[:5] + 0.01),
                               built.predict_proba(X[:5] + 0.01), rtol=1e-10)
    assert len(calls) == 3  # the scale once, the queries' neighbours once per model
    model.predict_proba(X[:5])
    assert len(calls) == 4  # the scale is kept


# -- the constant c of exp(-c d^2 / d_k^2): self_tuned_constant ------------------------------


@pytest.mark.parametrize("weight", SELF_TUNED)
@pytest.mark.parametrize("how", [None, "max", "mean", "mutual"])
@pytest.mark.parametrize("constant", [0.5, 3.0, 7.0])
@pytest.mark.parametrize("form", ["dense", "csr", "float32"])
def test_self_tuned_constant_matches_the_definition(weight, how, constant, form):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(60, 4))
    X[20:22] = X[19]  # duplicates
    Xin = {"dense": X, "csr": sp.csr_matrix(X), "float32": X.astype(np.float32)}[form]
    W = knn_graph(Xin, 5, weight=weight, symmetrize=how, self_tuned_constant=constant)
    # the reference on the input's own values (float32 data are searched in float32, and
    # their differences are exact in float64)
    expected = _slow_self_tuned(np.asarray(Xin.toarray() if form == "csr" else Xin,
                                           dtype=np.float64), 5, weight, constant, how)
    np.testing.assert_allclose(W.toarray(), expected, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("weight, kernel", [("self_tuned", "gaussian"),
                                            ("self_tuned_sym", "symgaussian")])
def test_constant_4_and_the_mean_are_graphlearnings_graph(weight, kernel):
    gl = _graphlearning()
    X = _data()
    idx, sq = knn_search(X, 10)
    expected = _gl_weights(gl, idx, sq, 10, kernel)
    how = "mean" if weight == "self_tuned" else "max"
    _assert_same_graph(knn_graph(X, 10, weight=weight, self_tuned_constant=4.0,
                                 symmetrize=how), expected)
    # the learners' recipe for graphlearning's graph: self_tuned_constant=4, the mean
    y = np.r_[0, 1, 2, [-1] * (X.shape[0] - 3)]
    model = PoissonLearning(graph_weight=weight, self_tuned_constant=4,
                            graph_symmetrize=how).fit(X, y)
    _assert_same_graph(model.graph_, expected)


def test_the_learners_default_graph_is_the_round_3_candidate():
    # bench/graph_weight_candidates.py built self_tuned[c=3](max) as graphlearning's
    # weights to the power 3/4 (exp(-4 r)^(3/4) = exp(-3 r)) joined by the max; the
    # learners' default graph is that graph to round-off
    X = _data(300, 6, seed=12)
    idx, sq = knn_search(X, 10)
    n = X.shape[0]
    w = np.exp(-4.0 * sq / sq[:, -1:]) ** 0.75
    A = sp.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, 10 * n + 1, 10)), shape=(n, n))
    y = np.r_[0, 1, 2, [-1] * (n - 3)]
    for Model in (PoissonMBO, PoissonLearning, LabelPropagation, LocalGlobalConsistency):
        _assert_same_graph(Model().fit(X, y).graph_, A.maximum(A.T))


@pytest.mark.parametrize("builder", ["knn", "KNNGraph", "IVFGraph", "NNDescentGraph"])
def test_every_knn_builder_takes_the_constant_and_checks_it(builder):
    from fastgssl.graphs import IVFGraph, NNDescentGraph

    X = _data(200, 5, seed=13)
    if builder == "NNDescentGraph":
        pytest.importorskip("pynndescent")

    def make(**kw):
        if builder == "knn":
            return lambda Z: knn_graph(Z, 6, **kw)
        if builder == "KNNGraph":
            return KNNGraph(n_neighbors=6, **kw)
        if builder == "IVFGraph":  # every list probed: the exact lists
            return IVFGraph(n_neighbors=6, n_lists=4, n_probe=4, random_state=0, **kw)
        return NNDescentGraph(n_neighbors=6, random_state=0, recall_sample=0, **kw)

    W = make(weight="self_tuned", self_tuned_constant=2.0, symmetrize="max")(X)
    if builder == "NNDescentGraph":  # its own lists: the definition on them
        b = make(weight="self_tuned", self_tuned_constant=2.0, symmetrize="max")
        W = b(X)
        idx = b.neighbors_
        sq = ((X[:, None, :] - X[idx]) ** 2).sum(axis=2)
        a = np.exp(-2.0 * sq / sq.max(axis=1, keepdims=True))
        A = sp.csr_matrix((a.ravel(), idx.ravel(), np.arange(0, 6 * 200 + 1, 6)),
                          shape=(200, 200))
        np.testing.assert_allclose(W.toarray(), A.maximum(A.T).toarray(), rtol=1e-12)
    else:
        np.testing.assert_allclose(W.toarray(), _slow_self_tuned(X, 6, "self_tuned", 2.0,
                                                                 "max"), rtol=1e-12)
    for bad in (0, -1.0, float("nan"), float("inf"), "3", True, None):
        with pytest.raises(ValueError, match="self_tuned_constant"):
            make(weight="self_tuned", self_tuned_constant=bad)(X)
    # a constant a non-self-tuned weight cannot use is refused, naming the fix
    with pytest.raises(ValueError, match="weight='self_tuned'.*or leave self_tuned_constant"):
        make(weight="gaussian", self_tuned_constant=3.0)(X)
    make(weight="gaussian", self_tuned_constant=4.0)(X)  # the default is no setting


@pytest.mark.parametrize("Model", [LabelPropagation, LabelPropagationRegressor,
                                   LocalGlobalConsistency, PoissonLearning, PoissonMBO])
def test_learners_check_the_constant_and_clone_it(Model):
    from sklearn.base import clone

    X = _data(60, 3, seed=14)
    y = np.r_[0, 1, 2, [-1] * 57] if Model is not LabelPropagationRegressor else \
        np.r_[0.0, 1.0, 2.0, [np.nan] * 57]
    assert Model().get_params()["self_tuned_constant"] == 3.0
    assert Model().get_params()["graph_symmetrize"] == "max"
    assert clone(Model(self_tuned_constant=2.5)).get_params()["self_tuned_constant"] == 2.5
    for bad in (0, -2.0, float("nan"), "a"):
        with pytest.raises(ValueError, match="self_tuned_constant"):
            Model(self_tuned_constant=bad).fit(X, y)
    with pytest.raises(ValueError, match="graph_weight='self_tuned'.*leave "
                                         "self_tuned_constant at its default 3"):
        Model(graph_weight="binary", self_tuned_constant=4.0).fit(X, y)
    Model(graph_weight="binary").fit(X, y)  # the default constant is no setting
    # None keeps the weight's own join (graphlearning's mean for "self_tuned")
    none = Model(graph_symmetrize=None).fit(X, y).graph_
    _assert_same_graph(none, knn_graph(X, 10, weight="self_tuned", self_tuned_constant=3.0,
                                       symmetrize="mean"))


def test_the_constant_is_part_of_the_graph_key_and_of_the_search():
    from sklearn.base import clone
    from sklearn.datasets import make_classification

    from fastgssl.cv import GridSearchCV, cv_result

    X, y_true = make_classification(150, 6, n_informative=3, n_classes=3, random_state=0)
    y = np.where(np.random.default_rng(15).random(150) < 0.2, y_true, -1)
    keys = {c: PoissonLearning(self_tuned_constant=c).cv_objective(y).graph_part.key
            for c in (3.0, 4.0, 2)}
    assert len(set(keys.values())) == 3
    grid = {"self_tuned_constant": [1.0, 3.0, 6.0]}
    search = GridSearchCV(PoissonLearning(n_neighbors=6), grid, cv=3, random_state=0,
                          refit=False).fit(X, y)
    scores = search.cv_results_["mean_cv_error"]
    for i, params in enumerate(search.cv_results_["params"]):
        est = clone(PoissonLearning(n_neighbors=6)).set_params(**params)
        ref = cv_result(est, X, y, search.folds_, method=search.method_,
                        protocol=search.protocol_).score
        assert scores[i] == pytest.approx(ref, abs=1e-12)
    assert len(set(np.round(scores, 12))) > 1  # the graphs differ: so do the scores


@given(seed=st.integers(0, 10_000), constant=st.floats(0.05, 20.0),
       weight=st.sampled_from(SELF_TUNED), how=st.sampled_from(["max", "mean", "mutual"]),
       k=st.integers(1, 6))
def test_constant_weights_and_induction_rows_match_the_definition(seed, constant, weight,
                                                                  how, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 3)) * rng.uniform(0.1, 3.0, size=(25, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # mutual graphs may isolate vertices
        W = knn_graph(X, k, weight=weight, symmetrize=how, self_tuned_constant=constant)
    np.testing.assert_allclose(W.toarray(), _slow_self_tuned(X, k, weight, constant, how),
                               rtol=1e-12, atol=1e-300)
    idx, sq = knn_search(X, k)
    kth = sq[:, -1]
    K = kernel_weights(sq, weight, query_scale=kth, ref_scale=kth[idx], symmetrize=how,
                       constant=constant)
    np.testing.assert_allclose(K, W[np.arange(25)[:, None], idx].toarray(), rtol=1e-12,
                               atol=1e-300)
