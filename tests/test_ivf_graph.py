"""IVFGraph (issue 34): the inverted-file kNN graph against exact search and brute force."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from fastgssl import registry
from fastgssl.exceptions import LowRecallWarning
from fastgssl.graphs import IVFGraph, knn_graph, knn_search, resolve_graph


def _blobs(n=700, d=8, centres=6, seed=0):
    rng = np.random.default_rng(seed)
    C = rng.normal(scale=4.0, size=(centres, d))
    return C[rng.integers(centres, size=n)] + rng.normal(size=(n, d))


def _brute_recall(X, neighbors, sample_size, seed):
    """Recall@k on the points knn_recall draws (RandomState(seed).choice), by a float64
    distance matrix of the sampled rows: hits are exact neighbours or points no farther
    than the exact k-th distance."""
    n, k = neighbors.shape
    m = min(sample_size, n)
    sample = np.sort(np.random.RandomState(seed).choice(n, m, replace=False))
    X = np.asarray(X, dtype=np.float64)
    hits = 0
    for i in sample:
        d2 = ((X - X[i]) ** 2).sum(axis=1)
        d2[i] = np.inf
        kth = np.sort(d2)[k - 1]
        approx = neighbors[i]
        hits += int(np.count_nonzero(d2[approx] <= kth))
    return hits / (m * k)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_probing_every_list_equals_exact_search(dtype):
    X = _blobs().astype(dtype)
    builder = IVFGraph(n_neighbors=7, n_lists=12, n_probe=12, weight="distance",
                       random_state=0)
    W = builder(X)
    idx, _ = knn_search(X, 7)
    np.testing.assert_array_equal(builder.neighbors_, idx)
    # the certified float64 distances, through the distance weights: equal, not close
    W_exact = knn_graph(X, 7, weight="distance")
    assert (W != W_exact).nnz == 0
    assert builder.recall_ == 1.0 and builder.n_probe_ == 12 and builder.n_lists_ == 12


def test_probing_every_list_equals_exact_search_with_ties():
    # an integer grid with duplicated points: every distance is tied many times, so most
    # certificates fail and the exact scan of the probed lists decides, ties by index
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(500, 3)).astype(np.float64)
    builder = IVFGraph(n_neighbors=6, n_lists=9, n_probe=9, random_state=0, min_recall=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        builder(X)
    np.testing.assert_array_equal(builder.neighbors_, knn_search(X, 6)[0])


def test_gaussian_weights_through_the_shared_helper_equal_the_exact_graph():
    X = _blobs(seed=3)
    W = IVFGraph(n_neighbors=5, n_lists=10, n_probe=10, weight="gaussian",
                 symmetrize="mean", random_state=0)(X)
    W_exact = knn_graph(X, 5, weight="gaussian", symmetrize="mean")
    assert abs(W - W_exact).max() == 0.0


def test_recall_equals_a_brute_force_count():
    X = _blobs(n=900, d=12, centres=3, seed=2)
    builder = IVFGraph(n_neighbors=8, n_lists=30, n_probe=2, recall_sample=300,
                       random_state=5, min_recall=None)
    builder(X)
    assert builder.recall_ < 0.99  # an approximate graph, or the test proves nothing
    assert builder.recall_ == pytest.approx(_brute_recall(X, builder.neighbors_, 300, 5),
                                            abs=1e-12)


@pytest.mark.parametrize("recall_sample", [300, 2000])
def test_recall_with_a_tuned_n_probe_equals_a_brute_force_count(recall_sample):
    # with target_recall, the recall sample's exact lists come from the tuning's search
    X = _blobs(n=1200, d=12, centres=3, seed=3)
    builder = IVFGraph(n_neighbors=8, n_lists=40, target_recall=0.7, random_state=7,
                       recall_sample=recall_sample, min_recall=None)
    builder(X)
    assert builder.recall_ < 0.99
    assert builder.recall_ == pytest.approx(
        _brute_recall(X, builder.neighbors_, recall_sample, 7), abs=1e-12)


@pytest.mark.filterwarnings("ignore:IVFGraph. 1 points found fewer")
def test_lists_are_exact_within_the_probes_and_improve_with_more_probes():
    X = _blobs(n=800, d=10, centres=4, seed=4)
    sums = []
    for p in (1, 3, 8, 20):
        b = IVFGraph(n_neighbors=6, n_lists=20, n_probe=p, recall_sample=0, random_state=1)
        b(X)
        nb = b.neighbors_
        d2 = ((X[:, None, :] - X[nb]) ** 2).sum(axis=2)
        assert (np.diff(d2, axis=1) >= 0).all()  # nearest first
        assert (nb != np.arange(X.shape[0])[:, None]).all()
        sums.append(d2.sum())
    # the probed set of a point grows with n_probe: its k nearest there can only get closer
    assert all(a >= b for a, b in zip(sums, sums[1:]))
    assert sums[0] > sums[-1]


def test_target_recall_chooses_n_probe_on_a_sample():
    X = _blobs(n=1500, d=16, centres=3, seed=6)
    low = IVFGraph(n_neighbors=10, n_lists=40, target_recall=0.6, random_state=0,
                   min_recall=None)
    high = IVFGraph(n_neighbors=10, n_lists=40, target_recall=0.97, random_state=0)
    low(X)
    high(X)
    assert 1 <= low.n_probe_ < high.n_probe_ <= 40
    assert low.recall_ >= 0.6 - 0.05
    assert high.recall_ >= 0.97 - 0.02


def test_low_recall_warns_with_the_number():
    X = _blobs(n=900, d=12, centres=3, seed=2)
    with pytest.warns(LowRecallWarning, match=r"recall@8 .* is 0\.\d+.*n_probe=1 of 30"):
        IVFGraph(n_neighbors=8, n_lists=30, n_probe=1, random_state=0, min_recall=0.99)(X)


def test_deterministic_across_thread_counts():
    X = _blobs(seed=7).astype(np.float32)
    a = IVFGraph(n_neighbors=5, n_lists=16, n_probe=3, random_state=0, n_jobs=1)
    b = IVFGraph(n_neighbors=5, n_lists=16, n_probe=3, random_state=0, n_jobs=2)
    Wa, Wb = a(X), b(X)
    np.testing.assert_array_equal(a.neighbors_, b.neighbors_)
    assert (Wa != Wb).nnz == 0


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    ({"n_lists": 101}, "n_lists"),
    ({"n_lists": 0}, "n_lists"),
    ({"n_lists": 10, "n_probe": 11}, "n_probe"),
    ({"n_lists": 10, "n_probe": 0}, "n_probe"),
    ({"target_recall": 0.0}, "target_recall"),
    ({"target_recall": 1.5}, "target_recall"),
    ({"target_recall": float("nan")}, "target_recall"),
    ({"n_probe": 2, "target_recall": 0.9}, "n_probe or target_recall"),
    ({"n_neighbors": 100}, "n_neighbors"),
    ({"recall_sample": -1}, "recall_sample"),
    ({"min_recall": 2.0}, "min_recall"),
    ({"weight": "cosine"}, "weight"),
    ({"symmetrize": "min"}, "symmetrize"),
])
def test_bad_parameters_name_themselves(params, match):
    X = _blobs(n=100)
    with pytest.raises(ValueError, match=match):
        IVFGraph(**params)(X)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_data_refused(bad):
    X = _blobs(n=100)
    X[3, 2] = bad
    with pytest.raises(ValueError, match="X"):
        IVFGraph(n_neighbors=3)(X)


def test_sparse_input_refused_with_the_alternative():
    X = sp.random(100, 20, density=0.2, format="csr", random_state=0)
    with pytest.raises(TypeError, match="dense.*graph='knn'"):
        IVFGraph(n_neighbors=3)(X)


def test_float16_is_searched_in_float64():
    X16 = _blobs(n=300).astype(np.float16)
    b = IVFGraph(n_neighbors=4, n_lists=6, n_probe=6, random_state=0)
    b(X16)
    np.testing.assert_array_equal(b.neighbors_, knn_search(X16.astype(np.float64), 4)[0])


def test_many_equal_points_warn_and_stay_exact():
    rng = np.random.default_rng(8)
    X = np.vstack([np.zeros((400, 5)), rng.normal(size=(200, 5))])
    b = IVFGraph(n_neighbors=5, n_lists=40, n_probe=40, random_state=0)
    with pytest.warns(UserWarning, match=r"one list holds \d+ of 600 points"):
        b(X)
    np.testing.assert_array_equal(b.neighbors_, knn_search(X, 5)[0])


def test_empty_kmeans_lists_warn_and_are_dropped():
    # 5 distinct points (each repeated) cannot fill 20 lists
    X = np.repeat(np.eye(5) * 3.0, 40, axis=0)
    b = IVFGraph(n_neighbors=3, n_lists=20, n_probe=1, random_state=0, min_recall=None)
    with pytest.warns(UserWarning, match=r"\d+ of n_lists=20 k-means lists stayed empty"):
        b(X)
    assert b.n_lists_ <= 5
    # equal points: any 3 copies are exact neighbours (distance 0)
    d2 = ((X[:, None, :] - X[b.neighbors_]) ** 2).sum(axis=2)
    assert (d2 == 0).all()


def test_tiny_probes_fall_back_to_an_exact_scan_and_say_so():
    X = _blobs(n=120, d=4, seed=9)
    b = IVFGraph(n_neighbors=10, n_lists=120, n_probe=1, random_state=0, min_recall=None)
    with pytest.warns(UserWarning, match=r"fewer than n_neighbors=10 others"):
        b(X)
    np.testing.assert_array_equal(b.neighbors_, knn_search(X, 10)[0])


# ---------------------------------------------------------------- wherever graph= is
def test_registered_and_resolved_as_ivf():
    X = _blobs(n=300)
    builder = registry.get("fastgssl.graphs", "ivf", n_neighbors=5, n_lists=8, n_probe=8,
                           random_state=0)
    assert isinstance(builder, IVFGraph)
    W = resolve_graph("ivf", X, builder_params={"n_neighbors": 5, "weight": "binary"})
    assert W.shape == (300, 300) and (W != W.T).nnz == 0
    assert (builder(X) != knn_graph(X, 5)).nnz == 0


def test_usable_as_a_learner_graph():
    from fastgssl.models import LapRLS, LocalGlobalConsistency

    X = _blobs(n=400, centres=2, seed=10)
    y = np.full(400, -1)
    truth = (X[:, 0] > np.median(X[:, 0])).astype(int)
    y[:20] = truth[:20]
    lgc = LocalGlobalConsistency(graph="ivf", n_neighbors=6).fit(X, y)
    assert lgc.transduction_.shape == (400,)
    # the kernel machines hand n_neighbors and the weight to "ivf" as to "knn"
    lap = LapRLS(graph="ivf", n_neighbors=6, graph_weight="binary",
                       graph_params={"n_lists": 10, "n_probe": 10, "random_state": 0})
    assert (lap.build_graph(X) != knn_graph(X, 6)).nnz == 0
    lap.fit(X, y)
    assert lap.predict(X).shape == (400,)


def _count_searches(monkeypatch):
    """The list of k of every IVF search from now on (IVFGraph._search spied on)."""
    calls = []
    original = IVFGraph._search

    def spy(self, X, k, *args):
        calls.append(k)
        return original(self, X, k, *args)

    monkeypatch.setattr(IVFGraph, "_search", spy)
    return calls


def test_reuse_neighbors_serves_smaller_k_from_one_ivf_search(monkeypatch):
    from fastgssl.graphs import reuse_neighbors

    X = _blobs(n=500, seed=11)
    calls = _count_searches(monkeypatch)
    params = {"n_lists": 12, "n_probe": 3, "random_state": 0, "min_recall": None}
    direct = {}
    for k in (4, 9):
        b = IVFGraph(n_neighbors=k, **params)
        b(X)
        direct[k] = b.neighbors_
    assert calls == [4, 9]
    calls.clear()
    with reuse_neighbors(X, 9):
        served = {}
        for k in (4, 7, 9):
            b = IVFGraph(n_neighbors=k, **params)
            b(X)
            served[k] = b.neighbors_
        IVFGraph(n_neighbors=4, **{**params, "n_probe": 5})(X)  # another configuration
    assert calls == [9, 9]
    # with n_probe fixed, a point's probed set does not depend on k: the first k of the
    # sorted lists at the largest k are the lists of a direct search
    np.testing.assert_array_equal(served[4], direct[4])
    np.testing.assert_array_equal(served[9], direct[9])
    np.testing.assert_array_equal(served[7], direct[9][:, :7])


def test_grid_search_over_k_runs_one_ivf_search(monkeypatch):
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import LocalGlobalConsistency

    X = _blobs(n=240, centres=2, seed=12)
    truth = (X[:, 0] > np.median(X[:, 0])).astype(int)
    y = np.full(240, -1)
    y[:30] = truth[:30]
    calls = _count_searches(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        GridSearchCV(LocalGlobalConsistency(graph="ivf"), {"n_neighbors": [4, 6, 8]}, cv=3,
                     random_state=0, refit=False).fit(X, y)
    assert calls == [8]
