"""Tests of fastgssl.graphs against brute-force numpy references."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from fastgssl import registry
from fastgssl.graphs import (
    EpsilonGraph,
    KNNGraph,
    NNDescentGraph,
    PrecomputedGraph,
    check_adjacency,
    epsilon_graph,
    knn_graph,
    knn_recall,
    knn_search,
)


def reference_knn(X, k, R=None):
    """Obviously-correct kNN: full squared distances, lexicographic (distance, index)."""
    self_search = R is None
    R = X if R is None else R
    X = X.toarray() if sp.issparse(X) else X
    R = R.toarray() if sp.issparse(R) else R
    idx, dist = [], []
    for i in range(X.shape[0]):
        d = ((X[i] - R) ** 2).sum(axis=1)
        cand = np.arange(R.shape[0])
        if self_search:
            d, cand = np.delete(d, i), np.delete(cand, i)
        order = np.lexsort((cand, d))[:k]
        idx.append(cand[order])
        dist.append(d[order])
    return np.array(idx), np.array(dist)


def integer_data(rng, n, d, n_dup):
    """Small-integer coordinates (exact distances, many ties) plus exact duplicate rows."""
    X = rng.integers(0, 3, size=(n, d)).astype(float)
    return np.vstack([X, X[rng.choice(n, n_dup)]])


@pytest.mark.parametrize("d", [1, 2, 3, 8, 40])
@pytest.mark.parametrize("algorithm", ["brute", "kd_tree", "auto"])
def test_knn_search_matches_reference_with_ties_and_duplicates(d, algorithm):
    rng = np.random.default_rng(d)
    X = integer_data(rng, 150, d, 40)
    idx, sq = knn_search(X, 6, algorithm=algorithm)
    ref_idx, ref_sq = reference_knn(X, 6)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(sq, ref_sq)


@pytest.mark.parametrize("d", [2, 30])
def test_knn_search_continuous_data(d):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, d)) * 5 + 100.0  # offset: tests the centring / error bound
    idx, sq = knn_search(X, 9)
    ref_idx, ref_sq = reference_knn(X, 9)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(sq, ref_sq, rtol=1e-12)


def test_knn_search_sparse_matches_dense_reference():
    rng = np.random.default_rng(2)
    X = sp.random(200, 60, density=0.08, random_state=3, format="csr")
    X.data = np.round(X.data * 3)  # ties
    X.eliminate_zeros()
    X = sp.vstack([X, X[:30]]).tocsr()
    idx, sq = knn_search(X, 5)
    ref_idx, ref_sq = reference_knn(X, 5)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(sq, ref_sq)
    # query mode, sparse queries against dense reference points
    Y = sp.csr_matrix(rng.integers(0, 2, size=(20, 60)).astype(float))
    idx, _ = knn_search(Y, 4, X.toarray())
    np.testing.assert_array_equal(idx, reference_knn(Y, 4, X)[0])


def test_knn_search_new_points_against_reference_set():
    rng = np.random.default_rng(3)
    R = integer_data(rng, 100, 3, 20)
    Xq = rng.integers(0, 3, size=(30, 3)).astype(float)  # queries coincide with points
    for algorithm in ["brute", "kd_tree"]:
        idx, sq = knn_search(Xq, 5, R, algorithm=algorithm)
        ref_idx, ref_sq = reference_knn(Xq, 5, R)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(sq, ref_sq)


def test_knn_search_all_points_identical_uses_fallback():
    X = np.ones((60, 4))
    idx, sq, stats = knn_search(X, 3, algorithm="brute", return_stats=True)
    np.testing.assert_array_equal(idx, reference_knn(X, 3)[0])
    assert stats["n_fallback_rows"] == 60
    assert (sq == 0).all()


@given(
    n=st.integers(3, 40), d=st.integers(1, 6), k=st.integers(1, 5),
    seed=st.integers(0, 10_000), sparse=st.booleans(),
)
def test_knn_search_property(n, d, k, seed, sparse):
    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    Xin = sp.csr_matrix(X) if sparse else X
    idx, sq = knn_search(Xin, k)
    ref_idx, ref_sq = reference_knn(X, k)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(sq, ref_sq)


def dense_knn_graph(X, k, weight, sigma_w, how):
    idx, sq = reference_knn(X, k)
    n = X.shape[0]
    A = np.zeros((n, n))
    for i in range(n):
        w = {"binary": np.ones(k), "gaussian": np.exp(-sq[i] / (2 * sigma_w)),
             "distance": np.sqrt(sq[i])}[weight]
        A[i, idx[i]] = w
    return {"max": np.maximum(A, A.T), "mean": (A + A.T) / 2, "mutual": np.minimum(A, A.T)}[how]


@pytest.mark.parametrize("weight", ["binary", "gaussian", "distance"])
@pytest.mark.parametrize("how", ["max", "mean", "mutual"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.filterwarnings("ignore:knn_graph.*isolated vertices:UserWarning")  # mutual kNN
def test_knn_graph_matches_dense_reference(weight, how, sparse):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 7))
    W = knn_graph(sp.csr_matrix(X) if sparse else X, 5, weight=weight, sigma_w=2.5,
                  symmetrize=how)
    assert sp.isspmatrix_csr(W) and W.dtype == np.float64
    np.testing.assert_allclose(W.toarray(), dense_knn_graph(X, 5, weight, 2.5, how),
                               rtol=1e-12, atol=0)
    assert (W != W.T).nnz == 0
    assert W.diagonal().sum() == 0 and (W.data > 0).all()


def test_knn_graph_default_sigma_is_mean_squared_knn_distance():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 3))
    _, sq = reference_knn(X, 4)
    W = knn_graph(X, 4, weight="gaussian")
    np.testing.assert_allclose(W.toarray(), dense_knn_graph(X, 4, "gaussian", sq.mean(), "max"),
                               rtol=1e-12)


def test_knn_graph_docstring_example_and_registry():
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    expected = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]], float)
    np.testing.assert_array_equal(knn_graph(X, 1).toarray(), expected)
    builder = registry.get("fastgssl.graphs", "knn", n_neighbors=1)
    assert isinstance(builder, KNNGraph)
    np.testing.assert_array_equal(builder(X).toarray(), expected)


@pytest.mark.parametrize("d, sparse", [(2, False), (12, False), (12, True)])
def test_epsilon_graph_matches_reference(d, sparse):
    rng = np.random.default_rng(6)
    X = rng.integers(0, 4, size=(150, d)).astype(float)  # exact distances on the boundary
    eps = 2.0 if d == 2 else 4.0
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    expected = (D2 <= eps**2) & ~np.eye(150, dtype=bool)
    assert expected.any(axis=1).all()
    W = epsilon_graph(sp.csr_matrix(X) if sparse else X, eps, weight="gaussian", sigma_w=3.0)
    np.testing.assert_allclose(W.toarray(), np.where(expected, np.exp(-D2 / 6.0), 0.0),
                               rtol=1e-13)
    assert (W != W.T).nnz == 0
    W2 = registry.get("fastgssl.graphs", "epsilon", eps=eps)(X)
    np.testing.assert_array_equal(W2.toarray() > 0, expected)
    assert isinstance(EpsilonGraph(eps), EpsilonGraph)


def test_epsilon_graph_warns_isolated_count():
    X = np.array([[0.0, 0.0], [0.5, 0.0], [10.0, 0.0], [20.0, 0.0]])
    with pytest.warns(UserWarning, match="2 of 4 vertices"):
        W = epsilon_graph(X, 1.0)
    assert W.nnz == 2


def test_precomputed_graph_validation():
    W = sp.random(30, 30, density=0.2, random_state=0)
    W = W + W.T
    W.setdiag(3.0)
    G = registry.get("fastgssl.graphs", "precomputed", W=W)
    assert isinstance(G, PrecomputedGraph)
    out = G(np.zeros((30, 2)))
    assert out.diagonal().sum() == 0 and (out != out.T).nnz == 0
    with pytest.raises(ValueError, match="square"):
        check_adjacency(np.ones((3, 4)))
    with pytest.raises(ValueError, match="not symmetric"):
        check_adjacency(np.triu(np.ones((3, 3))))
    with pytest.raises(ValueError, match="negative"):
        check_adjacency(-np.ones((3, 3)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_adjacency(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="30 vertices"):
        G(np.zeros((5, 2)))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda X: knn_graph(X, 20), "n_neighbors=20"),
        (lambda X: knn_graph(X, 0), "n_neighbors must be >= 1"),
        (lambda X: knn_graph(X, 2.5), "n_neighbors must be an integer"),
        (lambda X: knn_graph(X, 3, weight="heat"), "weight must be one of"),
        (lambda X: knn_graph(X, 3, weight="gaussian", sigma_w=0.0), "sigma_w must be > 0"),
        (lambda X: knn_graph(X, 3, weight="gaussian", sigma_w=-1), "sigma_w must be > 0"),
        (lambda X: knn_graph(X, 3, symmetrize="min"), "symmetrize must be one of"),
        (lambda X: epsilon_graph(X, 0.0), "eps must be > 0"),
        (lambda X: epsilon_graph(X, -1.0), "eps must be > 0"),
        (lambda X: knn_search(X, 3, np.zeros((4, 5))), "features"),
        (lambda X: knn_search(X, 3, algorithm="ball"), "algorithm must be"),
    ],
)
def test_bad_parameters(call, match):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match=match):
        call(X)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_bad_values_and_empty_input(bad):
    X = np.ones((10, 2))
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        knn_graph(X, 2)
    with pytest.raises(ValueError, match="NaN or infinite"):
        epsilon_graph(X, 1.0)
    with pytest.raises(ValueError, match="shape"):
        knn_graph(np.zeros((0, 3)), 1)


def test_nndescent_graph_reports_recall():
    pytest.importorskip("pynndescent")
    rng = np.random.default_rng(7)
    X = rng.normal(size=(600, 8))
    builder = registry.get("fastgssl.graphs", "nndescent", n_neighbors=5, random_state=0)
    assert isinstance(builder, NNDescentGraph)
    W = builder(X)
    assert (W != W.T).nnz == 0 and W.diagonal().sum() == 0
    assert 0.9 <= builder.recall_ <= 1.0
    # recall of the exact lists is 1, of random lists about k / n
    idx, _ = knn_search(X, 5)
    assert knn_recall(X, idx, sample_size=200, random_state=0) == 1.0
    assert knn_recall(X, rng.integers(0, 600, size=(600, 5)), sample_size=200) < 0.2


@pytest.mark.parametrize("option, value, message", [
    ("recall_sample", -1, "recall_sample must be >= 0, got -1"),
    ("recall_sample", 2.5, "recall_sample must be an integer, got 2.5"),
    ("search_neighbors", [5], r"search_neighbors must be an integer, got \[5\]"),
    ("search_neighbors", float("nan"), "search_neighbors must be an integer, got nan"),
    ("search_neighbors", 0, "search_neighbors must be >= 1, got 0"),
])
def test_nndescent_options_refused_naming_them(option, value, message):
    pytest.importorskip("pynndescent")
    X = np.random.default_rng(0).normal(size=(40, 3))
    with pytest.raises(ValueError, match=message):
        NNDescentGraph(n_neighbors=3, **{option: value})(X)


def test_nndescent_missing_dependency_message(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "pynndescent":
            raise ImportError("no pynndescent")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    # the package, and the checkout's extra (fastgssl is not on an index, issue 53)
    with pytest.raises(ImportError, match=r"pip install pynndescent .*pip install -e '\.\[ann\]'"):
        NNDescentGraph(n_neighbors=3)(np.zeros((10, 2)))


def test_import_graphs_is_lazy():
    import subprocess
    import sys

    code = ("import sys, fastgssl.graphs; "
            "print('fastgssl.graphs._knn' in sys.modules, 'pyamg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


@pytest.mark.datasets
def test_knn_graph_on_a1a_sparse(datasets_dir):
    from fastgssl.datasets import load_libsvm

    X, _ = load_libsvm("a1a")
    X = sp.csr_matrix(X)[:400]
    idx, sq = knn_search(X, 10)
    ref_idx, ref_sq = reference_knn(X, 10)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(sq, ref_sq)


def test_knn_graph_warns_about_isolated_vertices():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(30, 2)), [[50.0, 50.0]]])  # one far outlier
    with pytest.warns(UserWarning, match=r"\d+ of 31 vertices have no edge left"):
        W = knn_graph(X, 3, symmetrize="mutual")
    assert W[30].nnz == 0
    with pytest.warns(UserWarning, match="isolated vertices"):
        knn_graph(X, 3, weight="gaussian", sigma_w=1e-6)


@pytest.mark.parametrize("sparse", [False, True])
def test_pair_sqdist_matches_rowwise_differences(sparse):
    from fastgssl.graphs._knn_kernels import pair_sqdist

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.5)
    rows = rng.integers(0, 40, 200)
    cols = rng.integers(0, 40, 200)
    expected = ((X[rows] - X[cols]) ** 2).sum(axis=1)
    got = pair_sqdist(sp.csr_matrix(X) if sparse else X, rows, cols)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-14)
    assert np.all(got[rows == cols] == 0.0)
    with pytest.raises(IndexError, match="cols holds indices outside"):
        pair_sqdist(X, rows[:3], np.array([0, 1, 40]))


def test_pair_sqdist_sums_duplicate_csr_entries():
    from fastgssl.graphs._knn_kernels import pair_sqdist

    X = sp.csr_matrix((np.array([1.0, 2.0]), np.array([3, 3]), np.array([0, 2, 2])),
                      shape=(2, 5))  # row 0 stores column 3 twice: x_03 = 3
    assert not X.has_canonical_format
    assert pair_sqdist(X, np.array([0]), np.array([1]))[0] == 9.0


@pytest.mark.parametrize("sparse", [False, True])
def test_reuse_neighbors_serves_exact_smaller_k(sparse):
    """Inside reuse_neighbors one search with the largest k serves every smaller k, with the
    same lists (ties by index included: duplicated points) as a direct search."""
    import scipy.sparse as sps

    from fastgssl.graphs import knn_graph, knn_search, reuse_neighbors

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))
    X[100:120] = X[0]  # exact duplicates: ties broken by index
    X = np.round(X, 1)  # many tied distances
    if sparse:
        X = sps.csr_matrix(X)
    direct = {k: knn_search(X, k) for k in (1, 5, 9)}
    graphs = {k: knn_graph(X, k, weight="gaussian") for k in (5, 9)}
    with reuse_neighbors(X, 9):
        for k in (1, 5, 9):
            idx, sq = knn_search(X, k)
            assert np.array_equal(idx, direct[k][0]) and np.array_equal(sq, direct[k][1])
        for k in (5, 9):
            assert (knn_graph(X, k, weight="gaussian") != graphs[k]).nnz == 0
        # another array object, or a larger k, is searched directly
        assert np.array_equal(knn_search(X.copy(), 5)[0], direct[5][0])
        assert knn_search(X, 12)[0].shape == (300, 12)


def test_search_shares_neighbours_across_n_neighbors():
    from fastgssl.cv import GridSearchCV, cv_score
    from fastgssl.models import LapRLS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, 0)
    y_semi = np.where(np.arange(150) < 40, y, -1)
    grid = {"n_neighbors": [4, 8], "gamma_i": [0.1, 1.0]}
    s = GridSearchCV(LapRLS(sigma=2.0), grid, cv=4, random_state=0).fit(X, y_semi)
    for i, params in enumerate(s.cv_results_["params"]):
        ref = cv_score(LapRLS(sigma=2.0, **params), X, y_semi, s.folds_, method="exact",
                       protocol="transductive")
        assert s.cv_results_["mean_cv_error"][i] == pytest.approx(ref, abs=1e-12)


def test_nndescent_keeps_its_recall_on_offset_data_and_warns_below_min_recall():
    pytest.importorskip("pynndescent")
    import warnings

    from fastgssl.graphs import LowRecallWarning, NNDescentGraph

    rng = np.random.default_rng(5)
    X = rng.normal(size=(800, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowRecallWarning)
        base = NNDescentGraph(10, random_state=0)
        base(X)
        shifted = NNDescentGraph(10, random_state=0)
        shifted(X + 1e8)  # float32 inside pynndescent: centred first
    assert base.recall_ > 0.9 and shifted.recall_ > 0.9
    # a threshold no approximate graph can meet gives the warning with the number
    with pytest.warns(LowRecallWarning, match="search_neighbors"):
        NNDescentGraph(10, search_neighbors=11, min_recall=1.0, random_state=0)(X)
    with pytest.raises(ValueError, match="min_recall"):
        NNDescentGraph(10, min_recall=2.0)(X)


@pytest.mark.parametrize("scan", [True, False])
@pytest.mark.parametrize("exclude_self", [True, False])
@pytest.mark.parametrize("complete", [True, False])
def test_numpy_refinement_equals_the_kernel(scan, exclude_self, complete):
    # small problems refine in numpy (no compilation on a first run): the same neighbours
    # and the same float64 distances as the parallel kernel, ties, invalid candidates and
    # the fallback scan of uncertified rows included
    from fastgssl.graphs import _knn

    rng = np.random.default_rng(3)
    n, k = 150, 5
    X = np.round(rng.normal(size=(n, 6)), 0)  # many tied distances
    cand = rng.integers(-1, n + 1, size=(n, 12))
    worst, delta = rng.uniform(0.0, 20.0, size=n), np.zeros(n)
    outs = []
    for fn in (_knn._refine_dense, _knn._refine_dense_numpy):
        oi, od, failed = np.full((n, k), -1), np.full((n, k), np.inf), np.zeros(n, bool)
        r = fn(X, X, cand, np.zeros(cand.shape), 1.0, worst, delta, 0, exclude_self, complete,
               k, scan, oi, od, failed)
        outs.append((r, oi, od, failed))
    (r1, i1, d1, f1), (r2, i2, d2, f2) = outs
    assert r1 == r2 and (r1 > 0) == (not complete)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_array_equal(f1, f2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("self_search", [True, False])
def test_uncertified_rows_retried_by_a_bounded_product_equal_brute_force(
        monkeypatch, dtype, self_search):
    # binary features (as a1a.t's): most rows tie at the k-th distance and fail the
    # certificate; above the numpy size they are retried by a second product kept within
    # the bound of the provisional k-th distance, not scanned: the same neighbours and
    # distances as brute force
    from fastgssl.graphs import _knn

    monkeypatch.setattr(_knn, "_NUMPY_REFINE", 0)  # the kernel path at a testable size
    rng = np.random.default_rng(5)
    X = (rng.random((700, 30)) < 0.15).astype(dtype)
    X = np.vstack([X, X[:40]])  # exact duplicates too
    R = None if self_search else (rng.random((500, 30)) < 0.15).astype(dtype)
    calls = []
    retry = _knn._gemm_retry
    monkeypatch.setattr(_knn, "_gemm_retry", lambda *a: (calls.append(a), retry(*a))[1])
    idx, dist, stats = knn_search(X, 8, R, algorithm="brute", return_stats=True)
    ref_i, ref_d = reference_knn(X.astype(np.float64), 8,
                                 None if self_search else R.astype(np.float64))
    assert stats["n_fallback_rows"] > X.shape[0] // 2 and len(calls) == 1
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(dist, ref_d)


def test_builder_by_name_missing_a_required_setting_names_it():
    from fastgssl.models import LapRLS, PoissonLearning

    X = np.random.RandomState(0).normal(size=(40, 2))
    y = np.full(40, -1)
    y[:4] = [0, 1, 0, 1]
    with pytest.raises(ValueError, match=r"needs eps.*EpsilonGraph\(eps=\.\.\.\)"):
        PoissonLearning(graph="epsilon").fit(X, y)  # was a TypeError from __init__
    LapRLS(graph="epsilon", graph_params={"eps": 1.5}).fit(X, y)  # given: it works
    with pytest.warns(UserWarning, match="does not take n_neighbors=5"):
        LapRLS(graph="epsilon", graph_params={"eps": 1.5, "n_neighbors": 5}).fit(X, y)


def test_dropped_builder_setting_warns_unless_offered_by_default(monkeypatch):
    import warnings

    from fastgssl import registry
    from fastgssl.models import PoissonLearning

    class Ring:  # a third-party builder by name that takes no n_neighbors or weight
        def __init__(self, n_jobs=None):
            pass

        def __call__(self, X):
            n = X.shape[0]
            i = np.arange(n)
            return sp.csr_matrix((np.ones(2 * n), (np.r_[i, (i + 1) % n],
                                                   np.r_[(i + 1) % n, i])), shape=(n, n))

    load = registry.load
    monkeypatch.setattr(registry, "load",
                        lambda g, name: Ring if name == "ring" else load(g, name))
    X = np.random.RandomState(0).normal(size=(30, 2))
    y = np.full(30, -1)
    y[:2] = [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the learner's defaults are dropped silently
        PoissonLearning(graph="ring").fit(X, y)
    with pytest.warns(UserWarning, match="does not take n_neighbors=7"):
        PoissonLearning(graph="ring", n_neighbors=7).fit(X, y)


def test_check_adjacency_returns_an_exactly_symmetric_graph_unaveraged():
    # averaging would zero the smallest subnormal weight (0.5 * 5e-324 rounds to 0)
    W = sp.csr_matrix(np.array([[0.0, 5e-324, 2.0], [5e-324, 0.0, 0.0], [2.0, 0.0, 0.0]]))
    got = check_adjacency(W)
    np.testing.assert_array_equal(got.toarray(), W.toarray())
    # no copy: a new matrix on the caller's arrays
    assert got is not W and np.shares_memory(got.data, W.data)


@pytest.mark.parametrize("learner,params", [
    ("PoissonLearning", {}), ("LabelPropagation", {}),
    ("LabelPropagation", {"reweighting": "poisson"}), ("LocalGlobalConsistency", {}),
    ("PoissonMBO", {"max_iter": 3}), ("VolumeMBO", {"max_iter": 3, "random_state": 0})])
def test_fits_leave_a_given_graph_unchanged(learner, params):
    # a checked graph shares the caller's arrays (check_adjacency does not copy a canonical
    # one): no learner may write into them
    import fastgssl.models as models

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(150, 2)), rng.normal(size=(150, 2)) + 4.0])
    W = knn_graph(X, 6)
    before = [a.copy() for a in (W.data, W.indices, W.indptr)]
    y = np.full(300, -1)
    y[[0, 1, 2, 150, 151, 152]] = [0, 0, 0, 1, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = getattr(models, learner)(graph=W, **params).fit(X, y)
        model.predict(X[:5])
    for a, b in zip((W.data, W.indices, W.indptr), before):
        np.testing.assert_array_equal(a, b)


def test_check_adjacency_leaves_a_noncanonical_input_unchanged():
    # unsorted rows, a stored diagonal and round-off asymmetry: the general passes work on
    # a copy
    W = sp.csr_matrix((np.array([2.0, 1.0, 7.0, 1.0 + 1e-15, 2.0]), np.array([2, 1, 1, 0, 0]),
                       np.array([0, 2, 4, 5])), shape=(3, 3))
    before = [a.copy() for a in (W.data, W.indices, W.indptr)]
    got = check_adjacency(W)
    for a, b in zip((W.data, W.indices, W.indptr), before):
        np.testing.assert_array_equal(a, b)
    assert not np.shares_memory(got.data, W.data) and got.diagonal().sum() == 0.0
    np.testing.assert_array_equal(got.toarray(), [[0, 1 + 5e-16, 2], [1 + 5e-16, 0, 0],
                                                  [2, 0, 0]])


@given(n=st.integers(1, 25), density=st.floats(0.0, 0.6), noise=st.sampled_from(
    [0.0, 1e-14, 1e-6]), drop=st.booleans(), scale=st.sampled_from([1e-300, 1.0, 1e300]),
    seed=st.integers(0, 10**6))
def test_check_adjacency_matches_the_transposed_reference(n, density, noise, drop, scale, seed):
    # the one-pass symmetry check and average against |W - W^T| and (W + W^T) / 2 by scipy
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=rng, format="csr") * scale
    W = (A + A.T).tocsr()
    W.data = W.data * (1.0 + noise * rng.standard_normal(W.nnz))  # asymmetric values
    if drop and W.nnz:  # one entry without its mirror (tolerated when below 1e-12)
        D = W.toarray()
        i, j = np.argwhere(D)[rng.integers(W.nnz)]
        D[i, j] = 0.0
        W = sp.csr_matrix(D)
    Wd = W.copy()
    Wd.setdiag(0.0)
    Wd.eliminate_zeros()
    asym = abs(Wd - Wd.T)
    bad = asym.nnz and asym.max() > 1e-12 * max(abs(Wd).max() if Wd.nnz else 0.0, 1.0)
    if bad:
        with pytest.raises(ValueError, match="not symmetric"):
            check_adjacency(W)
        return
    got = check_adjacency(W)
    ref = (Wd * 0.5 + Wd.T * 0.5).tocsr()
    ref.sort_indices()
    assert got.has_sorted_indices and (got != got.T).nnz == 0
    np.testing.assert_array_equal(got.toarray(), ref.toarray())


@pytest.mark.parametrize("how", ["max", "mean", "mutual"])
@pytest.mark.parametrize("n,k,seed", [(50, 5, 0), (300, 40, 1), (1000, 10, 2)])
def test_compiled_list_symmetrization_equals_the_sparse_route(how, n, k, seed):
    """The compiled symmetrization of kNN lists (every builder's W) equals symmetrize() of
    the directed CSR matrix entry for entry: structure and float64 values, with zero
    weights (not edges), repeated columns (added) and self entries (dropped)."""
    from fastgssl.graphs._weights import symmetrize, symmetrize_lists

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n, k))
    idx[::3, 0] = np.arange(0, n, 3)
    w = rng.random((n, k))
    w[rng.random((n, k)) < 0.1] = 0.0
    A = sp.csr_matrix((w.ravel().copy(), idx.ravel().copy(), np.arange(0, n * k + 1, k)),
                      shape=(n, n))
    A.eliminate_zeros()
    R = symmetrize(A, how)
    W = symmetrize_lists(idx, w, how)
    assert W.has_sorted_indices
    np.testing.assert_array_equal(W.indptr, R.indptr)
    np.testing.assert_array_equal(W.indices, R.indices)
    np.testing.assert_array_equal(W.data, R.data)
    assert (W != W.T).nnz == 0
